//go:build !amd64 || !linux || purego

package ratelimit

// ticks is never called: ticksUsable reports false (see clock.go).
func ticks() uint64 { return 0 }

// ticksUsable reports false: only Linux on amd64 tells whether its
// processors' counter can be trusted (see clock_amd64.go).
func ticksUsable() bool { return false }
