package events

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
func setup(t *testing.T, reply string) (*acctapi.Client, *request) {
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
	return c, got
}

// clientTest is one operation: what it does and the request it must send
// (Body as JSON text, "" for none).
type clientTest struct {
	name string
	do   func(context.Context, *acctapi.Client) error
	want request
}

func runClient(t *testing.T, tests []clientTest) {
	t.Helper()
	const reply = `{"event_destinations":[{"id":"ed_1"}],"event_subscriptions":[{"id":"esb_1"}],"sources":[],"uri":"u","next_page_uri":null}`
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, got := setup(t, reply)
			if err := tt.do(t.Context(), c); err != nil {
				t.Fatal(err)
			}
			want := tt.want
			want.Body = nil
			if s, _ := tt.want.Body.(string); s != "" {
				if err := json.Unmarshal([]byte(s), &want.Body); err != nil {
					t.Fatal(err)
				}
			}
			if diff := cmp.Diff(want, *got); diff != "" {
				t.Errorf("request (-want +got):\n%s", diff)
			}
		})
	}
}

// first runs a list iterator to its first item.
func first[T any](seq func(func(T, error) bool)) error {
	for _, err := range seq {
		return err
	}
	return nil
}

func TestDestinationsClient(t *testing.T) {
	d := NewDestinations
	runClient(t, []clientTest{
		{"create", func(ctx context.Context, c *acctapi.Client) error {
			_, err := d(c).Create(ctx, &DestinationCreate{Format: "json", Target: Target{Monitoring: &Monitoring{APIKey: "k"}}})
			return err
		}, request{"POST", "/event_destinations", "", `{"description":"","metadata":"","format":"json","target":{"firehose":null,"kinesis":null,"cloudwatch_logs":null,"s3":null,"monitoring":{"api_key":"k","tags":"","service":"","site":""},"cloud_logs_ingestion":null}}`}},
		{"get", func(ctx context.Context, c *acctapi.Client) error {
			_, err := d(c).Get(ctx, "ed/1")
			return err
		}, request{"GET", "/event_destinations/ed%2F1", "", ""}},
		{"update", func(ctx context.Context, c *acctapi.Client) error {
			_, err := d(c).Update(ctx, &DestinationUpdate{ID: "ed_1", Description: ptr("d")})
			return err
		}, request{"PATCH", "/event_destinations/ed_1", "", `{"id":"ed_1","description":"d"}`}},
		{"delete", func(ctx context.Context, c *acctapi.Client) error {
			return d(c).Delete(ctx, "ed_1")
		}, request{"DELETE", "/event_destinations/ed_1", "", ""}},
		{"list", func(ctx context.Context, c *acctapi.Client) error {
			return first(d(c).List(ctx, &acctapi.FilterOptions{Limit: 3, Filter: `obj.description == ""`}))
		}, request{"GET", "/event_destinations", "filter=obj.description+%3D%3D+%22%22&limit=3", ""}},
		{"page", func(ctx context.Context, c *acctapi.Client) error {
			_, err := d(c).Page(ctx, &acctapi.FilterOptions{BeforeID: "ed_9"})
			return err
		}, request{"GET", "/event_destinations", "before_id=ed_9", ""}},
	})
}

func TestSubscriptionsClient(t *testing.T) {
	s := NewSubscriptions
	runClient(t, []clientTest{
		{"create", func(ctx context.Context, c *acctapi.Client) error {
			_, err := s(c).Create(ctx, &SubscriptionCreate{Sources: []SubscriptionSource{{"api_key_created.v0"}}, DestinationIDs: []string{"ed_1"}})
			return err
		}, request{"POST", "/event_subscriptions", "", `{"description":"","metadata":"","sources":[{"type":"api_key_created.v0"}],"destination_ids":["ed_1"]}`}},
		{"get", func(ctx context.Context, c *acctapi.Client) error {
			_, err := s(c).Get(ctx, "esb 1")
			return err
		}, request{"GET", "/event_subscriptions/esb%201", "", ""}},
		{"update", func(ctx context.Context, c *acctapi.Client) error {
			_, err := s(c).Update(ctx, &SubscriptionUpdate{ID: "esb_1", DestinationIDs: &[]string{}})
			return err
		}, request{"PATCH", "/event_subscriptions/esb_1", "", `{"id":"esb_1","destination_ids":[]}`}},
		{"delete", func(ctx context.Context, c *acctapi.Client) error {
			return s(c).Delete(ctx, "esb_1")
		}, request{"DELETE", "/event_subscriptions/esb_1", "", ""}},
		{"list", func(ctx context.Context, c *acctapi.Client) error {
			return first(s(c).List(ctx, nil))
		}, request{"GET", "/event_subscriptions", "", ""}},
		{"page", func(ctx context.Context, c *acctapi.Client) error {
			_, err := s(c).Page(ctx, &acctapi.FilterOptions{Limit: 100})
			return err
		}, request{"GET", "/event_subscriptions", "limit=100", ""}},
	})
}

func TestSourcesClient(t *testing.T) {
	s := NewSources
	runClient(t, []clientTest{
		{"create", func(ctx context.Context, c *acctapi.Client) error {
			_, err := s(c).Create(ctx, "esb/1", &SourceCreate{Type: "api_key_created.v0"})
			return err
		}, request{"POST", "/event_subscriptions/esb%2F1/sources", "", `{"type":"api_key_created.v0"}`}},
		{"get", func(ctx context.Context, c *acctapi.Client) error {
			_, err := s(c).Get(ctx, "esb_1", "api_key_created.v0")
			return err
		}, request{"GET", "/event_subscriptions/esb_1/sources/api_key_created.v0", "", ""}},
		{"list", func(ctx context.Context, c *acctapi.Client) error {
			_, err := s(c).List(ctx, "esb_1")
			return err
		}, request{"GET", "/event_subscriptions/esb_1/sources", "", ""}},
		{"update", func(ctx context.Context, c *acctapi.Client) error {
			_, err := s(c).Update(ctx, &SourceUpdate{SubscriptionID: "esb_1", Type: "ip_policy_updated.v0"})
			return err
		}, request{"PATCH", "/event_subscriptions/esb_1/sources/ip_policy_updated.v0", "", `{"subscription_id":"esb_1","type":"ip_policy_updated.v0"}`}},
		{"delete", func(ctx context.Context, c *acctapi.Client) error {
			return s(c).Delete(ctx, "esb_1", "ip_policy_updated.v0")
		}, request{"DELETE", "/event_subscriptions/esb_1/sources/ip_policy_updated.v0", "", ""}},
	})
}

func TestSourceCreateSubscriptionMismatch(t *testing.T) {
	c, got := setup(t, `{}`)
	_, err := NewSources(c).Create(t.Context(), "esb_1", &SourceCreate{SubscriptionID: "esb_2", Type: "api_key_created.v0"})
	if fes := acctapi.FieldErrors(err); len(fes) != 1 || fes[0].Field != "subscription_id" || got.Method != "" {
		t.Errorf("Create = %v, request %+v; want a subscription_id error and no request", err, got)
	}
}
