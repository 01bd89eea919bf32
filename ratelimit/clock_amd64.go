//go:build amd64 && linux && !purego

package ratelimit

import "os"

// ticks returns the processor's time-stamp counter (RDTSC).
func ticks() uint64

// ticksUsable reports whether Linux keeps its clock by the time-stamp
// counter (it chooses it only if the counter passed its checks at boot,
// and moves to another clock if it later finds it unstable) and the
// processor says the counter runs at a constant rate (constant_tsc) and
// does not stop in sleep states (nonstop_tsc).
func ticksUsable() bool {
	b, err := os.ReadFile(clocksourceFile)
	return err == nil && stillUsable(b, nil) && cpuHasFlags("constant_tsc", "nonstop_tsc")
}

// ticksStillUsable reports whether Linux still keeps its clock by the
// time-stamp counter, or true if it cannot tell (see stillUsable).
func ticksStillUsable() bool { return stillUsable(os.ReadFile(clocksourceFile)) }

// clocksourceFile names the clock Linux keeps its time by.
const clocksourceFile = "/sys/devices/system/clocksource/clocksource0/current_clocksource"
