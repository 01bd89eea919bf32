package fake_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"context"
	"errors"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/backends"
	"github.com/acctapi/acctapi/fake"
)

// TestHTTPResponsesEndToEnd drives /backends/http_response through
// backends.HTTPResponses.
func TestHTTPResponsesEndToEnd(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	ctx := t.Context()
	hrs := backends.NewHTTPResponses(srv.Client())

	hr := must(hrs.Create(ctx, &backends.HTTPResponseCreate{Description: "teapot", StatusCode: 418, Body: "short and stout",
		Headers: map[string]string{"Content-Type": "text/plain"}}))(t)
	want := backends.HTTPResponse{ID: hr.ID, URI: srv.URL + "/backends/http_response/" + hr.ID, CreatedAt: t0, Description: "teapot",
		Body: "short and stout", Headers: map[string]string{"Content-Type": "text/plain"}, StatusCode: 418}
	if !strings.HasPrefix(hr.ID, "bkdhr_") {
		t.Errorf("id %q, want prefix bkdhr_", hr.ID)
	}
	if diff := cmp.Diff(want, *hr); diff != "" {
		t.Errorf("create (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, *must(hrs.Get(ctx, hr.ID))(t)); diff != "" {
		t.Errorf("get (-want +got):\n%s", diff)
	}
	want.StatusCode, want.Headers = 503, map[string]string{}
	got := must(hrs.Update(ctx, &backends.HTTPResponseUpdate{ID: hr.ID, StatusCode: ptr(503), Headers: &map[string]string{}}))(t)
	if diff := cmp.Diff(want, *got); diff != "" {
		t.Errorf("update (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]backends.HTTPResponse{want}, collect(t, hrs.List(ctx, nil))); diff != "" {
		t.Errorf("list (-want +got):\n%s", diff)
	}
	lax := backends.NewHTTPResponses(srv.Client(acctapi.WithoutValidation()))
	_, err := lax.Create(ctx, &backends.HTTPResponseCreate{StatusCode: 600})
	wantAPIError(t, err, http.StatusBadRequest, acctapi.CodeInvalidValue)
	wantDeleted(ctx, t, hr.ID, hrs.Delete, hrs.Get)
}

// TestFailoversEndToEnd drives /backends/failover through
// backends.Failovers, with its referential integrity.
func TestFailoversEndToEnd(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	ctx := t.Context()
	fos := backends.NewFailovers(srv.Client())
	hr := must(fake.Seed[backends.HTTPResponse](srv, "", &backends.HTTPResponseCreate{StatusCode: 200}))(t)
	tg := must(fake.Seed[backends.TunnelGroup](srv, "", &backends.TunnelGroupCreate{Labels: map[string]string{"app": "a"}}))(t)

	inner := must(fos.Create(ctx, &backends.FailoverCreate{Backends: []string{hr.ID}}))(t)
	outer := must(fos.Create(ctx, &backends.FailoverCreate{Description: "chain", Backends: []string{tg.ID, inner.ID, hr.ID}}))(t)
	want := backends.Failover{ID: outer.ID, URI: srv.URL + "/backends/failover/" + outer.ID, CreatedAt: t0,
		Description: "chain", Backends: []string{tg.ID, inner.ID, hr.ID}}
	if !strings.HasPrefix(outer.ID, "bkdfo_") {
		t.Errorf("id %q, want prefix bkdfo_", outer.ID)
	}
	if diff := cmp.Diff(want, *must(fos.Get(ctx, outer.ID))(t)); diff != "" {
		t.Errorf("get (-want +got):\n%s", diff)
	}
	empty := must(fos.Create(ctx, &backends.FailoverCreate{}))(t)
	if empty.Backends == nil {
		t.Error("backends of a failover created without any is null, want []")
	}

	lax := backends.NewFailovers(srv.Client(acctapi.WithoutValidation()))
	tests := []struct {
		name   string
		call   func() error
		status int
		code   string
	}{
		{"create with a missing backend", func() error {
			_, err := fos.Create(ctx, &backends.FailoverCreate{Backends: []string{hr.ID, "bkdhr_missing"}})
			return err
		}, 400, acctapi.CodeUnknownBackend},
		{"update with a missing backend", func() error {
			_, err := fos.Update(ctx, &backends.FailoverUpdate{ID: outer.ID, Backends: &[]string{"bkdfo_missing"}})
			return err
		}, 400, acctapi.CodeUnknownBackend},
		{"a tunnel is not a backend", func() error {
			tn := must(fake.Seed[fake.Tunnel](srv, "", &fake.Tunnel{}))(t)
			_, err := fos.Create(ctx, &backends.FailoverCreate{Backends: []string{tn.ID}})
			return err
		}, 400, acctapi.CodeUnknownBackend},
		{"itself, checked by the server", func() error {
			_, err := lax.Update(ctx, &backends.FailoverUpdate{ID: outer.ID, Backends: &[]string{hr.ID, outer.ID}})
			return err
		}, 400, acctapi.CodeInvalidValue},
		{"duplicates, checked by the server", func() error {
			_, err := lax.Create(ctx, &backends.FailoverCreate{Backends: []string{hr.ID, hr.ID}})
			return err
		}, 400, acctapi.CodeInvalidValue},
		{"delete a referenced HTTP response", func() error { return backends.NewHTTPResponses(srv.Client()).Delete(ctx, hr.ID) }, 409, acctapi.CodeStillReferenced},
		{"delete a referenced tunnel group", func() error { return backends.NewTunnelGroups(srv.Client()).Delete(ctx, tg.ID) }, 409, acctapi.CodeStillReferenced},
		{"delete a referenced failover", func() error { return fos.Delete(ctx, inner.ID) }, 409, acctapi.CodeStillReferenced},
	}
	for _, tt := range tests {
		wantAPIError(t, tt.call(), tt.status, tt.code)
	}
	// The failed update left the failover as it was.
	if diff := cmp.Diff(want, *must(fos.Get(ctx, outer.ID))(t)); diff != "" {
		t.Errorf("after failed updates (-want +got):\n%s", diff)
	}

	// Dropping the reference frees the backend.
	want.Backends = []string{inner.ID}
	if diff := cmp.Diff(want, *must(fos.Update(ctx, &backends.FailoverUpdate{ID: outer.ID, Backends: &[]string{inner.ID}}))(t)); diff != "" {
		t.Errorf("update (-want +got):\n%s", diff)
	}
	if err := backends.NewTunnelGroups(srv.Client()).Delete(ctx, tg.ID); err != nil {
		t.Errorf("delete the unreferenced tunnel group: %v", err)
	}
	if err := fos.Delete(ctx, outer.ID); err != nil {
		t.Fatal(err)
	}
	if err := fos.Delete(ctx, inner.ID); err != nil {
		t.Errorf("delete inner after outer: %v", err)
	}
	if err := backends.NewHTTPResponses(srv.Client()).Delete(ctx, hr.ID); err != nil {
		t.Errorf("delete the HTTP response once nothing references it: %v", err)
	}
	if diff := cmp.Diff([]string{empty.ID}, idsOf(collect(t, fos.List(ctx, nil)), func(f backends.Failover) string { return f.ID })); diff != "" {
		t.Errorf("list (-want +got):\n%s", diff)
	}
}

// TestTunnelGroupsEndToEnd drives /backends/tunnel_group through
// backends.TunnelGroups: its tunnels are the seeded tunnels that carry all
// its labels, including tunnels seeded after the group.
func TestTunnelGroupsEndToEnd(t *testing.T) {
	t.Parallel()
	srv, clk := start(t)
	ctx := t.Context()
	tgs := backends.NewTunnelGroups(srv.Client())
	seed := func(labels map[string]string) string {
		t.Helper()
		return must(fake.Seed[fake.Tunnel](srv, "", &fake.Tunnel{Labels: labels}))(t).ID
	}
	ref := func(id string) acctapi.Ref { return acctapi.Ref{ID: id, URI: srv.URL + "/tunnels/" + id} }

	before := seed(map[string]string{"app": "web", "env": "prod", "zone": "a"})
	seed(map[string]string{"app": "web", "env": "dev"})
	seed(map[string]string{"app": "api", "env": "prod"})
	seed(nil)

	g := must(tgs.Create(ctx, &backends.TunnelGroupCreate{Description: "web prod", Labels: map[string]string{"app": "web", "env": "prod"}}))(t)
	want := backends.TunnelGroup{ID: g.ID, URI: srv.URL + "/backends/tunnel_group/" + g.ID, CreatedAt: t0, Description: "web prod",
		Labels: map[string]string{"app": "web", "env": "prod"}, Tunnels: []acctapi.Ref{ref(before)}}
	if !strings.HasPrefix(g.ID, "bkdtg_") {
		t.Errorf("id %q, want prefix bkdtg_", g.ID)
	}
	if diff := cmp.Diff(want, *g); diff != "" {
		t.Errorf("create (-want +got):\n%s", diff)
	}

	clk.Advance(time.Hour)
	after := seed(map[string]string{"app": "web", "env": "prod"})
	seed(map[string]string{"app": "web"})
	want.Tunnels = append(want.Tunnels, ref(after))
	if diff := cmp.Diff(want, *must(tgs.Get(ctx, g.ID))(t)); diff != "" {
		t.Errorf("get after seeding more tunnels (-want +got):\n%s", diff)
	}

	// Changing the labels recomputes the tunnels.
	want.Labels = map[string]string{"zone": "a"}
	want.Tunnels = []acctapi.Ref{ref(before)}
	if diff := cmp.Diff(want, *must(tgs.Update(ctx, &backends.TunnelGroupUpdate{ID: g.ID, Labels: &map[string]string{"zone": "a"}}))(t)); diff != "" {
		t.Errorf("update (-want +got):\n%s", diff)
	}
	// A group no tunnel matches lists none ([] rather than null).
	none := must(tgs.Create(ctx, &backends.TunnelGroupCreate{Labels: map[string]string{"app": "nothing"}}))(t)
	if none.Tunnels == nil || len(none.Tunnels) != 0 {
		t.Errorf("tunnels = %#v, want []", none.Tunnels)
	}
	got := collect(t, tgs.List(ctx, &acctapi.FilterOptions{Filter: `obj.description == "web prod"`}))
	if diff := cmp.Diff([]backends.TunnelGroup{want}, got); diff != "" {
		t.Errorf("filtered list (-want +got):\n%s", diff)
	}
	lax := backends.NewTunnelGroups(srv.Client(acctapi.WithoutValidation()))
	_, err := lax.Create(ctx, &backends.TunnelGroupCreate{})
	wantAPIError(t, err, http.StatusBadRequest, acctapi.CodeInvalidValue)
	wantDeleted(ctx, t, g.ID, tgs.Delete, tgs.Get)
}

func TestFailoverLoopRefused(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	ctx := context.Background()
	fo := backends.NewFailovers(srv.Client(acctapi.WithoutValidation()))
	hr, err := fake.Seed[backends.HTTPResponse](srv, "", &backends.HTTPResponseCreate{StatusCode: 200})
	if err != nil {
		t.Fatal(err)
	}
	a, err := fo.Create(ctx, &backends.FailoverCreate{Backends: []string{hr.ID}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := fo.Create(ctx, &backends.FailoverCreate{Backends: []string{a.ID}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = fo.Update(ctx, &backends.FailoverUpdate{ID: a.ID, Backends: &[]string{hr.ID, b.ID}})
	var e *acctapi.Error
	if !errors.As(err, &e) || e.ErrorCode != acctapi.CodeInvalidValue || e.Details["field"] != "backends[1]" {
		t.Fatalf("update making a loop: %v, want 400 on backends[1]", err)
	}
	// Both can still be deleted, newest first.
	if err := fo.Delete(ctx, b.ID); err != nil {
		t.Fatal(err)
	}
	if err := fo.Delete(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
}
