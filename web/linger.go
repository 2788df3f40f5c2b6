package web

import (
	"context"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// A server that closes a connection while the client is still sending
// (a body refused from its headers, SPEC §17: the connection is closed
// instead of reading it) loses its own answer now and then: closing a
// socket with unread bytes makes the kernel send RST instead of FIN, and a
// reset can throw away the answer before the client has read it, or fail
// the client's next write (EPIPE, ECONNRESET) before it looks for one.
// RFC 9112 §9.6 asks for a lingering close instead, which net/http does
// (closeWriteAndWait) and fasthttp does not: half-close first, so the
// answer is followed by FIN, then read and drop what the client still
// sends, for a short while, and only then close.

// lingerTime is how long a closed connection goes on being read after its
// FIN, from its Close: net/http waits as long (rstAvoidanceDelay). The
// client has the answer and the FIN at once; this only keeps its last
// bytes from turning into a reset while it reads them. A client that
// trickles on is cut off at the end of it.
const lingerTime = 500 * time.Millisecond

// lingerBytes is the most a closed connection reads before it closes
// anyway: about what a client's kernel may have queued to send (its send
// buffer and the bytes in flight) when the answer reaches it. A client
// sending faster than that is not waiting for an answer.
const lingerBytes = 4 << 20

// maxLingering bounds the connections lingering at once, each with its
// socket and one goroutine for at most lingerTime; past it a connection
// closes at once, as without the linger. fasthttp's Concurrency no longer
// counts a connection it has closed.
const maxLingering = 1024

// LingeringListener is a listener whose connections close with a lingering
// close (Lingering). It serves the app: fasthttp closes a connection once
// it has written its last answer, and the close returns at once, the
// linger running in a goroutine of its own, so no worker waits for it.
type LingeringListener struct {
	net.Listener
	lingering atomic.Int64
	// The bounds, the package's constants except in tests.
	time  time.Duration
	bytes int64
	max   int64
}

// Lingering wraps ln, a TCP listener (or any whose connections have
// CloseWrite), for the app to serve on: every listener the product serves
// the app on goes through it. Wrap the TCP listener under TLS, not the
// TLS listener (fasthttp finds TLS by the connection's type, and a close
// then sends close_notify before the FIN).
func Lingering(ln net.Listener) *LingeringListener {
	return &LingeringListener{Listener: ln, time: lingerTime, bytes: lingerBytes, max: maxLingering}
}

// Accept returns the next connection, with a lingering Close when it can
// half-close.
func (l *LingeringListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if hc, ok := c.(halfCloser); ok {
		return &lingeringConn{halfCloser: hc, l: l}, nil
	}
	return c, nil
}

// Wait returns once no closed connection is lingering any more, or when
// ctx is done. A server shutting down calls it after the app's shutdown,
// so that the last answers are not cut off by the process ending; it
// takes at most lingerTime after the last close.
func (l *LingeringListener) Wait(ctx context.Context) error {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for l.lingering.Load() > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
	return nil
}

// halfCloser is a connection that can close its writing side alone:
// *net.TCPConn, *net.UnixConn.
type halfCloser interface {
	net.Conn
	CloseWrite() error
}

// lingeringConn is a connection whose Close half-closes it and leaves the
// rest to linger. Once closed it is closed to its user too: reads and
// writes fail and deadlines are ignored, so whatever arrives during the
// linger is never taken for a request, and nothing moves the linger's own
// deadline (the mutex orders a deadline set as the connection closes
// before the linger's).
type lingeringConn struct {
	halfCloser
	l      *LingeringListener
	mu     sync.Mutex
	closed bool
}

func (c *lingeringConn) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// Read reads until the connection is closed; what a Read blocked at the
// close brings in is dropped.
func (c *lingeringConn) Read(p []byte) (int, error) {
	if c.isClosed() {
		return 0, c.closedError("read")
	}
	n, err := c.halfCloser.Read(p)
	if c.isClosed() {
		return 0, c.closedError("read")
	}
	return n, err
}

func (c *lingeringConn) Write(p []byte) (int, error) {
	if c.isClosed() {
		return 0, c.closedError("write")
	}
	return c.halfCloser.Write(p)
}

func (c *lingeringConn) SetDeadline(t time.Time) error {
	return c.setDeadline(c.halfCloser.SetDeadline, t)
}

func (c *lingeringConn) SetReadDeadline(t time.Time) error {
	return c.setDeadline(c.halfCloser.SetReadDeadline, t)
}

func (c *lingeringConn) SetWriteDeadline(t time.Time) error {
	return c.setDeadline(c.halfCloser.SetWriteDeadline, t)
}

// setDeadline sets a deadline of the open connection; on a closed one it
// does nothing, successfully (fasthttp panics when setting a deadline
// fails).
func (c *lingeringConn) setDeadline(set func(time.Time) error, t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	return set(t)
}

// Close sends FIN after whatever was written and returns; a goroutine
// reads and drops what the client still sends for at most lingerTime and
// lingerBytes, then closes the socket. Past maxLingering, or when the
// half-close fails, it closes at once. Closing again does nothing.
func (c *lingeringConn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	if c.l.lingering.Add(1) > c.l.max {
		c.l.lingering.Add(-1)
		return c.halfCloser.Close()
	}
	if err := c.halfCloser.CloseWrite(); err != nil {
		c.l.lingering.Add(-1)
		return c.halfCloser.Close()
	}
	// The deadline also ends a Read blocked in the connection's owner
	// (fasthttp waiting for the next request on an idle connection that
	// its shutdown closes), if the client does not end it first by
	// closing on the FIN.
	_ = c.halfCloser.SetReadDeadline(time.Now().Add(c.l.time))
	go c.linger()
	return nil
}

// linger reads and drops until the client closes its side, lingerTime
// passes or lingerBytes have come, then closes.
func (c *lingeringConn) linger() {
	defer c.l.lingering.Add(-1)
	_, _ = io.Copy(io.Discard, io.LimitReader(c.halfCloser, c.l.bytes))
	_ = c.halfCloser.Close()
}

// closedError is what a closed *net.TCPConn answers.
func (c *lingeringConn) closedError(op string) error {
	return &net.OpError{Op: op, Net: c.LocalAddr().Network(), Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: net.ErrClosed}
}
