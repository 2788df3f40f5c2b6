//go:build linux

package events

import (
	"context"
	"fmt"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"petstore/db/dbtest"
)

// sockBuf returns a Control function setting a socket buffer option, so a
// client that does not read fills the connection after a few KiB instead
// of the megabytes loopback TCP would otherwise buffer.
func sockBuf(opt, size int) func(network, address string, c syscall.RawConn) error {
	return func(network, address string, c syscall.RawConn) error {
		var serr error
		if err := c.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, opt, size)
		}); err != nil {
			return err
		}
		return serr
	}
}

// TestSlowClientDoesNotBlockWriters opens a stream that never reads while
// 500 changes are committed: the writers finish quickly, the hub drops the
// stuck stream's live feed, and a normal client still gets every event.
func TestSlowClientDoesNotBlockWriters(t *testing.T) {
	s := dbtest.SQLite(t)
	// Accepted connections inherit the listener's small send buffer.
	ln, err := (&net.ListenConfig{Control: sockBuf(syscall.SO_SNDBUF, 4096)}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h, u, _ := newServer(t, s, serverOptions{listener: ln, hub: func(h *Hub) {
		noPoll(h)
		h.Buffer = 16
		// A stuck write fails within Heartbeat+WriteTimeout of the last good one.
		h.Heartbeat = 300 * time.Millisecond
		h.WriteTimeout = 300 * time.Millisecond
	}})
	s.OnEvent(h.Wake)
	cat := mustCategory(t, s, "Dogs")
	from := lastID(t, s)

	slow, err := (&net.Dialer{Control: sockBuf(syscall.SO_RCVBUF, 2048)}).Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	if _, err := fmt.Fprintf(slow, "GET /api/events HTTP/1.1\r\nHost: %s\r\n\r\n", ln.Addr()); err != nil {
		t.Fatal(err)
	}
	waitSubscribers(t, h, 1)
	normal := openStream(t, u, nil)

	const writes = 500
	long := strings.Repeat("x", 80) // bigger events fill the slow connection sooner
	begin := time.Now()
	for i := range writes {
		mustPet(t, s, cat.ID, fmt.Sprintf("%s %d", long, i))
	}
	took := time.Since(begin)
	t.Logf("%d writes with a stuck stream open: %v", writes, took)
	if took > 10*time.Second {
		t.Errorf("%d writes took %v with a stuck stream open, want under 10 s", writes, took)
	}

	normal.wantEvents(t, eventsAfter(t, s, from), 5*time.Second)
	if h.lags.Load() == 0 {
		t.Errorf("the stuck stream's live feed was never dropped")
	}
	// The stuck stream's writes hit its deadline: it ends and unsubscribes,
	// while the normal one stays.
	waitSubscribers(t, h, 1)
	if f := normal.next(t, time.Second); f.Comment != "heartbeat" {
		t.Errorf("normal stream: %+v, want a heartbeat", f)
	}
}

// waitSubscribers waits until the hub has n streams.
func waitSubscribers(t *testing.T, h *Hub, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		h.mu.Lock()
		got := len(h.subs)
		h.mu.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d streams subscribed, want %d", got, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
