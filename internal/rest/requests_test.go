package rest_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/account"
	"github.com/acctapi/acctapi/backends"
	"github.com/acctapi/acctapi/events"
	"github.com/acctapi/acctapi/fake"
	"github.com/acctapi/acctapi/k8sop"
)

// countingServer answers every request with 500 and counts them; the tests
// here expect none.
func countingServer(t *testing.T) (string, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.WriteHeader(http.StatusInternalServerError)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, &n
}

// nilCall is one resource client call, made on a client of c.
type nilCall func(ctx context.Context, c *acctapi.Client) error

// withNil is the call of method m, of the resource client newS makes, with
// a nil request.
func withNil[S, R, T any](newS func(*acctapi.Client) S, m func(S, context.Context, *R) (*T, error)) nilCall {
	return func(ctx context.Context, c *acctapi.Client) error {
		_, err := m(newS(c), ctx, nil)
		return err
	}
}

// TestNilRequests checks that every resource client method that takes a
// request pointer returns a field error for nil, in either dialect and
// whether or not the client validates, instead of panicking, and sends
// nothing.
func TestNilRequests(t *testing.T) {
	t.Parallel()
	calls := map[string]nilCall{
		"APIKeys.Create":                withNil(account.NewAPIKeys, (*account.APIKeys).Create),
		"APIKeys.Update":                withNil(account.NewAPIKeys, (*account.APIKeys).Update),
		"ServiceUsers.Create":           withNil(account.NewServiceUsers, (*account.ServiceUsers).Create),
		"ServiceUsers.Update":           withNil(account.NewServiceUsers, (*account.ServiceUsers).Update),
		"BotUsers.Create":               withNil(account.NewBotUsers, (*account.BotUsers).Create), //lint:ignore SA1019 the deprecated client must not panic either
		"BotUsers.Update":               withNil(account.NewBotUsers, (*account.BotUsers).Update), //lint:ignore SA1019 the deprecated client must not panic either
		"CertificateAuthorities.Create": withNil(account.NewCertificateAuthorities, (*account.CertificateAuthorities).Create),
		"CertificateAuthorities.Update": withNil(account.NewCertificateAuthorities, (*account.CertificateAuthorities).Update),
		"Failovers.Create":              withNil(backends.NewFailovers, (*backends.Failovers).Create),
		"Failovers.Update":              withNil(backends.NewFailovers, (*backends.Failovers).Update),
		"HTTPResponses.Create":          withNil(backends.NewHTTPResponses, (*backends.HTTPResponses).Create),
		"HTTPResponses.Update":          withNil(backends.NewHTTPResponses, (*backends.HTTPResponses).Update),
		"TunnelGroups.Create":           withNil(backends.NewTunnelGroups, (*backends.TunnelGroups).Create),
		"TunnelGroups.Update":           withNil(backends.NewTunnelGroups, (*backends.TunnelGroups).Update),
		"Destinations.Create":           withNil(events.NewDestinations, (*events.Destinations).Create),
		"Destinations.Update":           withNil(events.NewDestinations, (*events.Destinations).Update),
		"Subscriptions.Create":          withNil(events.NewSubscriptions, (*events.Subscriptions).Create),
		"Subscriptions.Update":          withNil(events.NewSubscriptions, (*events.Subscriptions).Update),
		"Sources.Create": func(ctx context.Context, c *acctapi.Client) error {
			_, err := events.NewSources(c).Create(ctx, "esb_1", nil)
			return err
		},
		"Sources.Update":   withNil(events.NewSources, (*events.Sources).Update),
		"Operators.Create": withNil(k8sop.NewOperators, (*k8sop.Operators).Create),
		"Operators.Update": withNil(k8sop.NewOperators, (*k8sop.Operators).Update),
	}
	clients := map[string][]acctapi.Option{
		"validating":        nil,
		"WithoutValidation": {acctapi.WithoutValidation()},
		"real dialect":      {acctapi.WithDialect(acctapi.DialectReal)},
	}
	for cname, opts := range clients {
		for name, call := range calls {
			t.Run(cname+"/"+name, func(t *testing.T) {
				t.Parallel()
				url, sent := countingServer(t)
				c, err := acctapi.NewClient("k", append([]acctapi.Option{acctapi.WithBaseURL(url), acctapi.WithoutRetry()}, opts...)...)
				if err != nil {
					t.Fatal(err)
				}
				err = func() (err error) {
					defer func() {
						if r := recover(); r != nil {
							err = fmt.Errorf("panic: %v", r)
						}
					}()
					return call(t.Context(), c)
				}()
				var fe *acctapi.FieldError
				if !errors.As(err, &fe) || !strings.Contains(fe.Reason, "nil") || !errors.Is(err, acctapi.ErrInvalid) {
					t.Errorf("= %v, want a FieldError for the nil request", err)
				}
				if n := sent.Load(); n != 0 {
					t.Errorf("%d requests sent, want 0", n)
				}
			})
		}
	}
}

// TestRequestsRefuseInvalidUTF8 checks that every request type's Validate
// reports a string that is not valid UTF-8, on its JSON path and alone, and
// that the client then sends nothing: JSON would turn each bad byte into
// U+FFFD, so the server would measure or store other text.
func TestRequestsRefuseInvalidUTF8(t *testing.T) {
	t.Parallel()
	const bad = "a\xffb"
	longBad := strings.Repeat("\xff", 100) // 300 bytes once JSON has it
	p := func(s string) *string { return &s }
	tests := []struct {
		name string
		req  interface{ Validate() error }
		want []string
	}{
		{name: "api key description", req: &account.APIKeyCreate{Description: longBad}, want: []string{"description"}},
		{name: "api key owner", req: &account.APIKeyCreate{OwnerID: bad}, want: []string{"owner_id"}},
		{name: "api key update metadata", req: &account.APIKeyUpdate{ID: "ak_1", Metadata: p(bad)}, want: []string{"metadata"}},
		{name: "service user name", req: &account.ServiceUserCreate{Name: bad}, want: []string{"name"}},
		{name: "service user update name", req: &account.ServiceUserUpdate{ID: "service_1", Name: p(bad)}, want: []string{"name"}},
		{name: "update id", req: &account.ServiceUserUpdate{ID: bad}, want: []string{"id"}},
		{name: "certificate authority pem", req: &account.CertificateAuthorityCreate{CAPEM: bad}, want: []string{"ca_pem"}},
		{name: "certificate authority update", req: &account.CertificateAuthorityUpdate{Description: p(bad)}, want: []string{"description"}},
		{name: "http response body and header", req: &backends.HTTPResponseCreate{StatusCode: 200, Body: bad, Headers: map[string]string{"X": "v\xfe"}},
			want: []string{"body", "headers.X"}},
		{name: "http response update", req: &backends.HTTPResponseUpdate{Body: p(bad)}, want: []string{"body"}},
		{name: "failover backends", req: &backends.FailoverCreate{Backends: []string{"bkdhr_1", bad}}, want: []string{"backends[1]"}},
		{name: "failover update", req: &backends.FailoverUpdate{Backends: &[]string{bad}}, want: []string{"backends[0]"}},
		{name: "tunnel group labels", req: &backends.TunnelGroupCreate{Labels: map[string]string{"k": bad}}, want: []string{"labels.k"}},
		{name: "tunnel group label key", req: &backends.TunnelGroupUpdate{Labels: &map[string]string{bad: "v"}}, want: []string{"labels"}},
		{name: "destination target", req: &events.DestinationCreate{Format: events.FormatJSON, Target: events.Target{Kinesis: &events.Kinesis{
			Auth: &events.CloudAuth{Role: &events.Role{RoleARN: bad}}, StreamARN: "arn"}}}, want: []string{"target.kinesis.auth.role.role_arn"}},
		{name: "destination update format", req: &events.DestinationUpdate{Format: p(bad)}, want: []string{"format"}},
		{name: "subscription destination ids", req: &events.SubscriptionCreate{DestinationIDs: []string{bad}}, want: []string{"destination_ids[0]"}},
		{name: "subscription update sources", req: &events.SubscriptionUpdate{Sources: &[]events.SubscriptionSource{{Type: bad}}}, want: []string{"sources[0].type"}},
		{name: "source type", req: &events.SourceCreate{Type: bad}, want: []string{"type"}},
		{name: "source update", req: &events.SourceUpdate{SubscriptionID: bad, Type: "api_key_created.v0"}, want: []string{"subscription_id"}},
		{name: "operator deployment", req: &k8sop.OperatorCreate{Deployment: k8sop.Deployment{Name: bad}}, want: []string{"deployment.name"}},
		{name: "operator update region", req: &k8sop.OperatorUpdate{Region: p(bad)}, want: []string{"region"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got []string
			for _, fe := range acctapi.FieldErrors(tt.req.Validate()) {
				if !strings.Contains(fe.Reason, "not valid UTF-8") || fe.Code != acctapi.CodeInvalidValue {
					t.Errorf("field error %v, want only UTF-8 errors, with %s", fe, acctapi.CodeInvalidValue)
				}
				got = append(got, fe.Field)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("fields (-want +got):\n%s", diff)
			}
		})
	}

	// The client sends nothing.
	url, sent := countingServer(t)
	c, err := acctapi.NewClient("k", acctapi.WithBaseURL(url), acctapi.WithoutRetry())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := account.NewAPIKeys(c).Create(t.Context(), &account.APIKeyCreate{Description: longBad}); !errors.Is(err, acctapi.ErrInvalid) {
		t.Errorf("Create = %v, want a field error", err)
	}
	if n := sent.Load(); n != 0 {
		t.Errorf("%d requests sent, want 0", n)
	}
}

// TestDeleteAgainstTheFake checks, end to end, that a DELETE whose answer
// is lost after the fake deleted the resource succeeds on its retry's 404,
// and that a DELETE sent under a wrong base path (the fake's 404 no route)
// is not "not found".
func TestDeleteAgainstTheFake(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		srv := fake.Start(t, fake.WithoutListener())
		users := account.NewServiceUsers(srv.Client(acctapi.WithRetry(acctapi.DefaultRetryPolicy())))
		u, err := users.Create(t.Context(), &account.ServiceUserCreate{Name: "ci"})
		if err != nil {
			t.Fatal(err)
		}
		srv.DropAfterNext("DELETE", "/service_users/*", 1)
		if err := users.Delete(t.Context(), u.ID); err != nil {
			t.Errorf("Delete with its answer lost = %v, want nil: the first attempt deleted it", err)
		}
		if _, err := users.Get(t.Context(), u.ID); !acctapi.IsNotFound(err) {
			t.Errorf("Get after Delete = %v, want not found", err)
		}
		if err := users.Delete(t.Context(), u.ID); !acctapi.IsNotFound(err) {
			t.Errorf("Delete again = %v, want not found: no attempt of this call deleted it", err)
		}

		// (srv.Client refuses another base URL: the client is built apart.)
		wc, err := acctapi.NewClient(srv.APIKey(), acctapi.WithBaseURL(srv.URL+"/v2"), acctapi.WithHTTPClient(srv.HTTPClient()), acctapi.WithoutRetry())
		if err != nil {
			t.Fatal(err)
		}
		wrong := account.NewServiceUsers(wc)
		err = wrong.Delete(t.Context(), "service_1")
		if err == nil || acctapi.IsNotFound(err) || !acctapi.HasCode(err, acctapi.CodeNoRoute) {
			t.Errorf("Delete under a wrong base path = %v, want %s and not IsNotFound", err, acctapi.CodeNoRoute)
		}
	})
}
