package events

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/internal/apitest"
	"github.com/acctapi/acctapi/internal/resources"
)

// reply is the server's answer to every call: a resource or a page of any
// of the package's lists.
const reply = `{"event_destinations":[{"id":"ed_1"}],"event_subscriptions":[{"id":"esb_1"}],"sources":[],"uri":"u","next_page_uri":null}`

// escaped is the path of apitest.ID's subscription.
const escaped = "/event_subscriptions/" + apitest.EscapedID

func TestDestinationsClient(t *testing.T) {
	apitest.RunCalls(t, reply, apitest.CRUDCalls[*Destinations, Destination, DestinationList](NewDestinations, resources.EventDestinations.Path(),
		&DestinationCreate{Format: "json", Target: Target{Monitoring: &Monitoring{APIKey: "k"}}},
		`{"description":"","metadata":"","format":"json","target":{"firehose":null,"kinesis":null,"cloudwatch_logs":null,"s3":null,"monitoring":{"api_key":"k","tags":"","service":"","site":""},"cloud_logs_ingestion":null}}`,
		&DestinationUpdate{ID: apitest.ID, Description: apitest.Ptr("d")}, `{"id":"a/b c","description":"d"}`,
		apitest.Filter(), apitest.FilterQuery))
}

func TestSubscriptionsClient(t *testing.T) {
	apitest.RunCalls(t, reply, apitest.CRUDCalls[*Subscriptions, Subscription, SubscriptionList](NewSubscriptions, resources.EventSubscriptions.Path(),
		&SubscriptionCreate{Sources: src("api_key_created.v0"), DestinationIDs: []string{"ed_1"}},
		`{"description":"","metadata":"","sources":[{"type":"api_key_created.v0"}],"destination_ids":["ed_1"]}`,
		&SubscriptionUpdate{ID: apitest.ID, DestinationIDs: &[]string{}}, `{"id":"a/b c","destination_ids":[]}`,
		apitest.Filter(), apitest.FilterQuery))
}

func TestNilOptions(t *testing.T) {
	apitest.RunCalls(t, reply, apitest.CRUDCalls[*Subscriptions, Subscription, SubscriptionList](NewSubscriptions, resources.EventSubscriptions.Path(),
		&SubscriptionCreate{}, `{"description":"","metadata":"","sources":null,"destination_ids":null}`,
		&SubscriptionUpdate{ID: apitest.ID}, `{"id":"a/b c"}`, nil, ""))
}

// lax returns a client of c's server that sends requests without
// validating them, so a source type that needs escaping reaches the path.
func lax(c *acctapi.Client) (*acctapi.Client, error) {
	return acctapi.NewClient("test-key", acctapi.WithBaseURL(c.BaseURL()), acctapi.WithHTTPClient(&http.Client{Transport: new(http.Transport)}),
		acctapi.WithoutRetry(), acctapi.WithoutValidation())
}

func TestSourcesClient(t *testing.T) {
	s := NewSources
	apitest.RunCalls(t, reply, []apitest.Call{
		{"create", func(ctx context.Context, c *acctapi.Client) error {
			_, err := s(c).Create(ctx, apitest.ID, &SourceCreate{Type: "api_key_created.v0"})
			return err
		}, apitest.Request{"POST", escaped + "/sources", "", `{"type":"api_key_created.v0"}`}},
		{"create naming the subscription", func(ctx context.Context, c *acctapi.Client) error {
			_, err := s(c).Create(ctx, apitest.ID, &SourceCreate{SubscriptionID: apitest.ID, Type: "api_key_created.v0"})
			return err
		}, apitest.Request{"POST", escaped + "/sources", "", `{"subscription_id":"a/b c","type":"api_key_created.v0"}`}},
		{"get", func(ctx context.Context, c *acctapi.Client) error {
			_, err := s(c).Get(ctx, apitest.ID, "api_key_created.v0")
			return err
		}, apitest.Request{"GET", escaped + "/sources/api_key_created.v0", "", ""}},
		{"get, type escaped", func(ctx context.Context, c *acctapi.Client) error {
			c, err := lax(c)
			if err != nil {
				return err
			}
			_, err = s(c).Get(ctx, apitest.ID, apitest.ID)
			return err
		}, apitest.Request{"GET", escaped + "/sources/" + apitest.EscapedID, "", ""}},
		{"list", func(ctx context.Context, c *acctapi.Client) error {
			_, err := s(c).List(ctx, apitest.ID)
			return err
		}, apitest.Request{"GET", escaped + "/sources", "", ""}},
		{"update", func(ctx context.Context, c *acctapi.Client) error {
			_, err := s(c).Update(ctx, &SourceUpdate{SubscriptionID: apitest.ID, Type: "ip_policy_updated.v0"})
			return err
		}, apitest.Request{"PATCH", escaped + "/sources/ip_policy_updated.v0", "", `{"subscription_id":"a/b c","type":"ip_policy_updated.v0"}`}},
		{"update, type escaped", func(ctx context.Context, c *acctapi.Client) error {
			c, err := lax(c)
			if err != nil {
				return err
			}
			_, err = s(c).Update(ctx, &SourceUpdate{SubscriptionID: apitest.ID, Type: apitest.ID})
			return err
		}, apitest.Request{"PATCH", escaped + "/sources/" + apitest.EscapedID, "", `{"subscription_id":"a/b c","type":"a/b c"}`}},
		{"delete", func(ctx context.Context, c *acctapi.Client) error {
			c, err := lax(c)
			if err != nil {
				return err
			}
			return s(c).Delete(ctx, apitest.ID, apitest.ID)
		}, apitest.Request{"DELETE", escaped + "/sources/" + apitest.EscapedID, "", ""}},
	})
}

func TestSourceCreateSubscriptionMismatch(t *testing.T) {
	c, srv := apitest.NewRecorder(t, `{}`)
	_, err := NewSources(c).Create(t.Context(), "esb_1", &SourceCreate{SubscriptionID: "esb_2", Type: "api_key_created.v0"})
	if fes := acctapi.FieldErrors(err); len(fes) != 1 || fes[0].Field != "subscription_id" || len(srv.Requests()) != 0 {
		t.Errorf("Create = %v, requests %+v; want a subscription_id error and no request", err, srv.Requests())
	}
}

// TestSourcesUnknownType pins a review's finding: Get and Delete with a
// type that is no event type (a typo: no ".v0") went to the server, whose
// "not found" reads as "already deleted". They are refused first, as
// Create and Update refuse the type, and nothing is sent.
func TestSourcesUnknownType(t *testing.T) {
	c, srv := apitest.NewRecorder(t, `{}`)
	s := NewSources(c)
	_, getErr := s.Get(t.Context(), "esb_1", "api_key_created")
	delErr := s.Delete(t.Context(), "esb_1", "api_key_created")
	for _, err := range []error{getErr, delErr} {
		if fes := acctapi.FieldErrors(err); len(fes) != 1 || fes[0].Field != "type" || !strings.Contains(err.Error(), "not a known event type") {
			t.Errorf("err = %v; want a field error on type", err)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests sent; want none", n)
	}
}

func TestClientValidatesBeforeSending(t *testing.T) {
	c, srv := apitest.NewRecorder(t, `{}`)
	_, err := NewSources(c).Update(t.Context(), &SourceUpdate{SubscriptionID: apitest.ID, Type: apitest.ID})
	if !acctapi.HasCode(err, acctapi.CodeBadEventType) || len(srv.Requests()) != 0 {
		t.Errorf("Update = %v, requests %+v; want a field error and no request", err, srv.Requests())
	}
}

// TestSourcesPathArguments checks that a path argument of the sources
// client that cannot be a path segment is a field error on the argument's
// own name, subscription_id or type (not "id"), with or without
// validation, and that nothing is sent.
func TestSourcesPathArguments(t *testing.T) {
	const sub, typ = "esb_1", "api_key_created.v0"
	tests := []struct {
		name string
		call func(context.Context, *Sources) error
		want []string
	}{
		{"Get, no type", func(ctx context.Context, s *Sources) error { _, err := s.Get(ctx, sub, ""); return err },
			[]string{"type: is required"}},
		{"Get, no subscription", func(ctx context.Context, s *Sources) error { _, err := s.Get(ctx, "", typ); return err },
			[]string{"subscription_id: is required"}},
		{"Get, neither", func(ctx context.Context, s *Sources) error { _, err := s.Get(ctx, "", ""); return err },
			[]string{"subscription_id: is required", "type: is required"}},
		{"Get, dot-dot type", func(ctx context.Context, s *Sources) error { _, err := s.Get(ctx, sub, ".."); return err },
			[]string{`type: must not be ".."`}},
		{"Delete, no type", func(ctx context.Context, s *Sources) error { return s.Delete(ctx, sub, "") },
			[]string{"type: is required"}},
		{"Delete, dot subscription", func(ctx context.Context, s *Sources) error { return s.Delete(ctx, ".", typ) },
			[]string{`subscription_id: must not be "."`}},
		{"List, no subscription", func(ctx context.Context, s *Sources) error { _, err := s.List(ctx, ""); return err },
			[]string{"subscription_id: is required"}},
		{"Create, no subscription", func(ctx context.Context, s *Sources) error {
			_, err := s.Create(ctx, "", &SourceCreate{Type: typ})
			return err
		}, []string{"subscription_id: is required"}},
		{"Update, no subscription", func(ctx context.Context, s *Sources) error {
			_, err := s.Update(ctx, &SourceUpdate{Type: typ})
			return err
		}, []string{"subscription_id: is required"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, srv := apitest.NewRecorder(t, reply)
			raw, err := lax(c)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []*acctapi.Client{c, raw} {
				var got []string
				for _, fe := range acctapi.FieldErrors(tt.call(t.Context(), NewSources(c))) {
					got = append(got, fe.Field+": "+fe.Reason)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("field errors (-want +got):\n%s", diff)
				}
			}
			if n := len(srv.Requests()); n != 0 {
				t.Errorf("%d requests sent, want 0", n)
			}
		})
	}
}
