package limitedapi_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	limitedapi "github.com/acctapi/acctapi/examples/ratelimit"
	"github.com/acctapi/acctapi/ratelimit"
)

// A client IP's 31st request in a minute gets 429 and retry-after; once
// the window has moved on, it is served again. The clock is fixed so the
// output is the same on every run.
func ExampleNewHandler() {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	h, err := limitedapi.NewHandler(ratelimit.WithClock(func() time.Time { return now }))
	if err != nil {
		fmt.Println(err)
		return
	}
	get := func() *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodGet, "/hello", nil)
		r.RemoteAddr = "203.0.113.7:50000"
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	for range 30 {
		if w := get(); w.Code != http.StatusOK {
			fmt.Println("unexpected", w.Code)
		}
	}
	w := get()
	fmt.Println(w.Code, "retry-after:", w.Header().Get("Retry-After"))

	now = now.Add(61 * time.Second)
	w = get()
	fmt.Println(w.Code, w.Body.String())
	// Output:
	// 429 retry-after: 60
	// 200 hello
}
