package fake_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/account"
	"github.com/acctapi/acctapi/fake"
	"github.com/google/go-cmp/cmp"
)

// TestOverTCP drives a listening server: uris carry the address the
// request reached, and a dropped connection reaches the client as a
// transport error.
func TestOverTCP(t *testing.T) {
	t.Parallel()
	srv := fake.Start(t, fake.WithIDSeed(1))
	if !strings.HasPrefix(srv.URL, "http://127.0.0.1:") {
		t.Fatalf("URL %q, want a loopback address", srv.URL)
	}
	ctx := t.Context()
	users := account.NewServiceUsers(srv.Client())
	for _, name := range []string{"a", "b"} {
		u := must(users.Create(ctx, &account.ServiceUserCreate{Name: name}))(t)
		if u.URI != srv.URL+"/service_users/"+u.ID {
			t.Errorf("uri %q, want under %s", u.URI, srv.URL)
		}
	}
	p := must(users.Page(ctx, &acctapi.FilterOptions{Limit: 1}))(t)
	if p.URI != srv.URL+"/service_users" || p.NextPageURI == nil || !strings.HasPrefix(*p.NextPageURI, srv.URL+"/service_users?") {
		t.Errorf("page uri %q next %v", p.URI, p.NextPageURI)
	}
	if n := len(collect(t, users.List(ctx, &acctapi.FilterOptions{Limit: 1}))); n != 2 {
		t.Errorf("listed %d over TCP, want 2", n)
	}

	srv.DropNext("POST", "/service_users", 1)
	_, err := users.Create(ctx, &account.ServiceUserCreate{Name: "c"})
	var apiErr *acctapi.Error
	if err == nil || errors.As(err, &apiErr) {
		t.Errorf("dropped create: err = %v, want a transport error", err)
	}
	if n := len(fake.List[account.ServiceUser](srv, "")); n != 2 {
		t.Errorf("%d service users after a dropped create, want 2", n)
	}
	// The server still serves.
	must(users.Create(ctx, &account.ServiceUserCreate{Name: "c"}))(t)
}

// TestPublicBaseURL checks that uris and next_page_uri use the configured
// base, in responses and in what Seed and Get return.
func TestPublicBaseURL(t *testing.T) {
	t.Parallel()
	const base = "https://api.example.test/v2"
	srv, _ := start(t, fake.WithPublicBaseURL(base+"/"))
	u := must(fake.Seed[account.ServiceUser](srv, "", &account.ServiceUserCreate{Name: "a"}))(t)
	must(fake.Seed[account.ServiceUser](srv, "", &account.ServiceUserCreate{Name: "b"}))(t)
	if u.URI != base+"/service_users/"+u.ID {
		t.Errorf("seeded uri %q", u.URI)
	}
	var p svcPage
	raw(t, srv, "GET", "/service_users?limit=1", nil, "").decode(t, &p)
	if p.URI != base+"/service_users" || p.NextPageURI == nil || !strings.HasPrefix(*p.NextPageURI, base+"/service_users?") {
		t.Errorf("page uri %q next %v", p.URI, p.NextPageURI)
	}
	// The typed client pages on its own base URL, where the public URL
	// names another origin.
	var names []string
	for u, err := range account.NewServiceUsers(srv.Client()).List(t.Context(), &acctapi.FilterOptions{Limit: 1}) {
		if err != nil {
			t.Fatalf("List: %v", err)
		}
		names = append(names, u.Name)
	}
	if diff := cmp.Diff([]string{"b", "a"}, names); diff != "" {
		t.Errorf("names through the public base URL (-want +got):\n%s", diff)
	}
	r := raw(t, srv, "GET", "/bot_users", nil, "")
	if got := r.header.Get("Link"); got != "<"+base+`/service_users>; rel="successor-version"` {
		t.Errorf("Link %q", got)
	}
	for _, bad := range []string{"", "api.example", "ftp://x", "http://"} {
		if _, err := fake.New(fake.WithoutListener(), fake.WithPublicBaseURL(bad)); err == nil {
			t.Errorf("WithPublicBaseURL(%q) accepted", bad)
		}
	}
}

// TestPublicBaseURLRefused checks that WithPublicBaseURL refuses what
// acctapi.WithBaseURL refuses, with an error naming what is wrong and
// never quoting a password, and that trailing slashes are dropped.
func TestPublicBaseURLRefused(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ url, want string }{
		{"http://example.com?x=1", "must not have a query or fragment"},
		{"http://example.com/v2?", "must not have a query or fragment"},
		{"http://example.com#top", "must not have a query or fragment"},
		{"http://user:secret@example.com", "must not carry user information"},
		{"http://user@example.com", "must not carry user information"},
		{"ftp://example.com", "want an absolute http or https URL"},
		{"http://exa mple.com", "WithPublicBaseURL"},
	} {
		_, err := fake.New(fake.WithoutListener(), fake.WithPublicBaseURL(tt.url))
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "secret") {
			t.Errorf("WithPublicBaseURL(%q): error %v, want one with %q and no password", tt.url, err, tt.want)
		}
	}
	for base, want := range map[string]string{
		"http://example.com/":       "http://example.com/service_users/",
		"http://example.com":        "http://example.com/service_users/",
		"http://example.com/v2//":   "http://example.com/v2/service_users/",
		"https://example.com/a%2F":  "https://example.com/a%2F/service_users/",
		"https://example.com/a%2F/": "https://example.com/a%2F/service_users/",
	} {
		srv, _ := start(t, fake.WithPublicBaseURL(base))
		u := must(fake.Seed[account.ServiceUser](srv, "", &account.ServiceUserCreate{Name: "a"}))(t)
		if u.URI != want+u.ID {
			t.Errorf("WithPublicBaseURL(%q): uri %q, want %q", base, u.URI, want+u.ID)
		}
	}
}

// TestIngressEndpointRefused checks that WithIngressEndpoint wants a
// host:port with a port from 1 to 65535.
func TestIngressEndpointRefused(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"", "not a hostport", "example.com", "example.com:", ":443",
		"example.com:0", "example.com:65536", "example.com:https", "example.com:-1", "example.com:+443", "[::1]"} {
		_, err := fake.New(fake.WithoutListener(), fake.WithIngressEndpoint(bad))
		if err == nil || !strings.Contains(err.Error(), "WithIngressEndpoint") {
			t.Errorf("WithIngressEndpoint(%q): error %v, want one naming WithIngressEndpoint", bad, err)
		}
	}
	for _, good := range []string{"example.com:1", "example.com:65535", "[::1]:443", "10.0.0.1:8443"} {
		if _, err := fake.New(fake.WithoutListener(), fake.WithIngressEndpoint(good)); err != nil {
			t.Errorf("WithIngressEndpoint(%q): %v", good, err)
		}
	}
}

// TestNewNilOption checks that a nil option is an error naming its
// position, not a nil-pointer crash.
func TestNewNilOption(t *testing.T) {
	t.Parallel()
	_, err := fake.New(fake.WithoutListener(), nil)
	if err == nil || !strings.Contains(err.Error(), "option 2 of 2 is nil") {
		t.Errorf("New(WithoutListener(), nil): error %v, want one saying option 2 of 2 is nil", err)
	}
}

// TestWithClockTypedNil checks that a nil *ManualClock is refused by New,
// naming the option, as WithClock(nil) is, instead of a nil-pointer panic
// inside New.
func TestWithClockTypedNil(t *testing.T) {
	t.Parallel()
	for _, c := range []fake.Clock{nil, (*fake.ManualClock)(nil)} {
		var err error
		func() {
			defer func() {
				if r := recover(); r != nil {
					err = fmt.Errorf("panic: %v", r)
				}
			}()
			_, err = fake.New(fake.WithoutListener(), fake.WithClock(c))
		}()
		if err == nil || !strings.Contains(err.Error(), "fake: WithClock: nil clock") {
			t.Errorf("New(WithClock(%#v)): error %v, want one naming WithClock's nil clock", c, err)
		}
	}
}

// TestWithClockZero pins a review's finding: a zero ManualClock (not one
// from NewManualClock) was accepted, and the server stamped everything
// at January 1 of year 1. It is refused now, naming the constructor.
func TestWithClockZero(t *testing.T) {
	t.Parallel()
	_, err := fake.New(fake.WithoutListener(), fake.WithClock(&fake.ManualClock{}))
	if err == nil || !strings.Contains(err.Error(), "NewManualClock") {
		t.Errorf("New(WithClock(&ManualClock{})): %v; want an error pointing to NewManualClock", err)
	}
	if _, err := fake.New(fake.WithoutListener(), fake.WithClock(fake.NewManualClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)))); err != nil {
		t.Errorf("a clock from NewManualClock: %v", err)
	}
}

func TestAccountErrorsNameNoKey(t *testing.T) {
	t.Parallel()
	for _, opts := range [][]fake.Option{
		{fake.WithAccount(fake.Account{APIKeys: []string{"has space-secret"}})},
		{fake.WithAccount(fake.Account{APIKeys: []string{"dup-secret"}}), fake.WithAccount(fake.Account{APIKeys: []string{"dup-secret"}})},
	} {
		_, err := fake.New(append(opts, fake.WithoutListener())...)
		if err == nil || strings.Contains(err.Error(), "secret") {
			t.Errorf("error %v: want an error that does not quote the key", err)
		}
	}
}

// TestStartInBubble: fake.Start(t) inside a testing/synctest bubble makes
// an in-memory server, which the bubble can wait on (a listener would
// block it), and requests reach it; outside a bubble Start still listens
// (TestOverTCP uses it over TCP).
func TestStartInBubble(t *testing.T) {
	t.Parallel()
	if srv := fake.Start(t); !strings.HasPrefix(srv.URL, "http://127.0.0.1:") {
		t.Errorf("outside a bubble: URL %q, want a loopback address", srv.URL)
	}
	synctest.Test(t, func(t *testing.T) {
		srv := fake.Start(t)
		if srv.URL != "http://acctfake.invalid" {
			// A listening server would block the bubble: stop here.
			t.Fatalf("in a bubble: URL %q, want the in-memory server's", srv.URL)
		}
		users := account.NewServiceUsers(srv.Client())
		u := must(users.Create(t.Context(), &account.ServiceUserCreate{Name: "in-bubble"}))(t)
		if u.URI != "http://acctfake.invalid/service_users/"+u.ID {
			t.Errorf("uri %q", u.URI)
		}
		// Time passes in the bubble; the server's clock is the bubble's.
		time.Sleep(time.Hour)
		v := must(users.Create(t.Context(), &account.ServiceUserCreate{Name: "later"}))(t)
		if d := v.CreatedAt.Sub(u.CreatedAt); d != time.Hour {
			t.Errorf("created %v apart, want 1h", d)
		}
		synctest.Wait()
	})
}

// TestManualClockRange checks that a manual clock refuses, loudly and
// without moving, a time the API's RFC 3339 timestamps cannot hold: before,
// Set(year 10000) was taken and every later answer carrying a time failed
// with a 500.
func TestManualClockRange(t *testing.T) {
	last := time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)
	tests := []struct {
		name string
		move func(c *fake.ManualClock)
	}{
		{name: "set past 9999", move: func(c *fake.ManualClock) { c.Set(last.Add(time.Second)) }},
		{name: "set before year 1", move: func(c *fake.ManualClock) { c.Set(time.Date(0, 12, 31, 0, 0, 0, 0, time.UTC)) }},
		{name: "advance past 9999", move: func(c *fake.ManualClock) { c.Advance(48 * time.Hour) }},
		{name: "new past 9999", move: func(*fake.ManualClock) { fake.NewManualClock(last.Add(time.Second)) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := fake.NewManualClock(last)
			func() {
				defer func() {
					if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "years 1 to 9999") {
						t.Errorf("recovered %v, want a panic naming the years 1 to 9999", r)
					}
				}()
				tt.move(c)
			}()
			if got := c.Now(); !got.Equal(last) {
				t.Errorf("clock moved to %v, want it left at %v", got, last)
			}
		})
	}
	// The last representable second itself is fine.
	srv := fake.Start(t, fake.WithoutListener(), fake.WithClock(fake.NewManualClock(last)))
	if _, err := fake.Seed[account.ServiceUser](srv, "", &account.ServiceUserCreate{Name: "late"}); err != nil {
		t.Fatalf("seeding at the last second of 9999: %v", err)
	}
}
