package fake_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/account"
	"github.com/acctapi/acctapi/fake"
)

// TestRateLimit checks the management API's own limit (contract §7): per
// account, over a rolling window on the server's clock, with 429,
// ERR_NGROK_226 and a truthful Retry-After.
func TestRateLimit(t *testing.T) {
	t.Parallel()
	srv, clk := start(t, fake.WithRateLimit(3, time.Minute), fake.WithAccount(fake.Account{}), fake.WithAccount(fake.Account{}))
	accts := srv.Accounts()
	keys := func(i int) *account.APIKeys {
		c, err := srv.ClientFor(accts[i].APIKeys[0])
		if err != nil {
			t.Fatal(err)
		}
		return account.NewAPIKeys(c)
	}
	a, b := keys(0), keys(1)
	ctx := context.Background()
	list := func(k *account.APIKeys) error {
		_, err := k.Page(ctx, nil)
		return err
	}
	for i := range 3 {
		if err := list(a); err != nil {
			t.Fatalf("request %d: %v", i+1, err)
		}
		clk.Advance(10 * time.Second)
	}
	err := list(a)
	retry, limited := acctapi.IsRateLimited(err)
	if !limited || !acctapi.HasCode(err, acctapi.CodeRateLimited) {
		t.Fatalf("fourth request: %v, want 429 %s", err, acctapi.CodeRateLimited)
	}
	// The first request was at t0; it leaves the window at t0+60s, 30 s
	// from now.
	if retry < 30*time.Second || retry > 32*time.Second {
		t.Errorf("Retry-After = %v, want about 30s", retry)
	}
	if err := list(b); err != nil {
		t.Errorf("the other account is limited too: %v", err)
	}
	clk.Advance(retry)
	if err := list(a); err != nil {
		t.Errorf("after Retry-After: %v", err)
	}
	// Reset forgets what the limit counted.
	for range 3 {
		_ = list(a)
	}
	if err := list(a); !acctapi.HasCode(err, acctapi.CodeRateLimited) {
		t.Fatalf("over the limit again: %v", err)
	}
	srv.Reset()
	if err := list(a); err != nil {
		t.Errorf("after Reset: %v", err)
	}
}

func TestRateLimitOption(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		n     int64
		every time.Duration
	}{{0, time.Minute}, {1, 0}, {1, 1500 * time.Millisecond}} {
		if _, err := fake.New(fake.WithoutListener(), fake.WithRateLimit(tt.n, tt.every)); err == nil {
			t.Errorf("WithRateLimit(%d, %v): no error", tt.n, tt.every)
		}
	}
}

// TestRateLimitResetConcurrent resets the limit while requests over it are
// answered (run with -race).
func TestRateLimitResetConcurrent(t *testing.T) {
	t.Parallel()
	srv, _ := start(t, fake.WithRateLimit(1, time.Minute))
	keys := account.NewAPIKeys(srv.Client())
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 20 {
				_, err := keys.Page(t.Context(), nil)
				if err != nil && !acctapi.HasCode(err, acctapi.CodeRateLimited) {
					t.Errorf("answer: %v", err)
				}
			}
		})
	}
	for range 20 {
		srv.Reset()
	}
	wg.Wait()
}
