//go:build amd64 && linux && !purego

package ratelimit

import (
	"bytes"
	"os"
)

// ticks returns the processor's time-stamp counter (RDTSC).
func ticks() uint64

// ticksUsable reports whether Linux keeps its clock by the time-stamp
// counter, which it does only after checking that the counter runs at a
// constant rate, through sleep states, in step on every processor, and
// watching it since.
func ticksUsable() bool {
	b, err := os.ReadFile("/sys/devices/system/clocksource/clocksource0/current_clocksource")
	return err == nil && string(bytes.TrimSpace(b)) == "tsc"
}
