package bench

import (
	"bufio"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// startRedis starts a redis-server for b on a free loopback port, in a
// temporary directory, without persistence, and stops it when b ends; it
// returns the server's address. It mirrors ratelimit/redisstore's test
// helper (server_test.go), which another module's tests cannot import:
// b is skipped when the binary is missing, unless ACCTAPI_REQUIRE_REDIS
// is set (CI), which makes that a failure.
func startRedis(b *testing.B) string {
	b.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("ACCTAPI_REQUIRE_REDIS") != "" {
			b.Fatalf("redis-server not found and ACCTAPI_REQUIRE_REDIS is set: %v", err)
		}
		b.Skip("redis-server not found (apt-get install redis-server); set ACCTAPI_REQUIRE_REDIS=1 to make this a failure")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	cmd := exec.Command(bin, "--port", port, "--bind", "127.0.0.1", "--dir", b.TempDir(),
		"--save", "", "--appendonly", "no", "--daemonize", "no")
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	sc := bufio.NewScanner(out)
	var log []string
	for sc.Scan() {
		log = append(log, sc.Text())
		if strings.Contains(sc.Text(), "Ready to accept connections") {
			go func() { // drain, so the server never blocks on its output
				for sc.Scan() {
				}
			}()
			return "127.0.0.1:" + port
		}
	}
	b.Fatalf("redis-server did not start:\n%s", strings.Join(log, "\n"))
	return ""
}
