package redisstore_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"time"

	"github.com/acctapi/acctapi/ratelimit"
	"github.com/acctapi/acctapi/ratelimit/redisstore"
	"github.com/redis/go-redis/v9"
)

// Two replicas of a service share one limit of 2 requests per minute per
// client address through Redis: together they admit 2, not 4.
func Example() {
	// The client the program already has (here, the tests' redis-server).
	client := redis.NewClient(&redis.Options{Addr: os.Getenv("REDIS_ADDR"), ContextTimeoutEnabled: true})
	defer client.Close()
	client.FlushDB(context.Background()) // (so that the example starts from empty buckets every run)

	doc := []byte(`
on_http_request:
  - actions:
      - type: rate-limit
        config:
          name: per-ip
          algorithm: sliding_window
          capacity: 2
          rate: 60s
          bucket_key: [conn.client_ip]
`)
	hello := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "hello") })
	var replicas []http.Handler
	for range 2 {
		// Each replica has its own store value on the same Redis. If Redis
		// is down or slower than the timeout, requests are admitted
		// (FailOpen) and the Result carries ratelimit.CodeStoreFailed. In
		// production the timeout is tens of milliseconds; a minute here,
		// so that the output does not depend on the machine's speed.
		store := redisstore.New(client, redisstore.WithPrefix("example:"))
		p, err := ratelimit.NewPolicy(doc, ratelimit.WithStore(store, ratelimit.FailOpen, time.Minute))
		if err != nil {
			fmt.Println(err)
			return
		}
		replicas = append(replicas, p.Handler(hello))
	}
	for i := range 4 {
		r := httptest.NewRequest("GET", "http://example.com/", nil)
		r.RemoteAddr = "203.0.113.7:51234"
		w := httptest.NewRecorder()
		replicas[i%2].ServeHTTP(w, r)
		fmt.Println("replica", i%2, w.Code, w.Header().Get("Retry-After") != "")
	}
	// Output:
	// replica 0 200 false
	// replica 1 200 false
	// replica 0 429 true
	// replica 1 429 true
}
