package redisstore

import (
	"context"
	"os/exec"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/acctapi/acctapi/ratelimit/redisstore/internal/redistest"
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
	s := &server{t: t, bin: redistest.Binary(t), dir: t.TempDir()}
	cmd, port, err := redistest.LaunchFree(s.bin, s.dir)
	if err != nil {
		t.Fatal(err)
	}
	s.cmd, s.port = cmd, port
	t.Cleanup(s.stop)
	return s
}

// start runs the server and returns once it accepts connections.
func (s *server) start() {
	s.t.Helper()
	cmd, err := redistest.Launch(s.bin, s.dir, s.port)
	if err != nil {
		s.t.Fatal(err)
	}
	s.cmd = cmd
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
