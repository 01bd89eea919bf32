//go:build amd64 && linux && !purego

package ratelimit

import (
	"bytes"
	"os"
)

// ticks returns the processor's time-stamp counter (RDTSC).
func ticks() uint64

// ticksUsable reports whether Linux keeps its clock by the time-stamp
// counter (it chooses it only if the counter passed its checks at boot,
// and moves to another clock if it later finds it unstable) and the
// processor says the counter runs at a constant rate (constant_tsc) and
// does not stop in sleep states (nonstop_tsc).
func ticksUsable() bool {
	tsc, err := clocksourceIsTSC()
	return err == nil && tsc && cpuHasFlags("constant_tsc", "nonstop_tsc")
}

// ticksStillUsable reports whether Linux still keeps its clock by the
// time-stamp counter, or true if it cannot tell (a file descriptor limit
// reached for a moment must not turn the counter off for good).
func ticksStillUsable() bool {
	tsc, err := clocksourceIsTSC()
	return err != nil || tsc
}

// clocksourceIsTSC reports whether Linux keeps its clock by the
// time-stamp counter.
func clocksourceIsTSC() (bool, error) {
	b, err := os.ReadFile("/sys/devices/system/clocksource/clocksource0/current_clocksource")
	return string(bytes.TrimSpace(b)) == "tsc", err
}
