package rest_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/internal/rest"
)

func TestPath(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		segments []string
		want     string
	}{
		{name: "none", want: ""},
		{name: "one", segments: []string{"service_users"}, want: "/service_users"},
		{name: "slash in id", segments: []string{"service_users", "a/b"}, want: "/service_users/a%2Fb"},
		{name: "space and question mark", segments: []string{"things", "a/b c?d"}, want: "/things/a%2Fb%20c%3Fd"},
		{name: "percent and hash", segments: []string{"things", "50%#1"}, want: "/things/50%25%231"},
		{name: "multi-byte", segments: []string{"things", "é"}, want: "/things/%C3%A9"},
		{name: "empty id", segments: []string{"things", ""}, want: "/things/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := rest.Path(tt.segments...); got != tt.want {
				t.Errorf("Path(%q) = %q, want %q", tt.segments, got, tt.want)
			}
		})
	}
}

// TestNoResource: a success answer that holds nothing of a resource or a
// list (a server that is not the API: {} or null with 200, or a 204) is an
// error wrapping acctapi.ErrNoResource, for a get, a create, an update and
// a page; an answer with an id, a uri or the list passes.
func TestNoResource(t *testing.T) {
	t.Parallel()
	type thing struct {
		ID  string `json:"id"`
		URI string `json:"uri"`
	}
	type things struct {
		Things []thing `json:"things"`
		URI    string  `json:"uri"`
	}
	// okFor says which calls the answer satisfies: "thing" (get, create,
	// update), "things" (page), both, or neither ("").
	for _, tt := range []struct {
		status int
		body   string
		okFor  string
	}{
		{200, `{}`, ""},
		{200, `null`, ""},
		{201, `{"name":"x"}`, ""},
		{204, ``, ""},
		{200, `{"id":"x_1"}`, "thing"},
		{200, `{"things":[]}`, "things"},
		{200, `{"uri":"https://api.example/things"}`, "thing things"},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(tt.status)
			_, _ = io.WriteString(w, tt.body)
		}))
		c, err := acctapi.NewClient("k", acctapi.WithBaseURL(srv.URL), acctapi.WithoutRetry())
		if err != nil {
			t.Fatal(err)
		}
		ctx := t.Context()
		for _, call := range []struct {
			name, kind string
			do         func() error
		}{
			{"get", "thing", func() error { _, err := rest.Get[thing](ctx, c, "/things/x_1"); return err }},
			{"create", "thing", func() error { _, err := rest.Create[thing](ctx, c, "/things", nil); return err }},
			{"update", "thing", func() error { _, err := rest.Update[thing](ctx, c, "/things/x_1", nil); return err }},
			{"page", "things", func() error { _, err := rest.GetPage[things](ctx, c, "/things", nil); return err }},
		} {
			err := call.do()
			if ok := slices.Contains(strings.Fields(tt.okFor), call.kind); ok && err != nil {
				t.Errorf("%s answered %d %s: %v", call.name, tt.status, tt.body, err)
			} else if !ok && !errors.Is(err, acctapi.ErrNoResource) {
				t.Errorf("%s answered %d %s: %v, want ErrNoResource", call.name, tt.status, tt.body, err)
			}
		}
		srv.Close()
	}
}
