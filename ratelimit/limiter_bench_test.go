package ratelimit

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkAllowAt is the limiter alone on one existing key, time passed in
// and advancing. The rows are: always admitted (the rate stays under the
// limit), and a mix of admissions and rejections (three times the limit).
func BenchmarkAllowAt(b *testing.B) {
	for _, bc := range []struct {
		name     string
		capacity int64
		window   time.Duration
		step     time.Duration
	}{
		{"admit/cap250-per-1m", 250, time.Minute, 250 * time.Millisecond},
		{"admit/cap65000-per-1m", 65000, time.Minute, time.Millisecond},
		{"admit/cap2e9-per-24h", MaxCapacity, 24 * time.Hour, time.Microsecond},
		{"mixed/cap100-per-1m", 100, time.Minute, 200 * time.Millisecond},
		{"mixed/cap1000-per-10m", 1000, 10 * time.Minute, 200 * time.Millisecond},
	} {
		b.Run(bc.name, func(b *testing.B) {
			l := mustLimiter(b, bc.capacity, bc.window)
			now := base
			l.AllowAt("203.0.113.7", now)
			b.ReportAllocs()
			for b.Loop() {
				now = now.Add(bc.step)
				l.AllowAt("203.0.113.7", now)
			}
		})
	}
}

// BenchmarkAllowAtRejecting measures the path that computes retry-after.
func BenchmarkAllowAtRejecting(b *testing.B) {
	l := mustLimiter(b, 100, time.Minute)
	for i := range 100 {
		l.AllowAt("k", base.Add(time.Duration(i)*500*time.Millisecond))
	}
	now := base.Add(50 * time.Second)
	b.ReportAllocs()
	for b.Loop() {
		if l.AllowAt("k", now).Allowed {
			b.Fatal("admitted")
		}
	}
}

// BenchmarkAllow includes reading the clock, as a production binary
// reads it (see counterclock).
func BenchmarkAllow(b *testing.B) {
	useCounterInTests(b)
	l := mustLimiter(b, 100, time.Minute)
	b.ReportAllocs()
	for b.Loop() {
		l.Allow("203.0.113.7")
	}
}

// BenchmarkAllowAt100kKeysParallel spreads requests over 100,000 existing
// keys from all procs.
func BenchmarkAllowAt100kKeysParallel(b *testing.B) {
	const n = 100_000
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("198.51.%d.%d", i/256, i%256)
	}
	l := mustLimiter(b, 100, time.Minute)
	for _, k := range keys {
		l.AllowAt(k, base)
	}
	var seq atomic.Uint64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := seq.Add(7919) // distinct start per goroutine
		now := base
		for pb.Next() {
			i += 7919 // a stride that visits every key in turn
			now = now.Add(time.Microsecond)
			l.AllowAt(keys[i%n], now)
		}
	})
}

// BenchmarkAllowAt100kKeysSerial is the same spread from one goroutine.
func BenchmarkAllowAt100kKeysSerial(b *testing.B) {
	const n = 100_000
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("198.51.%d.%d", i/256, i%256)
	}
	l := mustLimiter(b, 100, time.Minute)
	for _, k := range keys {
		l.AllowAt(k, base)
	}
	b.ReportAllocs()
	i, now := 0, base
	for b.Loop() {
		i += 7919
		now = now.Add(time.Microsecond)
		l.AllowAt(keys[i%n], now)
	}
}

// BenchmarkNewKeysAtCap is a flood of new keys at the bucket cap (one
// shard of 2,048 live buckets, none idle): each goes to the overflow
// bucket after examining a few buckets, not the whole shard.
func BenchmarkNewKeysAtCap(b *testing.B) {
	l := mustLimiter(b, 1, time.Minute, WithMaxBuckets(2048))
	for i := range 2048 {
		l.AllowAt(fmt.Sprint("held-", i), base)
	}
	keys := make([]string, 1<<16)
	for i := range keys {
		keys[i] = fmt.Sprint("new-", i)
	}
	now := base.Add(time.Second)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		l.AllowAt(keys[i&(len(keys)-1)], now)
	}
}
