package rest

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/acctapi/acctapi"
)

// roundTripFunc is an http.RoundTripper made of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// errSent ends every request FuzzOnBase makes, once its URL is seen.
var errSent = errors.New("seen")

// FuzzOnBase checks, for any base URL, list path and next_page_uri, that
// the request the pager makes for the next page goes to the base URL's
// origin only: the API key is never sent anywhere else.
func FuzzOnBase(f *testing.F) {
	f.Add("https://api.example.test", "/service_users", "")
	f.Add("https://api.example.test/v2/", "/service_users/a%2Fb", "https://other.test/v2/service_users?before_id=x")
	f.Add("http://127.0.0.1:8080", "https://evil.test/x", "//evil.test/x")
	f.Add("http://127.0.0.1:8080", "/../x", "http://user:pass@127.0.0.1:8080/x")
	f.Add("https://api.example.test", "/service_users", "HTTPS://evil.test/service_users?before_id=x")
	f.Fuzz(func(t *testing.T, base, path, next string) {
		var sent *url.URL
		rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			sent = r.URL
			return nil, errSent
		})
		c, err := acctapi.NewClient("k", acctapi.WithBaseURL(base), acctapi.WithHTTPClient(&http.Client{Transport: rt}), acctapi.WithoutRetry())
		if err != nil {
			return
		}
		b, err := url.Parse(c.BaseURL())
		if err != nil {
			t.Fatalf("BaseURL %q does not parse: %v", c.BaseURL(), err)
		}
		_ = c.Do(t.Context(), http.MethodGet, onBase(b, path, next), nil, nil, nil)
		if sent != nil && (sent.Scheme != b.Scheme || !strings.EqualFold(sent.Host, b.Host) || sent.User != nil) {
			t.Fatalf("base %q, path %q, next %q: request for %s, off the base origin", base, path, next, sent.Redacted())
		}
	})
}
