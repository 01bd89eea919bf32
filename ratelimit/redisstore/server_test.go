package redisstore

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// server is a real redis-server that a test started on a free loopback
// port, in a temporary directory, without persistence.
type server struct {
	t    testing.TB
	bin  string
	dir  string
	port int
	cmd  *exec.Cmd
}

// startServer starts redis-server for t and stops it when t ends. It skips
// t when the binary is missing, unless ACCTAPI_REQUIRE_REDIS is set (CI),
// in which case t fails.
func startServer(t testing.TB) *server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("ACCTAPI_REQUIRE_REDIS") != "" {
			t.Fatalf("redis-server not found and ACCTAPI_REQUIRE_REDIS is set: %v", err)
		}
		t.Skip("redis-server not found (apt-get install redis-server); set ACCTAPI_REQUIRE_REDIS=1 to make this a failure")
	}
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	s := &server{t: t, bin: bin, dir: t.TempDir(), port: port}
	s.start()
	t.Cleanup(s.stop)
	return s
}

// start runs the server and returns once it accepts connections.
func (s *server) start() {
	s.t.Helper()
	cmd, err := launch(s.bin, s.dir, s.port)
	if err != nil {
		s.t.Fatal(err)
	}
	s.cmd = cmd
}

// launch starts redis-server on port with dir as its directory, without
// persistence, and returns once it says it accepts connections.
func launch(bin, dir string, port int) (*exec.Cmd, error) {
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir,
		"--save", "", "--appendonly", "no", "--daemonize", "no", "--loglevel", "notice")
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
			go func() {
				for sc.Scan() {
				}
			}()
			return cmd, nil
		}
	}
	_ = cmd.Wait()
	return nil, fmt.Errorf("redis-server did not start:\n%s", strings.Join(log, "\n"))
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// stop kills the server and waits for it; a stopped server stays stopped.
func (s *server) stop() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
	s.cmd = nil
}

func (s *server) addr() string { return "127.0.0.1:" + strconv.Itoa(s.port) }

// client returns a client of the server, closed when the test ends.
func (s *server) client(opts ...func(*redis.Options)) *redis.Client {
	o := &redis.Options{Addr: s.addr(), ContextTimeoutEnabled: true, MaxRetries: -1}
	for _, f := range opts {
		f(o)
	}
	c := redis.NewClient(o)
	s.t.Cleanup(func() { c.Close() })
	if err := c.Ping(context.Background()).Err(); err != nil {
		s.t.Fatal(err)
	}
	return c
}
