//go:build !amd64 || race || purego

package ratelimit

// unlock releases b, locked by tryLock, acquire or lockUncontended, or
// created locked (see unlock_amd64.go for amd64 without the race
// detector).
func (b bucket[T]) unlock() { b.word0().Or(unlocked) }
