package acctapi

import (
	"context"
	"errors"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"
)

// jsonStream is a response body of exactly n bytes, {"id":"aaa…"}, made as
// it is read so that a test of a huge body allocates none of it. It counts
// the bytes read.
type jsonStream struct {
	n, off int64
	read   atomic.Int64
}

const streamHead, streamTail = `{"id":"`, `"}`

// filler is what jsonStream copies its middle from.
var filler = []byte(strings.Repeat("a", 32<<10))

func (s *jsonStream) Read(p []byte) (int, error) {
	if s.off >= s.n {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), s.n-s.off)]
	tail := s.n - int64(len(streamTail))
	for i := 0; i < len(p); {
		switch at := s.off + int64(i); {
		case at < int64(len(streamHead)):
			p[i] = streamHead[at]
			i++
		case at >= tail:
			p[i] = streamTail[at-tail]
			i++
		default:
			i += copy(p[i:min(int64(len(p)), int64(i)+tail-at)], filler)
		}
	}
	s.off += int64(len(p))
	s.read.Add(int64(len(p)))
	return len(p), nil
}

// streamingServer answers every request with 200 and a jsonStream of n
// bytes, with Content-Length set to declared when it is not zero (-1 for
// none).
func streamingServer(n, declared int64) (http.RoundTripper, *jsonStream) {
	body := &jsonStream{n: n}
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(body), ContentLength: declared, Request: r}, nil
	}), body
}

// TestResponseBodyLimit checks that a success body over the client's limit
// is read no further than the limit and becomes a *ResponseTooLargeError,
// whether its length is declared or not; a body at the limit is read.
func TestResponseBodyLimit(t *testing.T) {
	t.Parallel()
	const limit = 1 << 20
	tests := []struct {
		name     string
		size     int64
		declared int64
		opts     []Option
		wantErr  bool
		maxRead  int64
	}{
		{name: "at the limit", size: limit, declared: -1, opts: []Option{WithMaxResponseBytes(limit)}, maxRead: limit},
		{name: "one byte over, length unknown", size: limit + 1, declared: -1, opts: []Option{WithMaxResponseBytes(limit)}, wantErr: true, maxRead: limit + 1},
		{name: "far over, length unknown", size: 64 * limit, declared: -1, opts: []Option{WithMaxResponseBytes(limit)}, wantErr: true, maxRead: limit + 1},
		{name: "far over, length declared", size: 64 * limit, declared: 64 * limit, opts: []Option{WithMaxResponseBytes(limit)}, wantErr: true, maxRead: limit + 1},
		{name: "over the default, length unknown", size: DefaultMaxResponseBytes + 1, declared: -1, wantErr: true, maxRead: DefaultMaxResponseBytes + 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rt, body := streamingServer(tt.size, tt.declared)
			var out struct{ ID string }
			err := newFakeClient(t, rt, tt.opts...).Do(t.Context(), http.MethodGet, "/things", nil, nil, &out)
			if !tt.wantErr {
				if err != nil || int64(len(out.ID)) != tt.size-int64(len(streamHead)+len(streamTail)) {
					t.Errorf("Do = %v with an id of %d bytes, want the whole body", err, len(out.ID))
				}
				return
			}
			var tooLarge *ResponseTooLargeError
			if !errors.As(err, &tooLarge) {
				t.Fatalf("Do = %v, want a *ResponseTooLargeError", err)
			}
			want := &ResponseTooLargeError{Method: http.MethodGet, Path: "/things", Limit: tooLarge.Limit}
			if tt.opts == nil {
				want.Limit = DefaultMaxResponseBytes
			} else {
				want.Limit = limit
			}
			if diff := cmp.Diff(want, tooLarge); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if n := body.read.Load(); n > tt.maxRead {
				t.Errorf("read %d bytes of the body, want at most %d", n, tt.maxRead)
			}
		})
	}
}

// TestUnwantedBodyIsDrainedOnlySoFar checks that a call without an out
// value (a delete, say, which a body makes an error) does not read an
// endless body to its end.
func TestUnwantedBodyIsDrainedOnlySoFar(t *testing.T) {
	t.Parallel()
	rt, body := streamingServer(256<<20, -1)
	if err := newFakeClient(t, rt).Do(t.Context(), http.MethodDelete, "/things/x", nil, nil, nil); !errors.Is(err, ErrNoResource) {
		t.Fatalf("Do = %v, want ErrNoResource: a DELETE answered with a body", err)
	}
	if n := body.read.Load(); n > maxErrorBody {
		t.Errorf("read %d bytes of an unwanted body, want at most %d", n, maxErrorBody)
	}
}

func TestWithMaxResponseBytes(t *testing.T) {
	t.Parallel()
	for _, n := range []int64{0, -1} {
		if _, err := NewClient("k", WithMaxResponseBytes(n)); err == nil {
			t.Errorf("WithMaxResponseBytes(%d) accepted, want an error", n)
		}
	}
	c, err := NewClient("k")
	if err != nil {
		t.Fatal(err)
	}
	if c.maxResp != DefaultMaxResponseBytes {
		t.Errorf("default limit = %d, want %d", c.maxResp, DefaultMaxResponseBytes)
	}
}

// TestDefaultHTTPClient checks that a Client made without WithHTTPClient
// has an HTTP client of its own with DefaultTimeout, and that WithHTTPClient
// wins, timeout and all.
func TestDefaultHTTPClient(t *testing.T) {
	t.Parallel()
	c, err := NewClient("k")
	if err != nil {
		t.Fatal(err)
	}
	if c.http == http.DefaultClient || c.http.Timeout != DefaultTimeout {
		t.Errorf("default HTTP client: shared %t, timeout %v; want a client of its own with %v",
			c.http == http.DefaultClient, c.http.Timeout, DefaultTimeout)
	}
	tr := &http.Transport{}
	mine := &http.Client{Transport: tr}
	c, err = NewClient("k", WithHTTPClient(mine))
	if err != nil {
		t.Fatal(err)
	}
	// A copy, with the redirect guard (TestRedirectsStayOnTheOrigin).
	if c.http.Transport != tr || c.http.Timeout != 0 || mine.CheckRedirect != nil {
		t.Errorf("WithHTTPClient: got transport %p with timeout %v, want %p with none, and the caller's client unchanged", c.http.Transport, c.http.Timeout, tr)
	}
}

// TestDefaultTimeoutEndsAHungCall checks, in a synctest bubble, that a call
// without a deadline to a server that never answers ends with a timeout:
// without one, the bubble would deadlock.
func TestDefaultTimeoutEndsAHungCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, err := NewClient("k", WithBaseURL("https://api.test"), WithoutRetry())
		if err != nil {
			t.Fatal(err)
		}
		c.http.Transport = roundTripFunc(func(r *http.Request) (*http.Response, error) {
			<-r.Context().Done() // a server that never answers
			return nil, r.Context().Err()
		})
		err = c.Do(context.Background(), http.MethodGet, "/things", nil, nil, nil)
		// The call's context has no deadline: a timeout can only be the
		// HTTP client's.
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			t.Errorf("Do against a hung server = %v, want a timeout", err)
		}
	})
}

// TestMaxResponseBytesWithoutLimit pins a review's finding:
// WithMaxResponseBytes(math.MaxInt64), "no limit", overflowed the read's
// bound to a negative one, so every answer read as empty and failed to
// decode.
func TestMaxResponseBytesWithoutLimit(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id": "service_1"}`)
	}))
	defer srv.Close()
	c, err := NewClient("k", WithBaseURL(srv.URL), WithMaxResponseBytes(math.MaxInt64))
	if err != nil {
		t.Fatal(err)
	}
	var out struct{ ID string }
	if err := c.Do(t.Context(), http.MethodGet, "/service_users/service_1", nil, nil, &out); err != nil || out.ID != "service_1" {
		t.Errorf("Do = %v, id %q; want service_1", err, out.ID)
	}
}
