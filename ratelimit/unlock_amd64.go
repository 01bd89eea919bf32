//go:build amd64 && !race && !purego

package ratelimit

import "unsafe"

// unlock releases b, locked by tryLock, acquire or lockUncontended, or
// created locked.
//
// On amd64 it stores 0xFF into the word's first byte (its value once
// unlocked; see bucket) with a plain store, where other architectures,
// builds with the race detector (which sees only atomic operations as
// synchronising) and builds with the purego tag (no assembly) use an
// atomic Or (unlock_other.go). That is enough here:
// amd64 keeps stores in order and never lets a load pass a later store,
// so whoever next locks the record sees everything its holder did; the
// call to assembly keeps the compiler from moving the holder's reads and
// writes past it; and only the holder changes the byte while the record
// is held, a concurrent change of the uncontended flag (contend's
// compare-and-swap of the whole word) lying in the next byte. Linux's
// queued spinlocks unlock the same way on x86, a byte store into a word
// others compare-and-swap.
//
// On ratelimit/bench's SingleKey (a 2-vCPU Intel Xeon VM, 2026-11-25) the
// atomic Or, a locked instruction, took about 5 of the 23.5 ns a decision
// took besides the clock (see shards.allow). With the plain store alone, a key that two processors
// take in turns went back and forth between decisions with and without
// the shard's lock, which cost HotKeyParallel more than the store saved;
// a contended record now stays so for calmDecisions decisions (see
// bucket). Measured together against the atomic Or (medians of 7
// alternating runs, 2026-11-25): SingleKey 48.1 ns against 50.5,
// HotKeyParallel 69.5 against 66.2.
func (b bucket[T]) unlock() { setUnlocked(b.p) }

// setUnlocked stores 0xFF at p, without a lock prefix.
//
//go:noescape
func setUnlocked(p unsafe.Pointer)
