// Package redistest starts a real redis-server for tests and benchmarks of
// ratelimit/redisstore and its bench module: on a free loopback port, in a
// temporary directory, without persistence. No mock stands in for Redis.
package redistest

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
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
	bin := Binary(tb)
	port, err := FreePort()
	if err != nil {
		tb.Fatal(err)
	}
	cmd, err := Launch(bin, tb.TempDir(), port)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return "127.0.0.1:" + strconv.Itoa(port)
}

// Launch starts bin on port with dir as its directory, without
// persistence, and returns once it says it accepts connections. The caller
// stops it (Process.Kill, then Wait).
func Launch(bin, dir string, port int) (*exec.Cmd, error) {
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
	return nil, fmt.Errorf("redis-server did not start:\n%s", strings.Join(log, "\n"))
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
