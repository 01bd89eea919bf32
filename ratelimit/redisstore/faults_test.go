package redisstore

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acctapi/acctapi/ratelimit"
	"github.com/redis/go-redis/v9"
)

// modes are both failure modes, in a fixed order.
var modes = []ratelimit.FailureMode{ratelimit.FailOpen, ratelimit.FailClosed}

// checkFailed reports what is wrong with res, a Result whose store failed
// under mode, or "" when it is what the mode documents.
func checkFailed(res ratelimit.Result, mode ratelimit.FailureMode) string {
	switch {
	case res.ErrorCode != ratelimit.CodeStoreFailed || res.ErrorMessage == "":
		return fmt.Sprintf("error %q %q, want %s and a message", res.ErrorCode, res.ErrorMessage, ratelimit.CodeStoreFailed)
	case mode == ratelimit.FailOpen && (res.Limited || res.Reject):
		return "FailOpen limited the request"
	case mode == ratelimit.FailClosed && (!res.Limited || !res.Reject || res.RetryAfter != time.Second):
		return fmt.Sprintf("FailClosed: limited %v, reject %v, retry-after %v; want a rejection with retry-after 1s", res.Limited, res.Reject, res.RetryAfter)
	}
	return ""
}

// TestRestartUnderLoad: 16 goroutines evaluate one limit (capacity 5 per
// minute, one bucket) in each failure mode while Redis is stopped and
// started again. Every Result without an error is a decision the server
// made (and logged); every Result with one carries CodeStoreFailed and the
// mode's decision, and every decision made wholly while the server was
// down has one. On the server's timeline neither the server before the
// restart nor the one after it admitted more than capacity in a window,
// and the restarted one decided. Nothing hangs: decisions have an hour,
// and a stopped server refuses connections at once.
func TestRestartUnderLoad(t *testing.T) {
	srv := startServer(t)
	const capacity = 5
	cfg := ratelimit.Config{Name: "n", Algorithm: "sliding_window", Capacity: capacity, Rate: "60s", BucketKey: []string{"conn.client_ip"}}
	type run struct {
		limit        *ratelimit.Limit
		log          []decision // guarded by mu
		ok, failed   atomic.Int64
		wrong        atomic.Value // string: the first wrong Result
		okAfterStart atomic.Int64
	}
	var mu sync.Mutex
	runs := map[ratelimit.FailureMode]*run{}
	for _, mode := range modes {
		r := &run{}
		st := New(srv.client(), WithPrefix(fmt.Sprint(mode, ":")))
		st.observe = func(key string, allowed bool, at time.Time) {
			mu.Lock()
			r.log = append(r.log, decision{key, allowed, at})
			mu.Unlock()
		}
		l, err := ratelimit.NewLimit(cfg, ratelimit.WithStore(st, mode, time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		r.limit = l
		runs[mode] = r
	}
	const (
		up = iota
		down
		restarted
	)
	var phase atomic.Int32
	var stop atomic.Bool
	progress := make(chan struct{}, 1)
	var wg sync.WaitGroup
	for g := range 16 {
		mode := modes[g%2]
		r := runs[mode]
		wg.Go(func() {
			for !stop.Load() {
				before := phase.Load()
				res := r.limit.Evaluate(httptest.NewRequest("GET", "http://x/", nil))
				after := phase.Load()
				var wrong string
				switch {
				case res.ErrorCode == "":
					r.ok.Add(1)
					if before == restarted {
						r.okAfterStart.Add(1)
					}
					if before == down && after == down {
						wrong = "a decision without an error while the server was down"
					}
				default:
					r.failed.Add(1)
					wrong = checkFailed(res, mode)
				}
				if wrong != "" {
					r.wrong.CompareAndSwap(nil, fmt.Sprintf("%s: %+v", wrong, res))
				}
				select {
				case progress <- struct{}{}:
				default:
				}
			}
		})
	}
	// await waits, on the goroutines' progress rather than a clock, until
	// every mode has done what done asks for.
	// Shortly before go test's -timeout, it fails naming the phase,
	// instead of a panic that loses the other results and the servers.
	var deadline <-chan time.Time
	if d, ok := t.Deadline(); ok {
		deadline = time.After(time.Until(d) - 10*time.Second)
	}
	await := func(done func(*run) bool) {
		for {
			select {
			case <-progress:
			case <-deadline:
				o, c := runs[ratelimit.FailOpen], runs[ratelimit.FailClosed]
				t.Fatalf("in phase %d the decisions never did what the test waits for: failing open %d ok, %d failed; failing closed %d ok, %d failed",
					phase.Load(), o.ok.Load(), o.failed.Load(), c.ok.Load(), c.failed.Load())
			}
			if done(runs[ratelimit.FailOpen]) && done(runs[ratelimit.FailClosed]) {
				return
			}
		}
	}
	await(func(r *run) bool { return r.ok.Load() >= 50 })
	srv.stop()
	phase.Store(down)
	failed := map[*run]int64{}
	for _, r := range runs {
		failed[r] = r.failed.Load()
	}
	await(func(r *run) bool { return r.failed.Load() >= failed[r]+50 })
	cut := time.Now() // after the old server died, before the new one starts: both read this machine's clock
	phase.Store(restarted)
	srv.start()
	await(func(r *run) bool { return r.okAfterStart.Load() >= 50 })
	stop.Store(true)
	wg.Wait()

	for _, mode := range modes {
		r := runs[mode]
		if w := r.wrong.Load(); w != nil {
			t.Errorf("mode %d: %s", mode, w)
		}
		if got := int64(len(r.log)); got != r.ok.Load() {
			t.Errorf("mode %d: %d Results without an error, %d decisions on the server", mode, r.ok.Load(), got)
		}
		slices.SortStableFunc(r.log, func(a, b decision) int { return a.at.Compare(b.at) })
		var old, restartedLog []time.Time
		for _, d := range r.log {
			switch {
			case !d.allowed:
			case d.at.Before(cut):
				old = append(old, d.at)
			default:
				restartedLog = append(restartedLog, d.at)
			}
		}
		for name, ts := range map[string][]time.Time{"before the restart": old, "after the restart": restartedLog} {
			if m, at := maxInWindow(ts, time.Minute); m > capacity {
				t.Errorf("mode %d, %s: %d admissions in the window ending %v, capacity %d", mode, name, m, at, capacity)
			}
			if len(ts) == 0 {
				t.Errorf("mode %d, %s: no admissions", mode, name)
			}
		}
		t.Logf("mode %d: %d decided by the server, %d failed; admitted %d before the restart, %d after", mode, r.ok.Load(), r.failed.Load(), len(old), len(restartedLog))
	}
}

// proxy is a TCP proxy to a Redis server that can stall: while stalled it
// still accepts connections and reads from them, but delivers nothing in
// either direction, as a network that drops packets would.
type proxy struct {
	ln     net.Listener
	target string
	closed chan struct{}

	mu    sync.Mutex
	gate  chan struct{} // closed while the proxy forwards
	conns []net.Conn
}

// startProxy starts a proxy to target, closed with its connections when t
// ends.
func startProxy(t testing.TB, target string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target, closed: make(chan struct{}), gate: make(chan struct{})}
	close(p.gate)
	go p.serve()
	t.Cleanup(p.close)
	return p
}

func (p *proxy) addr() string { return p.ln.Addr().String() }

// stall stops delivering bytes; resume delivers them again, those held
// back first.
func (p *proxy) stall() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.gate:
		p.gate = make(chan struct{})
	default:
	}
}

func (p *proxy) resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.gate:
	default:
		close(p.gate)
	}
}

func (p *proxy) open() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.gate
}

func (p *proxy) close() {
	close(p.closed)
	p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
}

func (p *proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		u, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, u)
		p.mu.Unlock()
		go p.pipe(u, c)
		go p.pipe(c, u)
	}
}

// pipe copies src to dst, holding each read back while the proxy stalls.
func (p *proxy) pipe(dst, src net.Conn) {
	defer dst.Close()
	defer src.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			select {
			case <-p.open():
			case <-p.closed:
				return
			}
			if _, err := dst.Write(buf[:n]); err != nil {
				return
			}
		}
		if err != nil { // EOF, a reset or a closed connection: the other side goes too
			return
		}
	}
}

// TestStalledNetwork: through a proxy that stalls its connections, 8
// goroutines' decisions in each failure mode end at the limiter's timeout
// with ErrStoreTimeout and the mode's decision (in a Limit's Result,
// CodeStoreFailed), whether the client honours context deadlines itself
// or the store guards it; once the proxy forwards again, decisions are
// the store's. Only outcomes are asserted: while the proxy stalls, the
// timeout is the only way a decision can end.
func TestStalledNetwork(t *testing.T) {
	srv := startServer(t)
	px := startProxy(t, srv.addr())
	clients := map[string]*redis.Client{}
	for name, honours := range map[string]bool{"ContextTimeoutEnabled": true, "guarded": false} {
		o := &redis.Options{Addr: px.addr(), ContextTimeoutEnabled: honours, MaxRetries: -1}
		if !honours {
			o.ReadTimeout = -1 // none: without the store's guard a decision would wait for ever
		}
		c := redis.NewClient(o)
		t.Cleanup(func() { c.Close() })
		clients[name] = c
	}
	cfg := ratelimit.Config{Name: "n", Algorithm: "sliding_window", Capacity: 1000, Rate: "60s", BucketKey: []string{"conn.client_ip"}}
	type limits struct {
		name    string
		mode    ratelimit.FailureMode
		limiter *ratelimit.Limiter // with a short timeout
		limit   *ratelimit.Limit   // the same
		patient *ratelimit.Limiter // an hour's timeout, for the server's own decisions
	}
	var all []limits
	for name, c := range clients {
		for _, mode := range modes {
			st := New(c, WithPrefix(fmt.Sprint(name, mode, ":")))
			short := ratelimit.WithStore(st, mode, 50*time.Millisecond)
			l, err := ratelimit.NewLimiter(1000, time.Minute, short)
			if err != nil {
				t.Fatal(err)
			}
			lim, err := ratelimit.NewLimit(cfg, short)
			if err != nil {
				t.Fatal(err)
			}
			patient, err := ratelimit.NewLimiter(1000, time.Minute, ratelimit.WithStore(st, mode, time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, limits{name, mode, l, lim, patient})
		}
	}
	ctx := context.Background()
	decideAll := func(stage string) {
		for _, x := range all {
			if d, err := x.patient.AllowContext(ctx, "k", time.Time{}); err != nil || !d.Allowed {
				t.Fatalf("%s, %s mode %d: %+v %v, want the server's admission", stage, x.name, x.mode, d, err)
			}
		}
	}
	decideAll("before the stall")
	px.stall()
	var wg sync.WaitGroup
	errs := make(chan string, 8*len(all)*3)
	for _, x := range all {
		for g := range 8 {
			wg.Go(func() {
				for i := range 3 {
					d, err := x.limiter.AllowContext(ctx, fmt.Sprint("k", g, i), time.Time{})
					if !errors.Is(err, ratelimit.ErrStoreTimeout) {
						errs <- fmt.Sprintf("%s mode %d: err %v, want ErrStoreTimeout", x.name, x.mode, err)
					}
					if want := x.mode == ratelimit.FailOpen; d.Allowed != want || (!want && d.RetryAfter != time.Second) {
						errs <- fmt.Sprintf("%s mode %d: %+v, want the mode's decision", x.name, x.mode, d)
					}
					res := x.limit.Evaluate(httptest.NewRequest("GET", "http://x/", nil))
					if w := checkFailed(res, x.mode); w != "" || !strings.Contains(res.ErrorMessage, ratelimit.ErrStoreTimeout.Error()) {
						errs <- fmt.Sprintf("%s mode %d: %s: %+v, want the timeout's error", x.name, x.mode, w, res)
					}
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	px.resume()
	decideAll("after the stall")
}
