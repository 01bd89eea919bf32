//go:build !race

package ratelimit

// raceEnabled reports whether the tests run under the race detector.
const raceEnabled = false
