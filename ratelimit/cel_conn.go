package ratelimit

import (
	"context"
	"net"
	"sync/atomic"
	"time"
)

// connInfo is what ConnContext records about a connection.
type connInfo struct {
	start time.Time
	count *countingConn // nil unless the connection came from Listener
}

type connKey struct{}

// ConnContext records, for the http.Server field of the same name, when a
// connection was accepted (conn.ts.start) and, for a connection accepted
// through [Listener], where its byte counts are kept (conn.bytes_in and
// conn.bytes_out):
//
//	srv := &http.Server{Handler: policy.Handler(mux), ConnContext: ratelimit.ConnContext}
//	srv.Serve(ratelimit.Listener(ln))
//
// Without it those three variables fail to evaluate. The start time is
// read from time.Now, not from [WithClock].
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	info := &connInfo{start: time.Now()}
	for c != nil && info.count == nil {
		if cc, ok := c.(*countingConn); ok {
			info.count = cc
			break
		}
		inner, ok := c.(interface{ NetConn() net.Conn }) // *tls.Conn
		if !ok {
			break
		}
		c = inner.NetConn()
	}
	return context.WithValue(ctx, connKey{}, info)
}

// Listener returns ln with every connection it accepts counting the bytes
// read from and written to it, for conn.bytes_in and conn.bytes_out; see
// [ConnContext]. Wrap the plain listener, before any TLS: the counts are
// bytes on the wire.
func Listener(ln net.Listener) net.Listener { return countingListener{ln} }

type countingListener struct{ net.Listener }

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c}, nil
}

type countingConn struct {
	net.Conn
	in, out atomic.Int64
}

func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.in.Add(int64(n))
	return n, err
}

func (c *countingConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.out.Add(int64(n))
	return n, err
}
