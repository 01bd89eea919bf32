// Package redistest starts a real redis-server for tests and benchmarks of
// ratelimit/redisstore and its bench module: on a free loopback port, in a
// temporary directory, without persistence. No mock stands in for Redis.
package redistest

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Binary returns the path of redis-server. It skips tb when the binary is
// missing, unless ACCTAPI_REQUIRE_REDIS is set (CI), in which case tb
// fails.
func Binary(tb testing.TB) string {
	tb.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("ACCTAPI_REQUIRE_REDIS") != "" {
			tb.Fatalf("redis-server not found and ACCTAPI_REQUIRE_REDIS is set: %v", err)
		}
		tb.Skip("redis-server not found (apt-get install redis-server); set ACCTAPI_REQUIRE_REDIS=1 to make this a failure")
	}
	return bin
}

// Start starts redis-server for tb on a free loopback port and stops it
// when tb ends; it returns the server's address. It skips or fails tb as
// [Binary] does.
func Start(tb testing.TB) string {
	tb.Helper()
	cmd, port, err := LaunchFree(Binary(tb), tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return "127.0.0.1:" + strconv.Itoa(port)
}

// LaunchFree starts bin as [Launch] does on a loopback port that is free,
// and returns the port. A port found free can be taken before redis-server
// binds it (by any connection's local end); then it tries another, up to
// five.
func LaunchFree(bin, dir string) (*exec.Cmd, int, error) {
	var err error
	for range 5 {
		var port int
		if port, err = FreePort(); err != nil {
			return nil, 0, err
		}
		var cmd *exec.Cmd
		if cmd, err = launch(bin, dir, port); err == nil {
			return cmd, port, nil
		}
		if !errors.Is(err, errInUse) {
			return nil, 0, err
		}
	}
	return nil, 0, err
}

// Launch starts bin on port with dir as its directory, without
// persistence, and returns once it says it accepts connections. The caller
// stops it (Process.Kill, then Wait). A port in use (a restart on the port
// of a server just stopped, which a client's new connection can hold for a
// moment as its local end) is tried up to 400 times, 50 ms apart: the
// client lets go of it within moments, and a loaded machine may take
// seconds.
func Launch(bin, dir string, port int) (*exec.Cmd, error) {
	for i := 0; ; i++ {
		cmd, err := launch(bin, dir, port)
		if err == nil || !errors.Is(err, errInUse) || i == 399 {
			return cmd, err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// errInUse is launch's error when the port is taken.
var errInUse = errors.New("the port is in use")

func launch(bin, dir string, port int) (*exec.Cmd, error) {
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir,
		"--save", "", "--appendonly", "no", "--daemonize", "no", "--loglevel", "notice")
	dieWithParent(cmd)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(out)
	var log []string
	for sc.Scan() {
		log = append(log, sc.Text())
		if strings.Contains(sc.Text(), "Ready to accept connections") {
			go func() { // drain, so the server never blocks on its output
				for sc.Scan() {
				}
			}()
			return cmd, nil
		}
	}
	_ = cmd.Wait()
	text := strings.Join(log, "\n")
	if strings.Contains(text, "Address already in use") {
		return nil, fmt.Errorf("redis-server did not start on port %d: %w:\n%s", port, errInUse, text)
	}
	return nil, fmt.Errorf("redis-server did not start:\n%s", text)
}

// FreePort returns a loopback TCP port that was free a moment ago.
func FreePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
