package events

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"testing"
	"time"

	"petstore/db"
	"petstore/db/dbtest"
)

// openPostgres opens a store on rawURL, as one more instance would.
func openPostgres(t *testing.T, rawURL string, migrate bool) *db.Store {
	t.Helper()
	ctx := context.Background()
	s, err := db.Open(ctx, rawURL, dbtest.NewClock(t).Now)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	if migrate {
		if err := s.Migrate(ctx); err != nil {
			t.Fatalf("migrate: %v", err)
		}
	}
	return s
}

// listenerURL names the listener's connection so a test can find it.
func listenerURL(t *testing.T, base string) (string, string) {
	t.Helper()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	name := "petstore_events_test_" + hex.EncodeToString(b)
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("application_name", name)
	u.RawQuery = q.Encode()
	return u.String(), name
}

// startListener runs ListenPostgres until the test ends and waits until it
// listens.
func startListener(t *testing.T, h *Hub, dsn string, listening <-chan struct{}) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- h.ListenPostgres(ctx, dsn) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-errc:
			if err != nil {
				t.Errorf("ListenPostgres: %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("ListenPostgres still running 5 s after its context ended")
		}
	})
	waitSignal(t, listening, "LISTEN", 5*time.Second)
}

// TestPostgresNotifyWakesOtherInstance: instance A's hub learns of an event
// written through instance B only by LISTEN/NOTIFY (no OnEvent on B, no
// polling).
func TestPostgresNotifyWakesOtherInstance(t *testing.T) {
	raw := dbtest.PostgresURL(t)
	a := openPostgres(t, raw, true)
	b := openPostgres(t, raw, false)
	logger, signals := newLogSignals(msgListening)
	h, u, _ := newServer(t, a, serverOptions{hub: noPoll, logger: logger})
	startListener(t, h, raw, signals[msgListening])
	st := openStream(t, u, nil)

	cat := mustCategory(t, b, "Dogs")
	p := mustPet(t, b, cat.ID, "Rex")
	f := st.nextEvent(t, time.Second)
	if f.Event != db.EventPetCreated || !jsonEqual(t, f.Data, `{"id":`+itoa(p.ID)+`,"name":"Rex","categoryId":`+itoa(cat.ID)+`,"status":"available","price":"0.00","currency":"EUR","photos":[]}`) {
		t.Fatalf("event = %+v, want pet.created of pet %d", f, p.ID)
	}
}

// TestPostgresListenerReconnect kills the listener's connection: lib/pq
// reconnects and sends a nil notification, on which the hub catches up, so
// an event committed around the outage still arrives.
func TestPostgresListenerReconnect(t *testing.T) {
	raw := dbtest.PostgresURL(t)
	a := openPostgres(t, raw, true)
	b := openPostgres(t, raw, false)
	logger, signals := newLogSignals(msgListening, msgReconnected)
	h, u, _ := newServer(t, a, serverOptions{hub: noPoll, logger: logger})
	dsn, appName := listenerURL(t, raw)
	startListener(t, h, dsn, signals[msgListening])
	st := openStream(t, u, nil)
	cat := mustCategory(t, b, "Dogs")

	var killed int
	err := b.DB().GetContext(context.Background(), &killed,
		`SELECT COUNT(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1) t`, appName)
	if err != nil || killed != 1 {
		t.Fatalf("terminate the listener's backend: %d killed, %v", killed, err)
	}
	p := mustPet(t, b, cat.ID, "Rex") // likely while the listener is down
	waitSignal(t, signals[msgReconnected], "reconnect", 5*time.Second)
	f := st.nextEvent(t, 2*time.Second)
	if f.Event != db.EventPetCreated || f.ID != itoa(lastID(t, a)) {
		t.Fatalf("event = %+v, want pet.created of pet %d", f, p.ID)
	}
}
