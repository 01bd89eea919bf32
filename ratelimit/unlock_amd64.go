//go:build amd64 && !race

package ratelimit

import "unsafe"

// unlock releases b, locked by tryLock, acquire or lockUncontended, or
// created locked.
//
// On amd64 it sets the unlocked bit with a plain store to the word's
// first byte, where other architectures, and builds with the race
// detector (which sees only atomic operations as synchronising), use an
// atomic Or (unlock_other.go). That is enough here: amd64 keeps stores in
// order and never lets a load pass a later store, so whoever next locks
// the record sees everything its holder did; the call to assembly keeps
// the compiler from moving the holder's reads and writes past it; and
// only the holder writes that byte while the record is held, a concurrent
// change of the uncontended flag (contend's compare-and-swap of the whole
// word) lying in the next byte. Linux's queued spinlocks unlock the same
// way, a byte store into a word others compare-and-swap.
//
// The atomic Or is a locked instruction, about half a decision's cost
// besides the clock on one key. Its plain store let a key that two
// processors take in turns go back and forth between decisions with and
// without the shard's lock, which took longer than the locked
// instruction saved, until a contended record stayed so for calmDecisions
// (see bucket).
func (b bucket[T]) unlock() { setUnlocked(b.p) }

// setUnlocked sets bit 0 of the byte at p, without a lock prefix.
//
//go:noescape
func setUnlocked(p unsafe.Pointer)
