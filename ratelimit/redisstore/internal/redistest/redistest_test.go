package redistest

import (
	"errors"
	"net"
	"testing"
)

// TestPortInUse checks that a port redis-server cannot bind is told apart
// (errInUse), which LaunchFree answers with another port and Launch by
// trying again.
func TestPortInUse(t *testing.T) {
	bin := Binary(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if cmd, err := launch(bin, t.TempDir(), ln.Addr().(*net.TCPAddr).Port); !errors.Is(err, errInUse) {
		if cmd != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
		t.Fatalf("launch on a port in use: %v, want errInUse", err)
	}
	cmd, port, err := LaunchFree(bin, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if port == 0 {
		t.Error("LaunchFree returned port 0")
	}
}
