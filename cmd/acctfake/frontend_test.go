package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestFrontendPanics checks that a handler's panic is answered 500 in the
// contract's body, and that http.ErrAbortHandler (an injected drop) still
// closes the connection without an answer.
func TestFrontendPanics(t *testing.T) {
	t.Parallel()
	f := &frontend{
		api: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/abort" {
				panic(http.ErrAbortHandler)
			}
			panic("boom")
		}),
		maxHeaderBytes: 64 << 10, timeout: time.Hour, shutdown: context.Background(),
	}
	ts := httptest.NewServer(f)
	defer ts.Close()
	r := do(t, "GET", ts.URL+"/boom", "", "")
	if code, msg := r.want(t, 500, "").errorBody(t); code != "ERR_ACCTAPI_INTERNAL" || msg != "internal error: boom" {
		t.Errorf("panic answered %s %q", code, msg)
	}
	if resp, err := http.Get(ts.URL + "/abort"); err == nil {
		resp.Body.Close()
		t.Errorf("ErrAbortHandler answered %d, want the connection closed", resp.StatusCode)
	}
}
