package events

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
)

// serverOptions tunes newServer.
type serverOptions struct {
	hub          func(h *Hub)  // adjusts the hub before it serves
	writeTimeout time.Duration // the server's WriteTimeout; 5 s when zero
	listener     net.Listener  // 127.0.0.1:0 when nil
	logger       *slog.Logger  // warnings to stderr when nil
	authorise    Authorise     // Serve's re-check; none when nil
}

// newServer starts a real Fiber app serving hub.Serve at /api/events over
// TCP and returns the hub and the stream's URL. Cleanup closes the hub and
// shuts the server down, failing the test if shutdown hangs.
func newServer(t *testing.T, src Source, o serverOptions) (*Hub, string, *fiber.App) {
	t.Helper()
	logger := o.logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	h := NewHub(src, logger)
	if o.hub != nil {
		o.hub(h)
	}
	wt := o.writeTimeout
	if wt == 0 {
		wt = 5 * time.Second
	}
	app := fiber.New(fiber.Config{
		ReadTimeout:           5 * time.Second,
		WriteTimeout:          wt,
		IdleTimeout:           5 * time.Second,
		DisableStartupMessage: true,
		ErrorHandler:          errorHandler,
	})
	app.Get("/api/events", func(c *fiber.Ctx) error { return h.Serve(c, o.authorise) })
	ln := o.listener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			t.Fatalf("listen: %v", err)
		}
	}
	go func() { _ = app.Listener(ln) }()
	t.Cleanup(func() {
		h.Close()
		if err := app.ShutdownWithTimeout(5 * time.Second); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return h, "http://" + ln.Addr().String() + "/api/events", app
}

// errorHandler answers coded errors like web.ErrorHandler does for the
// codes this package returns.
func errorHandler(c *fiber.Ctx, err error) error {
	status, code := http.StatusInternalServerError, db.EInternal
	var e *db.Error
	var fe *fiber.Error
	switch {
	case errors.As(err, &e):
		code = e.Code
		switch e.Code {
		case db.EBadRequest:
			status = http.StatusBadRequest
		case db.EUnavailable:
			status = http.StatusServiceUnavailable
		}
	case errors.As(err, &fe):
		status = fe.Code
	}
	return c.Status(status).JSON(fiber.Map{"code": code, "message": err.Error(), "status": status})
}

// frame is one parsed Server-Sent Events block: an event or a comment.
type frame struct {
	ID, Event, Data string
	Comment         string
	Retry           string
}

// sseStream reads a text/event-stream response on its own goroutine.
type sseStream struct {
	resp   *http.Response
	frames chan frame
	err    error // the read error that ended the stream; set before frames closes
}

// openStream GETs url with the given headers and checks the stream opened.
func openStream(t *testing.T, url string, header map[string]string) *sseStream {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	// A transport of its own: nothing shared between streams, no pooling.
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("GET %s: status %d, body %s", url, resp.StatusCode, b)
	}
	for k, want := range map[string]string{
		"Content-Type":      "text/event-stream",
		"Cache-Control":     "private, no-store",
		"X-Accel-Buffering": "no",
	} {
		if got := resp.Header.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	s := &sseStream{resp: resp, frames: make(chan frame, 8192)}
	go s.read()
	t.Cleanup(s.close)
	return s
}

// close drops the connection, as a browser tab that goes away.
func (s *sseStream) close() { s.resp.Body.Close() }

func (s *sseStream) read() {
	defer close(s.frames)
	br := bufio.NewReader(s.resp.Body)
	var f frame
	var any bool
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			s.err = err
			return
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "":
			if any {
				s.frames <- f
			}
			f, any = frame{}, false
		case strings.HasPrefix(line, ":"):
			f.Comment, any = strings.TrimSpace(line[1:]), true
		default:
			field, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			switch field {
			case "id":
				f.ID = value
			case "retry":
				f.Retry = value
			case "event":
				f.Event = value
			case "data":
				if f.Data != "" {
					f.Data += "\n"
				}
				f.Data += value
			}
			any = true
		}
	}
}

// next returns the next frame, failing the test after timeout or at the
// end of the stream.
func (s *sseStream) next(t *testing.T, timeout time.Duration) frame {
	t.Helper()
	select {
	case f, ok := <-s.frames:
		if !ok {
			t.Fatalf("stream ended: %v", s.err)
		}
		return f
	case <-time.After(timeout):
		t.Fatalf("no frame within %v", timeout)
	}
	return frame{}
}

// nextEvent is next, skipping comments.
func (s *sseStream) nextEvent(t *testing.T, timeout time.Duration) frame {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		f := s.next(t, time.Until(deadline))
		if f.Comment == "" {
			return f
		}
	}
}

// waitEnd waits for the server to end the stream.
func (s *sseStream) waitEnd(t *testing.T, timeout time.Duration) {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case _, ok := <-s.frames:
			if !ok {
				return
			}
		case <-deadline:
			t.Fatalf("stream still open after %v", timeout)
		}
	}
}

// wantShutdownEnd reads the stream to its end and checks that the server
// ended it cleanly after a whole last frame, the shutdown frame: the body
// ends at a frame boundary (a frame cut short would be lost by the parser
// and end in io.ErrUnexpectedEOF, or end with another frame).
func (s *sseStream) wantShutdownEnd(t *testing.T, timeout time.Duration) {
	t.Helper()
	var last frame
	deadline := time.After(timeout)
	for {
		select {
		case f, ok := <-s.frames:
			if ok {
				last = f
				continue
			}
			if s.err != io.EOF {
				t.Errorf("stream ended with %v, want a clean end (io.EOF)", s.err)
			}
			if last.Retry != "1000" || !strings.HasPrefix(last.Comment, "shutting down") {
				t.Errorf("last frame %+v, want the shutdown frame (a comment and retry: 1000)", last)
			}
			return
		case <-deadline:
			t.Fatalf("stream still open after %v", timeout)
		}
	}
}

// wantEvents reads len(want) events and checks each against the outbox row.
func (s *sseStream) wantEvents(t *testing.T, want []db.Event, timeout time.Duration) {
	t.Helper()
	for i, ev := range want {
		f := s.nextEvent(t, timeout)
		if f.ID != fmt.Sprint(ev.ID) || f.Event != ev.Type {
			t.Fatalf("event %d = id %s %s, want id %d %s", i, f.ID, f.Event, ev.ID, ev.Type)
		}
		if f.Data != string(ev.Data) {
			t.Fatalf("event %d data = %s, want %s", i, f.Data, ev.Data)
		}
	}
}

// eventsAfter reads the outbox after id, failing the test on error.
func eventsAfter(t *testing.T, s Source, after int64) []db.Event {
	t.Helper()
	evs, err := s.EventsAfter(context.Background(), after, 100000)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// lastID is the outbox's newest id.
func lastID(t *testing.T, s Source) int64 {
	t.Helper()
	id, err := s.LastEventID(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func mustCategory(t *testing.T, s *db.Store, name string) *db.Category {
	t.Helper()
	c, err := s.CreateCategory(context.Background(), db.NewCategory{Name: &name})
	if err != nil {
		t.Fatalf("create category: %v", err)
	}
	return c
}

func mustPet(t *testing.T, s *db.Store, catID int64, name string) *db.Pet {
	t.Helper()
	p, err := s.CreatePet(context.Background(), db.NewPet{Name: &name, CategoryID: &catID})
	if err != nil {
		t.Fatalf("create pet: %v", err)
	}
	return p
}

func mustSetStock(t *testing.T, s *db.Store, petID, qty int64) {
	t.Helper()
	if _, err := s.SetInventory(context.Background(), petID, db.InventoryUpdate{Quantity: &qty}); err != nil {
		t.Fatalf("set inventory: %v", err)
	}
}

// jsonEqual reports whether two JSON texts hold the same value.
func jsonEqual(t *testing.T, a, b string) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal([]byte(a), &x); err != nil {
		t.Fatalf("bad JSON %s: %v", a, err)
	}
	if err := json.Unmarshal([]byte(b), &y); err != nil {
		t.Fatalf("bad JSON %s: %v", b, err)
	}
	return reflect.DeepEqual(x, y)
}

// logSignals is a slog handler (info and up, to stderr) that closes a
// channel the first time each watched message is logged.
type logSignals struct {
	slog.Handler
	mu    *sync.Mutex
	chans map[string]chan struct{}
}

func newLogSignals(msgs ...string) (*slog.Logger, map[string]chan struct{}) {
	ls := logSignals{
		Handler: slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}),
		mu:      new(sync.Mutex),
		chans:   make(map[string]chan struct{}),
	}
	for _, m := range msgs {
		ls.chans[m] = make(chan struct{})
	}
	return slog.New(ls), ls.chans
}

func (l logSignals) Handle(ctx context.Context, r slog.Record) error {
	l.mu.Lock()
	if ch, ok := l.chans[r.Message]; ok {
		select {
		case <-ch:
		default:
			close(ch)
		}
	}
	l.mu.Unlock()
	return l.Handler.Handle(ctx, r)
}

// waitSignal waits for a watched log message.
func waitSignal(t *testing.T, ch <-chan struct{}, what string, timeout time.Duration) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(timeout):
		t.Fatalf("no %s within %v", what, timeout)
	}
}

func itoa(n int64) string { return fmt.Sprint(n) }
