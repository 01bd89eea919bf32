// Command acctfake serves the fake Account Management API on a TCP address,
// for tests written in any language.
//
// Usage:
//
//	acctfake [-addr 127.0.0.1:8080] [-api-key KEY] [-fixtures FILE]
//
// On start it prints "listening on http://<addr>" and "api key: <key>" on
// standard output. Send requests with "Authorization: Bearer <key>" and
// "Service-Version: 2". It exits cleanly on SIGINT or SIGTERM.
//
// -fixtures names a JSON file of resources to create first: an array of
// {"path": "/service_users", "body": {...}}, each created as the API would
// (see fake.Server.LoadFixtures).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/acctapi/acctapi/fake"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop() // the first signal starts a clean shutdown; a second one ends the process at once
	}()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// Server limits: slow or oversized clients are cut off.
const (
	writeTimeout    = 30 * time.Second
	idleTimeout     = 2 * time.Minute
	maxHeaderBytes  = 64 << 10
	shutdownTimeout = 10 * time.Second
)

// The read timeouts are variables only so that a test can shorten them
// before calling run; nothing else changes them.
var (
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 30 * time.Second
)

// run serves until ctx ends and returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("acctfake", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8080", "TCP address to listen on")
	apiKey := fs.String("api-key", "", "API key to accept (default: a fresh random key)")
	fixtures := fs.String("fixtures", "", "JSON file of resources to create on start")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "acctfake: unexpected arguments %q\n", fs.Args())
		return 2
	}
	var acct fake.Account
	if *apiKey != "" {
		acct.APIKeys = []string{*apiKey}
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(stderr, "acctfake: %v\n", err)
		return 1
	}
	srv, err := fake.New(fake.WithoutListener(), fake.WithAccount(acct))
	if err != nil {
		fmt.Fprintf(stderr, "acctfake: %v\n", err)
		return 1
	}
	defer srv.Close()
	if *fixtures != "" {
		f, err := os.Open(*fixtures)
		if err == nil {
			err = srv.LoadFixtures(f)
			f.Close()
		}
		if err != nil {
			fmt.Fprintf(stderr, "acctfake: %v\n", err)
			return 1
		}
	}
	hs := &http.Server{
		Handler:           srv.Handler(),
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
	}
	fmt.Fprintf(stdout, "listening on http://%s\n", ln.Addr())
	fmt.Fprintf(stdout, "api key: %s\n", srv.APIKey())
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		fmt.Fprintf(stderr, "acctfake: %v\n", err)
		return 1
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(stderr, "acctfake: shutdown: %v\n", err)
		return 1
	}
	return 0
}
