package events

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lib/pq"

	"petstore/db"
)

// Log messages of the listener (tests wait for them).
const (
	msgListening   = "events: listening for notifications"
	msgReconnected = "events: postgres listener reconnected"
)

// listenerPing is how often ListenPostgres checks its connection is alive
// when no notification arrives (lib/pq's advice: a silently dropped TCP
// connection is otherwise noticed only by the kernel's keep-alive).
const listenerPing = 90 * time.Second

// ListenPostgres wakes the hub whenever any instance commits events on the
// PostgreSQL database at dsn (a postgres:// DATABASE_URL): it LISTENs on
// db.NotifyChannel through lib/pq's Listener, which reconnects by itself.
// After a reconnect it wakes the hub too, since notifications may have been
// lost meanwhile. It blocks until ctx is done or the hub is closed (then it
// returns nil); run it in its own goroutine. It returns an error only when
// the server refuses the LISTEN.
func (h *Hub) ListenPostgres(ctx context.Context, dsn string) error {
	l := pq.NewListener(dsn, 500*time.Millisecond, 15*time.Second, func(ev pq.ListenerEventType, err error) {
		switch ev {
		case pq.ListenerEventConnectionAttemptFailed, pq.ListenerEventDisconnected:
			h.log.Warn("events: postgres listener "+ev.String(), "err", err)
		case pq.ListenerEventReconnected:
			h.log.Info(msgReconnected)
		}
	})
	defer l.Close()

	// Listen blocks until connected, possibly for long when the database is
	// down; Close (deferred) unblocks it.
	listened := make(chan error, 1)
	go func() { listened <- l.Listen(db.NotifyChannel) }()

	ping := time.NewTicker(listenerPing)
	defer ping.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-h.done:
			return nil
		case err := <-listened:
			if err != nil {
				return fmt.Errorf("listen on %s: %w", db.NotifyChannel, err)
			}
			listened = nil
			h.log.Info(msgListening, "channel", db.NotifyChannel)
			h.Wake() // events committed before the LISTEN took effect
		case _, ok := <-l.Notify:
			if !ok {
				return errors.New("postgres listener stopped")
			}
			// A nil notification follows a reconnect: events may have been
			// missed, and a wake-up reads everything after the hub's newest id.
			h.Wake()
			if h.Notified != nil {
				h.Notified()
			}
		case <-ping.C:
			go func() { _ = l.Ping() }() // on a dead connection the listener notices and reconnects
		}
	}
}
