package apitest

import (
	"testing"
	"time"
)

// Deadline is shortly before go test's -timeout ends the run, if it has
// one. A test that waits for something that never happens stops waiting
// then and fails naming it, instead of a panic that loses every other
// result. It bounds nothing that should happen: the waits it ends are for
// what takes milliseconds.
func Deadline(t *testing.T) (time.Time, bool) {
	d, ok := t.Deadline()
	return d.Add(-10 * time.Second), ok
}

// BeforeTimeout is a channel that receives at [Deadline], or never.
func BeforeTimeout(t *testing.T) <-chan time.Time {
	d, ok := Deadline(t)
	if !ok {
		return nil
	}
	return time.After(time.Until(d))
}
