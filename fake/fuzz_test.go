package fake_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/acctapi/acctapi/account"
	"github.com/acctapi/acctapi/backends"
	"github.com/acctapi/acctapi/conformance"
	"github.com/acctapi/acctapi/events"
	"github.com/acctapi/acctapi/fake"
	"github.com/acctapi/acctapi/internal/trunc"
	"github.com/acctapi/acctapi/k8sop"
)

// fuzzTarget is a fake with one resource of each kind, whose ids the
// fuzzer's paths name by placeholder ("{su}", "{ak}", ...).
type fuzzTarget struct {
	srv   *fake.Server
	snap  *fake.Snapshot
	ids   map[string]string // placeholder → id
	token string
}

func newFuzzTarget(tb testing.TB) *fuzzTarget {
	tb.Helper()
	srv := fake.Start(tb, fake.WithoutListener(), fake.WithClock(fake.NewManualClock(t0)), fake.WithIDSeed(7))
	ft := &fuzzTarget{srv: srv, ids: map[string]string{}, token: srv.APIKey()}
	seed := func(name string, id string, err error) {
		tb.Helper()
		if err != nil {
			tb.Fatalf("seeding %s: %v", name, err)
		}
		ft.ids[name] = id
	}
	su, err := fake.Seed[account.ServiceUser](srv, "", &account.ServiceUserCreate{Name: "fuzz"})
	seed("{su}", su.ID, err)
	ak, err := fake.Seed[account.APIKey](srv, "", &account.APIKeyCreate{Description: "fuzz", OwnerID: su.ID})
	seed("{ak}", ak.ID, err)
	hr, err := fake.Seed[backends.HTTPResponse](srv, "", &backends.HTTPResponseCreate{StatusCode: 200, Body: "ok"})
	seed("{bkdhr}", hr.ID, err)
	tg, err := fake.Seed[backends.TunnelGroup](srv, "", &backends.TunnelGroupCreate{Labels: map[string]string{"app": "fuzz"}})
	seed("{bkdtg}", tg.ID, err)
	fo, err := fake.Seed[backends.Failover](srv, "", &backends.FailoverCreate{Backends: []string{hr.ID, tg.ID}})
	seed("{bkdfo}", fo.ID, err)
	ed, err := fake.Seed[events.Destination](srv, "", &events.DestinationCreate{Format: "JSON",
		Target: events.Target{Monitoring: &events.Monitoring{APIKey: "fuzz-monitoring-key"}}})
	seed("{ed}", ed.ID, err)
	esb, err := fake.Seed[events.Subscription](srv, "", &events.SubscriptionCreate{
		Sources: []events.SubscriptionSource{{Type: "api_key_created.v0"}}, DestinationIDs: []string{ed.ID}})
	seed("{esb}", esb.ID, err)
	op, err := fake.Seed[k8sop.Operator](srv, "", &k8sop.OperatorCreate{EnabledFeatures: []string{"bindings"},
		Binding: &k8sop.BindingCreate{EndpointSelectors: []string{`endpoint.name == "a"`}}})
	seed("{k8sop}", op.ID, err)
	ft.snap = srv.Snapshot()
	return ft
}

// state is every stored resource of the account, as JSON.
func (ft *fuzzTarget) state(tb testing.TB) string {
	tb.Helper()
	s := ft.srv
	b, err := json.Marshal([]any{
		fake.List[account.ServiceUser](s, ""), fake.List[account.APIKey](s, ""), fake.List[account.CertificateAuthority](s, ""),
		fake.List[backends.Failover](s, ""), fake.List[backends.HTTPResponse](s, ""), fake.List[backends.TunnelGroup](s, ""),
		fake.List[events.Destination](s, ""), fake.List[events.Subscription](s, ""), fake.List[k8sop.Operator](s, ""),
		fake.List[fake.Tunnel](s, ""), fake.List[k8sop.Endpoint](s, ""),
	})
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// httpToken is what net/http accepts as a method.
var httpToken = regexp.MustCompile("^[!#$%&'*+\\-.^_`|~0-9A-Za-z]+$")

// fuzzAuth is the Authorization header for the fuzzer's auth byte: mostly
// the valid key, sometimes none, a wrong scheme or an unknown token.
func (ft *fuzzTarget) fuzzAuth(mode uint8) string {
	switch mode % 8 {
	case 1:
		return ""
	case 2:
		return "Basic " + ft.token
	case 3:
		return "Bearer not-a-key"
	case 4:
		return "Bearer"
	}
	return "Bearer " + ft.token
}

// FuzzHandler sends the fake requests whose method, path, query, headers
// and body the fuzzer draws: the fake must never panic or answer 5xx;
// every error must carry the contract's body; every request must leave one
// journal entry; and a rejected request (or any GET) must change nothing.
func FuzzHandler(f *testing.F) {
	for _, s := range []struct {
		method, path, query string
		auth                uint8
		version, ct, body   string
	}{
		{"GET", "/service_users", "", 0, "2", "", ""},
		{"GET", "/service_users/{su}", "", 0, "2", "", ""},
		{"GET", "/bot_users/{su}", "", 0, "2", "", ""},
		{"POST", "/service_users", "", 0, "2", "application/json", `{"name":"x"}`},
		{"POST", "/service_users", "", 0, "2", "application/json", `{"name":"fuzz"}`},
		{"PATCH", "/service_users/{su}", "", 0, "2", "application/json", `{"active":false,"name":null}`},
		{"DELETE", "/service_users/{su}", "", 0, "2", "", ""},
		{"POST", "/api_keys", "", 0, "2", "application/json; charset=utf-8", `{"description":"d","owner_id":"{su}"}`},
		{"GET", "/api_keys", "limit=2&before_id={ak}&filter=obj.description%20%3D%3D%20%22fuzz%22", 0, "2", "", ""},
		{"GET", "/api_keys", "limit=0", 0, "2", "", ""},
		{"GET", "/api_keys", "limit=1&limit=2", 0, "2", "", ""},
		{"GET", "/api_keys", "filter=obj.id.startsWith(%22a%22)", 0, "2", "", ""},
		{"PUT", "/api_keys", "", 0, "2", "", ""},
		{"GET", "/api_keys", "", 1, "2", "", ""},
		{"GET", "/api_keys", "", 2, "2", "", ""},
		{"GET", "/api_keys", "", 3, "", "", ""},
		{"GET", "/api_keys", "", 0, "", "", ""},
		{"GET", "/api_keys", "", 0, "3", "", ""},
		{"POST", "/backends/failover", "", 0, "2", "application/json", `{"backends":["{bkdhr}","{bkdhr}"]}`},
		{"PATCH", "/backends/failover/{bkdfo}", "", 0, "2", "application/json", `{"backends":["{bkdfo}"]}`},
		{"DELETE", "/backends/http_response/{bkdhr}", "", 0, "2", "", ""},
		{"PATCH", "/backends/tunnel_group/{bkdtg}", "", 0, "2", "application/json", `{"labels":{"a":""}}`},
		{"POST", "/backends/http_response", "", 0, "2", "application/json", `{"status_code":600,"headers":{"a b":"c"}}`},
		{"POST", "/event_destinations", "", 0, "2", "application/json", `{"format":"json","target":{"kinesis":{"auth":{"creds":{"cloud_access_key_id":"a","cloud_secret_access_key":"s"}},"stream_arn":"arn"}}}`},
		{"PATCH", "/event_destinations/{ed}", "", 0, "2", "application/json", `{"target":{}}`},
		{"POST", "/event_subscriptions", "", 0, "2", "application/json", `{"sources":[{"type":"nope"}],"destination_ids":["{ed}"]}`},
		{"POST", "/event_subscriptions/{esb}/sources", "", 0, "2", "application/json", `{"type":"api_key_created.v0"}`},
		{"PATCH", "/event_subscriptions/{esb}/sources/api_key_created.v0", "", 0, "2", "application/json", `{"type":"other"}`},
		{"DELETE", "/event_subscriptions/{esb}/sources/x%2Fy", "", 0, "2", "", ""},
		{"POST", "/kubernetes_operators", "", 0, "2", "application/json", `{"enabled_features":["INGRESS"],"binding":{"endpoint_selectors":["x"]}}`},
		{"PATCH", "/kubernetes_operators/{k8sop}", "", 0, "2", "application/json", `{"binding":{"csr":"-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----"}}`},
		{"GET", "/kubernetes_operators/{k8sop}/bound_endpoints", "limit=1", 0, "2", "", ""},
		{"POST", "/certificate_authorities", "", 0, "2", "application/json", `{"ca_pem":"x"}`},
		{"POST", "/service_users", "", 0, "2", "text/plain", `name=x`},
		{"POST", "/service_users", "", 0, "2", "application/json", `{"name":"x"} trailing`},
		{"POST", "/service_users", "", 0, "2", "application/json", `{"NAME":"x","Active":"yes"}`},
		{"GET", "/%2e%2e/api_keys", "", 0, "2", "", ""},
		{"GET", "//service_users//", "", 0, "2", "", ""},
		{"GET", "/service_users/%zz", "a=%zz", 0, "2", "", ""},
		{strings.Repeat("M", 65), "/api_keys", "", 0, "2", "", ""},
	} {
		f.Add(s.method, s.path, s.query, s.auth, s.version, s.ct, []byte(s.body))
	}
	ft := newFuzzTarget(f)
	f.Fuzz(func(t *testing.T, method, path, query string, auth uint8, version, ct string, body []byte) {
		if !httpToken.MatchString(method) {
			return
		}
		for k, v := range ft.ids {
			path = strings.ReplaceAll(path, k, v)
			query = strings.ReplaceAll(query, k, v)
			body = bytes.ReplaceAll(body, []byte(k), []byte(v))
		}
		target := "/" + strings.TrimPrefix(path, "/")
		if query != "" {
			target += "?" + query
		}
		u, err := url.ParseRequestURI(target)
		if err != nil || strings.ContainsAny(target, " \r\n\x00") {
			return // net/http would refuse the request line
		}
		hdr := http.Header{}
		for k, v := range map[string]string{"Authorization": ft.fuzzAuth(auth), "Service-Version": version, "Content-Type": ct} {
			if strings.ContainsAny(v, "\r\n\x00") {
				return // net/http would refuse the header
			}
			if v != "" {
				hdr.Set(k, v)
			}
		}
		if auth%8 == 5 {
			hdr.Set("Ngrok-Version", version)
			hdr.Del("Service-Version")
		}
		req := httptest.NewRequest(http.MethodGet, "/", bytes.NewReader(body))
		req.Method, req.URL, req.RequestURI, req.Header, req.Host = method, u, target, hdr, "acctfake.invalid"
		req.ContentLength = int64(len(body))

		before := ft.state(t)
		ft.srv.ClearJournal()
		rec := httptest.NewRecorder()
		ft.srv.ServeHTTP(rec, req)
		res := rec.Result()
		got, _ := io.ReadAll(res.Body)
		desc := fmt.Sprintf("%s %s (auth %d, version %q, content type %q, body %q) = %d %s",
			method, target, auth%8, version, ct, trunc.String(string(body), 200), res.StatusCode, got)

		if res.StatusCode >= 500 || res.StatusCode < 200 {
			t.Fatalf("%s: want no 5xx", desc)
		}
		if id := res.Header.Get("Operation-Id"); !strings.HasPrefix(id, "op_") || res.Header.Get("Ngrok-Operation-Id") != id {
			t.Errorf("%s: Operation-Id %q, Ngrok-Operation-Id %q; want one op_ id under both", desc, id, res.Header.Get("Ngrok-Operation-Id"))
		}
		if res.StatusCode >= 400 {
			if _, err := conformance.CheckErrorBody(res.StatusCode, res.Header, got); err != nil {
				t.Errorf("%s: %v", desc, err)
			}
		} else if res.StatusCode == http.StatusNoContent {
			if len(got) != 0 {
				t.Errorf("%s: 204 with a body", desc)
			}
		} else if !json.Valid(got) || res.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s: a success without a JSON body", desc)
		}
		// The journal keeps at most 64 bytes of a method (fake.Entry.Method).
		wantMethod := method
		if len(method) > 64 {
			note := fmt.Sprintf(" …[cut: %d bytes in all]", len(method))
			wantMethod = method[:64-len(note)] + note // a token is ASCII
		}
		j := ft.srv.Journal()
		if len(j) != 1 || j[0].Status != res.StatusCode || j[0].Method != wantMethod || j[0].OperationID != res.Header.Get("Operation-Id") {
			t.Errorf("%s: journal %+v, want one entry for the request", desc, j)
		}
		after := ft.state(t)
		if res.StatusCode >= 400 || method == http.MethodGet {
			if after != before {
				t.Fatalf("%s: the state changed:\nbefore %s\nafter  %s", desc, before, after)
			}
		} else if after != before {
			ft.srv.Restore(ft.snap)
		}
	})
}
