//go:build !linux

package redistest

import "os/exec"

// dieWithParent does nothing where the kernel cannot kill a process with
// its parent; a server left behind by a test binary that panicked must be
// stopped by hand there.
func dieWithParent(*exec.Cmd) {}
