//go:build !amd64 || !linux || purego

package ratelimit

// ticks is never called: ticksUsable reports false (see clock.go).
func ticks() uint64 { return 0 }

// ticksUsable reports false: the counter is used only on Linux on amd64
// (see clock_amd64.go).
func ticksUsable() bool { return false }

// ticksStillUsable reports false, as ticksUsable does.
func ticksStillUsable() bool { return false }
