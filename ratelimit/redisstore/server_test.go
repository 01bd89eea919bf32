package redisstore

import (
	"bufio"
	"context"
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
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	s := &server{t: t, bin: bin, dir: t.TempDir(), port: port}
	s.start()
	t.Cleanup(s.stop)
	return s
}

// start runs the server and returns once it accepts connections (it says
// so on its standard output).
func (s *server) start() {
	s.t.Helper()
	cmd := exec.Command(s.bin, "--port", strconv.Itoa(s.port), "--bind", "127.0.0.1", "--dir", s.dir,
		"--save", "", "--appendonly", "no", "--daemonize", "no", "--loglevel", "notice")
	out, err := cmd.StdoutPipe()
	if err != nil {
		s.t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		s.t.Fatal(err)
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
			s.cmd = cmd
			return
		}
	}
	_ = cmd.Wait()
	s.t.Fatalf("redis-server did not start:\n%s", strings.Join(log, "\n"))
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
