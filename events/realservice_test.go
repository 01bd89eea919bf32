package events_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/events"
)

// realService is an httptest stand-in for the real service's event
// destinations, as strict about names as the real service is: it refuses
// a request without Ngrok-Version, and any target member or member of one
// that only the specification's dialect has (ERR_NGROK_214), and it
// answers in the real dialect, every target member listed (unused ones
// null). It keeps what it is sent as JSON and never decodes it into the
// SDK's types, so the SDK cannot agree with itself by accident.
type realService struct {
	mu    sync.Mutex
	dests []map[string]any // newest last
}

// realNames are the names the real service knows in a target, by where
// they stand.
var realNames = map[string][]string{
	"target":  {"firehose", "kinesis", "cloudwatch_logs", "s3", "datadog", "azure_logs_ingestion"},
	"datadog": {"api_key", "ddtags", "service", "ddsite"},
	"creds":   {"aws_access_key_id", "aws_secret_access_key"},
}

// checkNames returns the first member of v (under name) that the real
// service does not know, or "".
func checkNames(name string, v any) string {
	m, ok := v.(map[string]any)
	if !ok {
		return ""
	}
	for k, child := range m {
		if known, ok := realNames[name]; ok && !slices.Contains(known, k) {
			return k
		}
		if bad := checkNames(k, child); bad != "" {
			return bad
		}
	}
	return ""
}

func (s *realService) fail(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"status_code": status, "error_code": code, "msg": msg})
}

func (s *realService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Ngrok-Version") != "2" {
		s.fail(w, http.StatusBadRequest, "ERR_NGROK_218", "Ngrok-Version header is required")
		return
	}
	var body map[string]any
	if r.Body != nil {
		b, _ := io.ReadAll(r.Body)
		if len(b) > 0 {
			if err := json.Unmarshal(b, &body); err != nil {
				s.fail(w, http.StatusBadRequest, "ERR_NGROK_213", err.Error())
				return
			}
		}
		if bad := checkNames("", body); bad != "" {
			s.fail(w, http.StatusBadRequest, "ERR_NGROK_214", bad+" is unknown")
			return
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	id := strings.TrimPrefix(r.URL.Path, "/event_destinations")
	id = strings.TrimPrefix(id, "/")
	switch {
	case r.Method == http.MethodPost && id == "":
		body["id"] = fmt.Sprintf("ed_%d", len(s.dests)+1)
		s.dests = append(s.dests, body)
		s.answer(w, http.StatusCreated, s.render(body))
	case r.Method == http.MethodGet && id == "":
		list := []any{}
		for _, d := range slices.Backward(s.dests) {
			list = append(list, s.render(d))
		}
		s.answer(w, http.StatusOK, map[string]any{"event_destinations": list, "uri": "https://api.test/event_destinations", "next_page_uri": nil})
	default:
		i := slices.IndexFunc(s.dests, func(d map[string]any) bool { return d["id"] == id })
		if i < 0 {
			s.fail(w, http.StatusNotFound, "ERR_NGROK_404", "not found")
			return
		}
		if r.Method == http.MethodPatch {
			for k, v := range body {
				s.dests[i][k] = v
			}
		}
		s.answer(w, http.StatusOK, s.render(s.dests[i]))
	}
}

// render is a stored destination as the real service answers it.
func (s *realService) render(d map[string]any) map[string]any {
	target := map[string]any{}
	for _, k := range realNames["target"] {
		target[k] = nil
	}
	if t, ok := d["target"].(map[string]any); ok {
		for k, v := range t {
			target[k] = v
		}
	}
	return map[string]any{"id": d["id"], "uri": "https://api.test/event_destinations/" + d["id"].(string),
		"created_at": "2026-01-02T03:04:05Z", "description": d["description"], "metadata": d["metadata"],
		"format": "json", "target": target}
}

func (s *realService) answer(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// TestClientSpeaksTheRealDialect drives the typed destinations client,
// built WithDialect(DialectReal), against a server that knows only the
// real service's names: every kind of target is created, read, updated
// and listed, and comes back as it was sent. The same client in the
// specification's dialect is refused, which shows the server is strict.
func TestClientSpeaksTheRealDialect(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(&realService{})
	t.Cleanup(srv.Close)
	client := func(d acctapi.Dialect) *events.Destinations {
		c, err := acctapi.NewClient("k", acctapi.WithBaseURL(srv.URL), acctapi.WithHTTPClient(srv.Client()),
			acctapi.WithoutRetry(), acctapi.WithDialect(d))
		if err != nil {
			t.Fatal(err)
		}
		return events.NewDestinations(c)
	}
	dests := client(acctapi.DialectReal)
	ctx := t.Context()

	var want []events.Target
	for _, tt := range targets {
		d, err := dests.Create(ctx, &events.DestinationCreate{Format: events.FormatJSON, Description: tt.name, Target: tt.target})
		if err != nil {
			t.Fatalf("create %s: %v", tt.name, err)
		}
		if diff := cmp.Diff(tt.target, d.Target); diff != "" {
			t.Errorf("created %s (-want +got):\n%s", tt.name, diff)
		}
		got, err := dests.Get(ctx, d.ID)
		if err != nil {
			t.Fatalf("get %s: %v", tt.name, err)
		}
		if diff := cmp.Diff(tt.target, got.Target); diff != "" {
			t.Errorf("read %s (-want +got):\n%s", tt.name, diff)
		}
		want = append(want, tt.target)
	}

	// Each destination gets the next kind's target.
	var ids []string
	for d, err := range dests.List(ctx, nil) {
		if err != nil {
			t.Fatalf("list: %v", err)
		}
		ids = append(ids, d.ID)
	}
	slices.Reverse(ids)
	for i, id := range ids {
		next := targets[(i+1)%len(targets)].target
		got, err := dests.Update(ctx, &events.DestinationUpdate{ID: id, Target: &next})
		if err != nil {
			t.Fatalf("update %s: %v", id, err)
		}
		if diff := cmp.Diff(next, got.Target); diff != "" {
			t.Errorf("updated %s (-want +got):\n%s", id, diff)
		}
		want[i] = next
	}
	var listed []events.Target
	for d, err := range dests.List(ctx, nil) {
		if err != nil {
			t.Fatalf("list: %v", err)
		}
		listed = append(listed, d.Target)
	}
	slices.Reverse(listed)
	if diff := cmp.Diff(want, listed); diff != "" {
		t.Errorf("listed targets (-want +got):\n%s", diff)
	}

	_, err := client(acctapi.DialectSpec).Create(ctx, &events.DestinationCreate{Format: events.FormatJSON, Target: targets[5].target})
	if !acctapi.HasCode(err, "ERR_NGROK_214") {
		t.Errorf("a monitoring target in the specification's dialect = %v, want the server's ERR_NGROK_214", err)
	}
}
