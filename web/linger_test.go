package web

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
)

// listenLingering is a lingering listener on a loopback port, closed when
// the test ends.
func listenLingering(t *testing.T) *LingeringListener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := Lingering(ln)
	t.Cleanup(func() { _ = l.Close() })
	return l
}

// dial connects to l and accepts the connection: the client's end and the
// server's.
func dial(t *testing.T, l *LingeringListener) (client, server net.Conn) {
	t.Helper()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			t.Error(err)
		}
		accepted <- c
	}()
	client, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	server = <-accepted
	if server == nil {
		t.FailNow()
	}
	return client, server
}

// trickle writes a byte to c every 20 ms until a write fails, and sends
// the failure (nil never).
func trickle(c net.Conn) <-chan error {
	failed := make(chan error, 1)
	go func() {
		for {
			if _, err := c.Write([]byte{'x'}); err != nil {
				failed <- err
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	return failed
}

// TestLingeringCloseKeepsTheAnswer: a server that answers after reading a
// little of what the client sends and closes (a body refused from its
// headers) gets its answer to the client every time, followed by a clean
// end (FIN), while the client is still writing its megabyte. With a plain
// close the unread bytes make the kernel reset the connection, and the
// client's read fails now and then ("connection reset by peer").
func TestLingeringCloseKeepsTheAnswer(t *testing.T) {
	l := listenLingering(t)
	const answer = "HTTP/1.1 413 Request Entity Too Large\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				_, _ = io.ReadFull(c, make([]byte, 64))
				_, _ = io.WriteString(c, answer)
				_ = c.Close()
			}()
		}
	}()
	body := make([]byte, 1<<20)
	failures := 0
	const tries = 300
	for range tries {
		c, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		go func() { _, _ = c.Write(body) }()
		got, err := io.ReadAll(c)
		_ = c.Close()
		if err != nil || string(got) != answer {
			failures++
			if failures <= 3 {
				t.Errorf("read %q, %v; want the answer and the end of the connection", got, err)
			}
		}
	}
	if failures > 0 {
		t.Errorf("%d of %d tries lost the answer", failures, tries)
	}
}

// TestLingeringCloseIsBounded: the client sees the end of the connection
// at once, and one that goes on trickling bytes keeps the socket open no
// longer than lingerTime: past it the server closes, and the client's next
// write fails.
func TestLingeringCloseIsBounded(t *testing.T) {
	l := listenLingering(t)
	client, server := dial(t, l)
	failed := trickle(client)
	time.Sleep(50 * time.Millisecond) // some bytes wait unread

	closed := time.Now()
	if err := server.Close(); err != nil {
		t.Fatal(err)
	}
	_ = client.SetReadDeadline(time.Now().Add(time.Second))
	if n, err := client.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Fatalf("client read %d, %v; want the end of the connection (FIN) at once", n, err)
	}
	if waited := time.Since(closed); waited > lingerTime/2 {
		t.Errorf("the client saw the end after %s, want at once, not at the linger's end", waited)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := l.Wait(ctx); err != nil {
		t.Fatalf("still lingering 1 s after the close: %v", err)
	}
	lingered := time.Since(closed)
	if lingered < lingerTime/2 {
		t.Errorf("lingered %s for a client still sending, want about %s", lingered, lingerTime)
	}
	select {
	case err := <-failed:
		t.Logf("lingered %s; the trickler's write then failed: %v", lingered.Round(time.Millisecond), err)
	case <-time.After(time.Second):
		t.Errorf("the trickler could still write 1 s after the linger ended")
	}
}

// TestLingeringCloseByteBound: a client sending faster than any answer
// could be waiting ends the linger at lingerBytes, long before its time.
func TestLingeringCloseByteBound(t *testing.T) {
	l := listenLingering(t)
	l.time, l.bytes = 10*time.Second, 256<<10
	client, server := dial(t, l)
	go func() {
		buf := make([]byte, 64<<10)
		for {
			if _, err := client.Write(buf); err != nil {
				return
			}
		}
	}()
	_ = server.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := l.Wait(ctx); err != nil {
		t.Fatalf("a flood kept the connection lingering past 2 s (its bytes bound is 256 KiB): %v", err)
	}
}

// TestLingeringIsBoundedInNumber: past the bound on connections lingering
// at once, a connection closes at once.
func TestLingeringIsBoundedInNumber(t *testing.T) {
	l := listenLingering(t)
	l.max = 1
	c1, s1 := dial(t, l)
	c2, s2 := dial(t, l)
	trickle(c1)
	failed := trickle(c2)
	time.Sleep(50 * time.Millisecond)
	_ = s1.Close()
	_ = s2.Close()
	if n := l.lingering.Load(); n != 1 {
		t.Errorf("%d connections lingering, want 1", n)
	}
	select {
	case <-failed: // reset by the plain close
	case <-time.After(lingerTime / 2):
		t.Errorf("the connection past the bound lingered")
	}
}

// TestLingeringConnClosedToItsUser: once closed, the connection is closed
// to whoever holds it: a Read blocked at the close (fasthttp waiting for
// the next request on an idle connection its shutdown closes) returns by
// the linger's end and gets none of what the client sends meanwhile (never
// taken for a request), a write fails, and a deadline set afterwards
// (fasthttp sets its ReadTimeout on a connection it reads) does not
// stretch the linger.
func TestLingeringConnClosedToItsUser(t *testing.T) {
	l := listenLingering(t)
	client, server := dial(t, l)
	read := make(chan error, 1)
	go func() {
		_, err := server.Read(make([]byte, 64))
		read <- err
	}()
	time.Sleep(20 * time.Millisecond) // blocked in Read
	closed := time.Now()
	_ = server.Close()
	_, _ = io.WriteString(client, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	select {
	case err := <-read:
		if !errors.Is(err, net.ErrClosed) {
			t.Errorf("blocked read: %v, want net.ErrClosed", err)
		}
		if waited := time.Since(closed); waited > time.Second {
			t.Errorf("the blocked read returned %s after the close, want by the linger's end", waited)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("a read blocked at the close did not return")
	}
	if _, err := server.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
		t.Errorf("write after close: %v, want net.ErrClosed", err)
	}
	if err := server.SetReadDeadline(time.Now().Add(time.Minute)); err != nil {
		t.Errorf("deadline after close: %v, want it ignored", err)
	}
	trickle(client)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := l.Wait(ctx); err != nil {
		t.Errorf("a deadline set after the close stretched the linger past 1 s: %v", err)
	}
}

// TestLingeringShutdown: the app (NewApp) serves on a lingering listener
// and shuts down within the linger's bound with an idle keep-alive
// connection open whose client neither sends nor closes: the worker
// waiting for its next request stops at the linger's end, and fasthttp's
// ReadTimeout, set on it again, does not keep it longer.
func TestLingeringShutdown(t *testing.T) {
	app, routes := NewApp(AppOptions{Logger: slog.New(slog.DiscardHandler)})
	routes.Add(Route{Method: "GET", Path: "/", Handlers: []fiber.Handler{func(c *fiber.Ctx) error { return c.SendString("ok") }}})
	l := listenLingering(t)
	served := make(chan error, 1)
	go func() { served <- app.Listener(l) }()

	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	_, _ = io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	br := bufio.NewReader(c)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 || strings.TrimSpace(string(b)) != "ok" {
		t.Fatalf("%d %q", res.StatusCode, b)
	}

	began := time.Now()
	if err := app.ShutdownWithTimeout(5 * time.Second); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := l.Wait(ctx); err != nil {
		t.Errorf("still lingering 2 s after the shutdown began: %v", err)
	}
	// The linger's 500 ms and fasthttp's 100 ms polling of its workers,
	// with room for a busy machine: far inside the server's 10 s grace.
	if took := time.Since(began); took > 2*time.Second {
		t.Errorf("shutdown and linger took %s, want within 2 s", took)
	}
	if err := <-served; err != nil {
		t.Errorf("serve: %v", err)
	}
	if _, err := br.ReadByte(); err != io.EOF {
		t.Errorf("idle client after the shutdown: %v, want the end of the connection", err)
	}
}
