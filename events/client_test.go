package events

import (
	"context"
	"testing"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/internal/apitest"
)

// reply is the server's answer to every call: a resource or a page of any
// of the package's lists.
const reply = `{"event_destinations":[{"id":"ed_1"}],"event_subscriptions":[{"id":"esb_1"}],"sources":[],"uri":"u","next_page_uri":null}`

func TestDestinationsClient(t *testing.T) {
	d := NewDestinations
	apitest.RunCalls(t, reply, []apitest.Call{
		{"create", func(ctx context.Context, c *acctapi.Client) error {
			_, err := d(c).Create(ctx, &DestinationCreate{Format: "json", Target: Target{Monitoring: &Monitoring{APIKey: "k"}}})
			return err
		}, apitest.Request{"POST", "/event_destinations", "", `{"description":"","metadata":"","format":"json","target":{"firehose":null,"kinesis":null,"cloudwatch_logs":null,"s3":null,"monitoring":{"api_key":"k","tags":"","service":"","site":""},"cloud_logs_ingestion":null}}`}},
		{"get", func(ctx context.Context, c *acctapi.Client) error {
			_, err := d(c).Get(ctx, "ed/1")
			return err
		}, apitest.Request{"GET", "/event_destinations/ed%2F1", "", ""}},
		{"update", func(ctx context.Context, c *acctapi.Client) error {
			_, err := d(c).Update(ctx, &DestinationUpdate{ID: "ed_1", Description: apitest.Ptr("d")})
			return err
		}, apitest.Request{"PATCH", "/event_destinations/ed_1", "", `{"id":"ed_1","description":"d"}`}},
		{"delete", func(ctx context.Context, c *acctapi.Client) error {
			return d(c).Delete(ctx, "ed_1")
		}, apitest.Request{"DELETE", "/event_destinations/ed_1", "", ""}},
		{"list", func(ctx context.Context, c *acctapi.Client) error {
			return apitest.Drain(d(c).List(ctx, &acctapi.FilterOptions{Limit: 3, Filter: `obj.description == ""`}))
		}, apitest.Request{"GET", "/event_destinations", "filter=obj.description+%3D%3D+%22%22&limit=3", ""}},
		{"page", func(ctx context.Context, c *acctapi.Client) error {
			_, err := d(c).Page(ctx, &acctapi.FilterOptions{BeforeID: "ed_9"})
			return err
		}, apitest.Request{"GET", "/event_destinations", "before_id=ed_9", ""}},
	})
}

func TestSubscriptionsClient(t *testing.T) {
	s := NewSubscriptions
	apitest.RunCalls(t, reply, []apitest.Call{
		{"create", func(ctx context.Context, c *acctapi.Client) error {
			_, err := s(c).Create(ctx, &SubscriptionCreate{Sources: []SubscriptionSource{{"api_key_created.v0"}}, DestinationIDs: []string{"ed_1"}})
			return err
		}, apitest.Request{"POST", "/event_subscriptions", "", `{"description":"","metadata":"","sources":[{"type":"api_key_created.v0"}],"destination_ids":["ed_1"]}`}},
		{"get", func(ctx context.Context, c *acctapi.Client) error {
			_, err := s(c).Get(ctx, "esb 1")
			return err
		}, apitest.Request{"GET", "/event_subscriptions/esb%201", "", ""}},
		{"update", func(ctx context.Context, c *acctapi.Client) error {
			_, err := s(c).Update(ctx, &SubscriptionUpdate{ID: "esb_1", DestinationIDs: &[]string{}})
			return err
		}, apitest.Request{"PATCH", "/event_subscriptions/esb_1", "", `{"id":"esb_1","destination_ids":[]}`}},
		{"delete", func(ctx context.Context, c *acctapi.Client) error {
			return s(c).Delete(ctx, "esb_1")
		}, apitest.Request{"DELETE", "/event_subscriptions/esb_1", "", ""}},
		{"list", func(ctx context.Context, c *acctapi.Client) error {
			return apitest.Drain(s(c).List(ctx, nil))
		}, apitest.Request{"GET", "/event_subscriptions", "", ""}},
		{"page", func(ctx context.Context, c *acctapi.Client) error {
			_, err := s(c).Page(ctx, &acctapi.FilterOptions{Limit: 100})
			return err
		}, apitest.Request{"GET", "/event_subscriptions", "limit=100", ""}},
	})
}

func TestSourcesClient(t *testing.T) {
	s := NewSources
	apitest.RunCalls(t, reply, []apitest.Call{
		{"create", func(ctx context.Context, c *acctapi.Client) error {
			_, err := s(c).Create(ctx, "esb/1", &SourceCreate{Type: "api_key_created.v0"})
			return err
		}, apitest.Request{"POST", "/event_subscriptions/esb%2F1/sources", "", `{"type":"api_key_created.v0"}`}},
		{"get", func(ctx context.Context, c *acctapi.Client) error {
			_, err := s(c).Get(ctx, "esb_1", "api_key_created.v0")
			return err
		}, apitest.Request{"GET", "/event_subscriptions/esb_1/sources/api_key_created.v0", "", ""}},
		{"list", func(ctx context.Context, c *acctapi.Client) error {
			_, err := s(c).List(ctx, "esb_1")
			return err
		}, apitest.Request{"GET", "/event_subscriptions/esb_1/sources", "", ""}},
		{"update", func(ctx context.Context, c *acctapi.Client) error {
			_, err := s(c).Update(ctx, &SourceUpdate{SubscriptionID: "esb_1", Type: "ip_policy_updated.v0"})
			return err
		}, apitest.Request{"PATCH", "/event_subscriptions/esb_1/sources/ip_policy_updated.v0", "", `{"subscription_id":"esb_1","type":"ip_policy_updated.v0"}`}},
		{"delete", func(ctx context.Context, c *acctapi.Client) error {
			return s(c).Delete(ctx, "esb_1", "ip_policy_updated.v0")
		}, apitest.Request{"DELETE", "/event_subscriptions/esb_1/sources/ip_policy_updated.v0", "", ""}},
	})
}

func TestSourceCreateSubscriptionMismatch(t *testing.T) {
	c, srv := apitest.NewRecorder(t, `{}`)
	_, err := NewSources(c).Create(t.Context(), "esb_1", &SourceCreate{SubscriptionID: "esb_2", Type: "api_key_created.v0"})
	if fes := acctapi.FieldErrors(err); len(fes) != 1 || fes[0].Field != "subscription_id" || len(srv.Requests()) != 0 {
		t.Errorf("Create = %v, requests %+v; want a subscription_id error and no request", err, srv.Requests())
	}
}
