package events

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
)

// HeaderLastEventID is the header an EventSource sends when it reconnects.
const HeaderLastEventID = "Last-Event-ID"

// QueryLastEventID is the query parameter that stands in for the header for
// clients that cannot set headers.
const QueryLastEventID = "lastEventId"

// Authorise reports whether the client of an open stream may still read
// it: nil while it may, an error (the key was revoked, the console session
// ended) when it may not, which ends the stream. The hub calls it every
// AuthInterval with a context of its own.
type Authorise func(ctx context.Context) error

// authoriseTimeout bounds one Authorise call.
const authoriseTimeout = 5 * time.Second

// Serve is the handler of GET /api/events (authentication runs before it;
// authorised re-checks it while the stream is open: nil only in tests).
// Without Last-Event-ID (header, or the lastEventId query parameter) the
// stream starts from now; with it, every event after that id is replayed
// from the database first and the stream then continues live, with no gap
// and no duplicate. A Last-Event-ID that is not a non-negative integer is a
// bad_request before the stream starts; after Close it is unavailable.
//
// The connection closes when the stream ends (a long-lived stream has no use
// for keep-alive). Fiber's compress middleware still streams event by event,
// but costs a compressor per client: better let it skip this route.
func (h *Hub) Serve(c *fiber.Ctx, authorised Authorise) error {
	after, resume, err := lastEventID(c)
	if err != nil {
		return err
	}
	if h.isClosed() {
		return db.Errorf(db.EUnavailable, "The event stream is shutting down; reconnect shortly.")
	}
	newest, err := h.src.LastEventID(c.UserContext())
	if err != nil {
		return fmt.Errorf("open event stream: %w", err)
	}
	start := newest // from now
	if resume {
		// An id beyond the newest (a client of a reset database) would hide
		// every future event up to it: such a client resumes from now.
		start = min(after, newest)
	}
	s, behind, err := h.subscribe(c.Context().Conn(), newest)
	if err != nil {
		return db.Errorf(db.EUnavailable, "The event stream is shutting down; reconnect shortly.")
	}

	c.Set(fiber.HeaderContentType, "text/event-stream")
	c.Set(fiber.HeaderCacheControl, "private, no-store")
	c.Set("X-Accel-Buffering", "no")
	c.Context().Response.SetConnectionClose()
	c.Status(fiber.StatusOK)
	serverDone := c.Context().Done() // closed when the server shuts down
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		h.stream(w, s, start, resume || behind, serverDone, authorised)
	})
	return nil
}

// lastEventID reads the resume point, the header taking precedence.
func lastEventID(c *fiber.Ctx) (after int64, ok bool, err error) {
	name, raw := HeaderLastEventID, c.Get(HeaderLastEventID)
	if raw == "" {
		name, raw = QueryLastEventID, c.Query(QueryLastEventID)
	}
	if raw == "" {
		return 0, false, nil
	}
	id, ok := parseEventID(raw)
	if !ok {
		e := db.Errorf(db.EBadRequest, "%s must be a non-negative integer event id.", name)
		if name == QueryLastEventID {
			e.Details = []db.FieldError{{Field: name, Message: "must be a non-negative integer"}}
		}
		return 0, false, e
	}
	return id, true, nil
}

// parseEventID reads a resume point: a non-negative int64 in decimal,
// surrounding white space ignored. The API document's Last-Event-ID
// pattern states the same rule (event_id_test.go holds them together).
func parseEventID(raw string) (int64, bool) {
	id, err := strconv.ParseInt(strings.TrimSpace(raw), 10, 64)
	return id, err == nil && id >= 0
}

// stream writes events after id last until the client goes away, the hub
// closes, the server shuts down or authorised says no more. It runs on
// fasthttp's stream goroutine.
func (h *Hub) stream(w *bufio.Writer, s *subscriber, last int64, catchUp bool, serverDone <-chan struct{}, authorised Authorise) {
	defer h.unsubscribe(s)
	idle := time.NewTimer(h.heartbeat())
	defer idle.Stop()
	// A ticker of its own rather than the heartbeat: the idle timer never
	// fires on a busy stream, and the check must run on those too.
	var recheck <-chan time.Time
	if authorised != nil {
		t := time.NewTicker(h.authInterval())
		defer t.Stop()
		recheck = t.C
	}
	out := &sseWriter{w: w, conn: s.conn, hub: h, idle: idle}
	// Flushing at once sends the response headers, so the client knows the
	// stream is open before the first event.
	if err := out.comment("connected"); err != nil {
		return
	}
	var err error
	for {
		select {
		case <-h.done:
			out.shuttingDown()
			return
		case <-serverDone:
			out.shuttingDown()
			return
		default:
		}
		if catchUp {
			if last, err = h.replay(out, last); err != nil {
				return
			}
			catchUp = false
		}
		select {
		case <-h.done:
			out.shuttingDown()
			return
		case <-serverDone:
			out.shuttingDown()
			return
		case o := <-s.items:
			switch {
			case o.ev.ID <= last: // already sent by a replay
			case o.prev > last: // something before it was missed: read it all from the database
				catchUp = true
			default:
				if err := out.event(o.ev); err != nil {
					return
				}
				last = o.ev.ID
			}
		case <-s.lagged:
			h.reattach(s)
			catchUp = true
		case <-idle.C:
			if err := out.comment("heartbeat"); err != nil {
				return
			}
		case <-recheck:
			if !h.stillAuthorised(authorised) {
				return
			}
		}
	}
}

// stillAuthorised asks authorised whether the stream may go on. Any error
// ends it, a failed check included: the client reconnects and is
// authenticated afresh.
func (h *Hub) stillAuthorised(authorised Authorise) bool {
	ctx, cancel := context.WithTimeout(h.ctx, authoriseTimeout)
	defer cancel()
	err := authorised(ctx)
	if err != nil && h.ctx.Err() == nil {
		h.log.Info("events: stream no longer authorised; ending it", "err", err)
	}
	return err == nil
}

// replay writes every event after last from the database, page by page,
// and returns the id of the last one written.
func (h *Hub) replay(out *sseWriter, last int64) (int64, error) {
	for {
		evs, err := h.src.EventsAfter(h.ctx, last, h.pageSize())
		if err != nil {
			if h.ctx.Err() == nil {
				h.log.Warn("events: replay from outbox; ending the stream", "after", last, "err", err)
			}
			return last, err
		}
		for _, ev := range evs {
			if err := out.event(ev); err != nil {
				return last, err
			}
			last = ev.ID
		}
		if len(evs) < h.pageSize() || h.isClosed() {
			return last, nil
		}
	}
}

// sseWriter writes the text/event-stream format and, after every flush,
// pushes the connection's write deadline ahead and restarts the idle timer.
type sseWriter struct {
	w    *bufio.Writer
	conn net.Conn
	hub  *Hub
	idle *time.Timer
}

// event writes one event. data lines are split on newlines, as the format
// requires (JSON from the store has none, but the format must not break).
func (o *sseWriter) event(ev db.Event) error {
	o.w.WriteString("id: ")
	o.w.WriteString(strconv.FormatInt(ev.ID, 10))
	o.w.WriteString("\nevent: ")
	o.w.WriteString(ev.Type)
	o.w.WriteByte('\n')
	data := []byte(ev.Data)
	for {
		line, rest, more := bytes.Cut(data, []byte{'\n'})
		o.w.WriteString("data: ")
		o.w.Write(bytes.TrimSuffix(line, []byte{'\r'}))
		o.w.WriteByte('\n')
		if !more {
			break
		}
		data = rest
	}
	o.w.WriteByte('\n')
	return o.flush()
}

// shutdownFrame is the last frame of every stream when the server shuts
// down, written after the last whole event: a comment, and a retry field
// that has an EventSource reconnect after a second (to another instance,
// behind a balancer), sending the id of the last event it got as
// Last-Event-ID, so it misses nothing.
const shutdownFrame = ": shutting down; reconnect with Last-Event-ID\nretry: 1000\n\n"

// shuttingDown writes shutdownFrame. The stream ends after it whether or
// not it could be written.
func (o *sseWriter) shuttingDown() {
	o.w.WriteString(shutdownFrame)
	_ = o.flush()
}

// comment writes a comment line, which clients ignore.
func (o *sseWriter) comment(text string) error {
	o.w.WriteString(": ")
	o.w.WriteString(text)
	o.w.WriteString("\n\n")
	return o.flush()
}

// flush sends what is buffered; bufio keeps the first write error, so a
// client that went away surfaces here.
func (o *sseWriter) flush() error {
	if err := o.w.Flush(); err != nil {
		return err
	}
	if o.conn != nil {
		if !o.hub.isClosed() {
			_ = o.conn.SetWriteDeadline(time.Now().Add(o.hub.heartbeat() + positive(o.hub.WriteTimeout, 10*time.Second)))
		}
		// Checked again: had Close run since the check above, the deadline
		// just set would undo its shorter one.
		if o.hub.isClosed() {
			_ = o.conn.SetWriteDeadline(o.hub.closeDeadline)
		}
	}
	o.idle.Reset(o.hub.heartbeat())
	return nil
}
