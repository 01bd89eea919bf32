package redistest

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes cmd's process be killed when the test binary dies,
// as when go test's -timeout panics: cleanups do not run then, and a
// redis-server left behind would hold its port.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
