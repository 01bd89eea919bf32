// Package counterclock holds the switch that lets benchmarks and the
// ratelimit package's own tests measure ratelimit.Limiter.Allow as a
// production binary runs it.
//
// In a test binary (testing.Testing reports true), Limiter.Allow reads the
// clock through time.Since, so that tests using testing/synctest bubbles,
// or mixing Allow with AllowAt(key, time.Now()), see one clock; elsewhere
// it reads the processor's time-stamp counter where it can (see
// ratelimit/clock.go). This package is internal: users cannot set it.
package counterclock

import "sync/atomic"

// InTests, when true, lets a Limiter read the processor's counter in a
// test binary too, from its first call to Allow on. Benchmarks set it to
// measure what production binaries run.
var InTests atomic.Bool
