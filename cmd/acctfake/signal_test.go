//go:build unix

package main

import (
	"bufio"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/acctapi/acctapi/internal/apitest"
)

// process is the program running as a subprocess: this test binary,
// which runs main when ACCTFAKE_RUN_MAIN is set (see TestMain).
type process struct {
	program
	cmd      *exec.Cmd
	shutdown chan struct{} // closed when it says it is shutting down
	done     chan struct{}
	code     int // the exit status, once done is closed
}

// startProcess starts the program with args on a free port. With
// ignoreSIGINT it starts it as a background job of a non-interactive shell
// does: with SIGINT ignored.
func startProcess(t *testing.T, ignoreSIGINT bool, args ...string) *process {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the program as a subprocess")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The program lives as long as the test: a hang is go test -timeout's
	// to report, and no deadline here asserts anything about speed.
	ctx := t.Context()
	var cmd *exec.Cmd
	if ignoreSIGINT {
		sh, err := exec.LookPath("sh")
		if err != nil {
			t.Skip("no sh to start the program with SIGINT ignored")
		}
		// An ignored signal stays ignored across exec.
		cmd = exec.CommandContext(ctx, sh, "-c", `trap "" INT; exec "$0"`, self)
	} else {
		cmd = exec.CommandContext(ctx, self)
	}
	cmd.Env = append(os.Environ(), "ACCTFAKE_RUN_MAIN=1",
		"ACCTFAKE_ARGS="+strings.Join(append(append([]string{"-addr", "127.0.0.1:0"}, testTimeouts...), args...), " "))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &process{cmd: cmd, shutdown: make(chan struct{}), done: make(chan struct{})}
	go func() {
		sc := bufio.NewScanner(stderr)
		said := false
		for sc.Scan() {
			t.Logf("acctfake: %s", sc.Text())
			if !said && strings.Contains(sc.Text(), "shutting down") {
				said = true
				close(p.shutdown)
			}
		}
	}()
	p.program = readStart(t, stdout)
	go func() {
		err := cmd.Wait()
		var ee *exec.ExitError
		switch {
		case err == nil:
		case errors.As(err, &ee):
			p.code = ee.ExitCode()
		default:
			p.code = -1
		}
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.done
	})
	return p
}

// signal sends sig to the program.
func (p *process) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
}

// exitStatus waits for the program to end and returns its exit status.
func (p *process) exitStatus(t *testing.T) int {
	t.Helper()
	select {
	case <-p.done:
	case <-apitest.BeforeTimeout(t):
		t.Fatal("the program has not exited")
	}
	if p.code == -1 || p.cmd.ProcessState.ExitCode() == -1 {
		t.Fatalf("the program did not exit by itself: %v", p.cmd.ProcessState)
	}
	return p.code
}

// awaitShutdown waits until the program says it is shutting down.
func (p *process) awaitShutdown(t *testing.T) {
	t.Helper()
	select {
	case <-p.shutdown:
		return
	case <-p.done:
	case <-apitest.BeforeTimeout(t):
	}
	t.Fatal("the program never said it was shutting down")
}

// startRequest sends the headers of a POST /service_users with
// "Expect: 100-continue" and waits for the 100 Continue: from then on the
// request is in flight, its handler waiting for the body.
func (p *process) startRequest(t *testing.T, body string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(p.base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	head := "POST /service_users HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + p.key +
		"\r\nService-Version: 2\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: " +
		strconv.Itoa(len(body)) + "\r\n\r\n"
	if _, err := io.WriteString(conn, head); err != nil {
		t.Fatal(err)
	}
	// Exactly the 100 Continue's bytes, so that nothing of the answer is
	// read here.
	line, err := bufio.NewReader(io.LimitReader(conn, int64(len("HTTP/1.1 100 Continue\r\n\r\n")))).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "HTTP/1.1 100") {
		t.Fatalf("the request's headers got %q (%v), want 100 Continue", line, err)
	}
	return conn
}

// readResponse reads an answer from conn: its status line and body.
func readResponse(t *testing.T, conn net.Conn) (string, string) {
	t.Helper()
	b, _ := io.ReadAll(conn)
	head, body, _ := strings.Cut(string(b), "\r\n\r\n")
	status, _, _ := strings.Cut(head, "\r\n")
	return status, body
}

// TestSignalStops checks that SIGINT and SIGTERM stop an idle program with
// exit status 0, also when it was started with SIGINT ignored.
func TestSignalStops(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		ignore bool
		sig    syscall.Signal
	}{
		{"SIGTERM", false, syscall.SIGTERM},
		{"SIGINT", false, syscall.SIGINT},
		{"SIGINT, started with SIGINT ignored", true, syscall.SIGINT},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := startProcess(t, tt.ignore)
			p.signal(t, tt.sig)
			if code := p.exitStatus(t); code != 0 {
				t.Errorf("exit status %d after %v, want 0", code, tt.sig)
			}
		})
	}
}

// TestInFlightRequestFinishesInGrace checks that a request in flight when
// the signal comes is served to its end within the grace period, and the
// program then exits 0.
func TestInFlightRequestFinishesInGrace(t *testing.T) {
	t.Parallel()
	p := startProcess(t, false, "-grace", "1h")
	body := `{"name":"late"}`
	conn := p.startRequest(t, body)
	p.signal(t, syscall.SIGTERM)
	p.awaitShutdown(t)
	if _, err := io.WriteString(conn, body); err != nil {
		t.Fatal(err)
	}
	if status, got := readResponse(t, conn); status != "HTTP/1.1 201 Created" || !strings.Contains(got, `"name":"late"`) {
		t.Errorf("answer after the signal: %q %s, want 201", status, got)
	}
	if code := p.exitStatus(t); code != 0 {
		t.Errorf("exit status %d, want 0", code)
	}
}

// TestInFlightRequestCancelledAfterGrace checks that a request still
// running when the grace period ends is cancelled through its context (a
// latency fault of an hour stops waiting) and answered 503 in the
// contract's body, and that the program exits 0.
func TestInFlightRequestCancelledAfterGrace(t *testing.T) {
	t.Parallel()
	p := startProcess(t, false, "-grace", "1s") // the cancelled request then has cancelledGrace to answer
	if r := do(t, "POST", p.base+"/_acctfake/faults", p.admin, `{"method":"POST","path":"/service_users","latency":"1h"}`); r.status != 201 {
		t.Fatalf("adding the latency fault: %d %s", r.status, r.body)
	}
	body := `{"name":"slow"}`
	conn := p.startRequest(t, body)
	if _, err := io.WriteString(conn, body); err != nil {
		t.Fatal(err)
	}
	p.signal(t, syscall.SIGTERM)
	status, got := readResponse(t, conn)
	if status != "HTTP/1.1 503 Service Unavailable" || !strings.Contains(got, `"error_code":"ERR_ACCTAPI_UNAVAILABLE"`) || !strings.Contains(got, "shutting down") {
		t.Errorf("answer to the cancelled request: %q %s, want 503 in the contract's body", status, got)
	}
	if code := p.exitStatus(t); code != 0 {
		t.Errorf("exit status %d, want 0", code)
	}
}

// TestSecondSignalEndsAtOnce checks that a second SIGINT or SIGTERM during
// the grace period ends the program at once with 128 plus the signal's
// number, also when it was started with SIGINT ignored (as a background
// job of a non-interactive shell is), where the old program lost the
// second signal.
func TestSecondSignalEndsAtOnce(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name          string
		ignore        bool
		first, second syscall.Signal
		want          int
	}{
		{"SIGTERM twice", false, syscall.SIGTERM, syscall.SIGTERM, 143},
		{"SIGINT twice", false, syscall.SIGINT, syscall.SIGINT, 130},
		{"SIGINT then SIGTERM", false, syscall.SIGINT, syscall.SIGTERM, 143},
		{"SIGINT twice, started with SIGINT ignored", true, syscall.SIGINT, syscall.SIGINT, 130},
		{"SIGTERM then SIGINT, started with SIGINT ignored", true, syscall.SIGTERM, syscall.SIGINT, 130},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := startProcess(t, tt.ignore, "-grace", "1h")
			p.startRequest(t, `{"name":"never"}`) // in flight until its body comes, which it never does
			p.signal(t, tt.first)
			p.awaitShutdown(t)
			p.signal(t, tt.second)
			if code := p.exitStatus(t); code != tt.want {
				t.Errorf("exit status %d, want %d", code, tt.want)
			}
		})
	}
}
