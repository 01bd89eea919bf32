package k8sop

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/acctapi/acctapi"
)

// request is what a test server saw.
type request struct {
	Method, Path, Query string
	Body                any
}

// setup starts a server that records each request and answers with reply,
// and returns a client for it.
func setup(t *testing.T, reply string) (*Operators, *request) {
	t.Helper()
	got := new(request)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		*got = request{Method: r.Method, Path: r.URL.EscapedPath(), Query: r.URL.RawQuery}
		if len(raw) > 0 {
			if err := json.Unmarshal(raw, &got.Body); err != nil {
				t.Errorf("body %q: %v", raw, err)
			}
		}
		if r.Method == http.MethodDelete {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		_, _ = io.WriteString(w, reply)
	}))
	t.Cleanup(srv.Close)
	c, err := acctapi.NewClient("key", acctapi.WithBaseURL(srv.URL), acctapi.WithoutRetry())
	if err != nil {
		t.Fatal(err)
	}
	return NewOperators(c), got
}

// jsonBody decodes s as a generic JSON value, as the server records it.
func jsonBody(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestOperatorsClient(t *testing.T) {
	const list = `{"operators":[{"id":"k8sop_1"}],"endpoints":[{"id":"ep_1"}],"uri":"u","next_page_uri":null}`
	tests := []struct {
		name string
		do   func(context.Context, *Operators) error
		want request
	}{
		{"create", func(ctx context.Context, s *Operators) error {
			_, err := s.Create(ctx, &OperatorCreate{Description: "d", EnabledFeatures: []string{"Ingress"}, Deployment: Deployment{Name: "n"}})
			return err
		}, request{"POST", "/kubernetes_operators", "", `{"description":"d","metadata":"","enabled_features":["Ingress"],"region":"","deployment":{"name":"n","namespace":"","version":"","cluster_name":""}}`}},
		{"get", func(ctx context.Context, s *Operators) error {
			_, err := s.Get(ctx, "k8sop/1")
			return err
		}, request{"GET", "/kubernetes_operators/k8sop%2F1", "", ""}},
		{"update", func(ctx context.Context, s *Operators) error {
			_, err := s.Update(ctx, &OperatorUpdate{ID: "k8sop_1", Metadata: ptr("m"), Deployment: &DeploymentUpdate{Version: ptr("2")}})
			return err
		}, request{"PATCH", "/kubernetes_operators/k8sop_1", "", `{"id":"k8sop_1","metadata":"m","deployment":{"version":"2"}}`}},
		{"delete", func(ctx context.Context, s *Operators) error {
			return s.Delete(ctx, "k8sop_1")
		}, request{"DELETE", "/kubernetes_operators/k8sop_1", "", ""}},
		{"list", func(ctx context.Context, s *Operators) error {
			for _, err := range s.List(ctx, &acctapi.ListOptions{Limit: 5}) {
				return err
			}
			return nil
		}, request{"GET", "/kubernetes_operators", "limit=5", ""}},
		{"page", func(ctx context.Context, s *Operators) error {
			_, err := s.Page(ctx, &acctapi.ListOptions{BeforeID: "k8sop_9"})
			return err
		}, request{"GET", "/kubernetes_operators", "before_id=k8sop_9", ""}},
		{"bound endpoints", func(ctx context.Context, s *Operators) error {
			for _, err := range s.BoundEndpoints(ctx, "k8sop 1", &acctapi.ListOptions{Limit: 2}) {
				return err
			}
			return nil
		}, request{"GET", "/kubernetes_operators/k8sop%201/bound_endpoints", "limit=2", ""}},
		{"bound endpoints page", func(ctx context.Context, s *Operators) error {
			_, err := s.BoundEndpointsPage(ctx, "k8sop_1", nil)
			return err
		}, request{"GET", "/kubernetes_operators/k8sop_1/bound_endpoints", "", ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, got := setup(t, list)
			if err := tt.do(t.Context(), s); err != nil {
				t.Fatal(err)
			}
			want := tt.want
			if body, ok := want.Body.(string); ok && body != "" {
				want.Body = jsonBody(t, body)
			} else {
				want.Body = nil
			}
			if diff := cmp.Diff(want, *got); diff != "" {
				t.Errorf("request (-want +got):\n%s", diff)
			}
		})
	}
}

func TestClientValidatesBeforeSending(t *testing.T) {
	s, got := setup(t, `{}`)
	_, err := s.Create(t.Context(), &OperatorCreate{EnabledFeatures: []string{"nope"}})
	if !acctapi.HasCode(err, acctapi.CodeInvalidValue) || got.Method != "" {
		t.Errorf("Create = %v, request %+v; want a field error and no request", err, got)
	}
}
