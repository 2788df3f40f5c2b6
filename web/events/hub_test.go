package events

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"petstore/db"
	"petstore/db/dbtest"
)

// noPoll makes wake-ups the only way the hub learns of events, so a test
// that sees an event in time proves the wake-up path.
func noPoll(h *Hub) { h.PollInterval = time.Hour }

func TestStreamDeliversPetCreated(t *testing.T) {
	s := dbtest.SQLite(t)
	h, u, _ := newServer(t, s, serverOptions{hub: noPoll})
	s.OnEvent(h.Wake)
	st := openStream(t, u, nil)

	cat := mustCategory(t, s, "Dogs")
	p := mustPet(t, s, cat.ID, "Rex")
	f := st.nextEvent(t, time.Second)

	want, _ := json.Marshal(p)
	if f.Event != db.EventPetCreated {
		t.Errorf("event = %q, want %q", f.Event, db.EventPetCreated)
	}
	if got, want := f.ID, fmt.Sprint(lastID(t, s)); got != want {
		t.Errorf("id = %s, want %s", got, want)
	}
	if !jsonEqual(t, f.Data, string(want)) {
		t.Errorf("data = %s, want %s", f.Data, want)
	}
}

func TestStreamStartsFromNow(t *testing.T) {
	s := dbtest.SQLite(t)
	h, u, _ := newServer(t, s, serverOptions{hub: noPoll})
	s.OnEvent(h.Wake)
	cat := mustCategory(t, s, "Dogs")
	mustPet(t, s, cat.ID, "Old")

	st := openStream(t, u, nil)
	p := mustPet(t, s, cat.ID, "New")
	f := st.nextEvent(t, time.Second)
	var got db.Pet
	if err := json.Unmarshal([]byte(f.Data), &got); err != nil || got.ID != p.ID {
		t.Fatalf("first event = %+v, want the pet created after connecting (%d)", f, p.ID)
	}
}

func TestResumeWithLastEventID(t *testing.T) {
	s := dbtest.SQLite(t)
	h, u, _ := newServer(t, s, serverOptions{hub: noPoll})
	s.OnEvent(h.Wake)
	ctx := context.Background()
	cat := mustCategory(t, s, "Cats")

	st := openStream(t, u, nil)
	var pets []*db.Pet
	for i := range 3 {
		pets = append(pets, mustPet(t, s, cat.ID, fmt.Sprint("Cat ", i)))
	}
	var seen string
	for range 3 {
		seen = st.nextEvent(t, time.Second).ID
	}
	st.close()

	// Changes while disconnected: one of each pet and inventory event.
	mustPet(t, s, cat.ID, "Cat 3")
	name := "Renamed"
	if _, err := s.UpdatePet(ctx, pets[0].ID, db.NewPet{Name: &name, CategoryID: &cat.ID}); err != nil {
		t.Fatal(err)
	}
	mustSetStock(t, s, pets[1].ID, 5)
	if err := s.DeletePet(ctx, pets[2].ID); err != nil {
		t.Fatal(err)
	}
	after, err := strconv.ParseInt(seen, 10, 64)
	if err != nil {
		t.Fatalf("event id %q: %v", seen, err)
	}
	missed := eventsAfter(t, s, after)
	if len(missed) < 4 {
		t.Fatalf("outbox has %d events after %d, want at least 4", len(missed), after)
	}

	t.Run("header", func(t *testing.T) {
		st := openStream(t, u, map[string]string{HeaderLastEventID: seen})
		st.wantEvents(t, missed, 2*time.Second)
		// Live again, with nothing repeated before the next change.
		mustSetStock(t, s, pets[1].ID, 6)
		st.wantEvents(t, eventsAfter(t, s, missed[len(missed)-1].ID), time.Second)
	})
	t.Run("query", func(t *testing.T) {
		st := openStream(t, u+"?"+QueryLastEventID+"="+seen, nil)
		st.wantEvents(t, eventsAfter(t, s, after), 2*time.Second)
	})
	t.Run("beyond newest", func(t *testing.T) {
		// A client of a reset database: it still gets the next change.
		st := openStream(t, u, map[string]string{HeaderLastEventID: "999999"})
		last := lastID(t, s)
		mustSetStock(t, s, pets[1].ID, 7)
		st.wantEvents(t, eventsAfter(t, s, last), time.Second)
	})
}

// TestResumeDuringWritesNoGapNoDuplicate resumes while a writer keeps
// committing, so the replay from the database races the live feed; the
// stream must still be exactly the outbox, in order. A one-event buffer
// makes the hub drop live feeds too, exercising the catch-up path.
func TestResumeDuringWritesNoGapNoDuplicate(t *testing.T) {
	for _, buffer := range []int{1024, 1} {
		t.Run(fmt.Sprint("buffer ", buffer), func(t *testing.T) {
			s := dbtest.SQLite(t)
			h, u, _ := newServer(t, s, serverOptions{hub: func(h *Hub) {
				noPoll(h)
				h.Buffer = buffer
				h.PageSize = 7 // several pages per replay
			}})
			s.OnEvent(h.Wake)
			cat := mustCategory(t, s, "Fish")
			p := mustPet(t, s, cat.ID, "Nemo")
			from := lastID(t, s)

			const writes = 200
			started := make(chan struct{})
			finished := make(chan struct{})
			go func() {
				defer close(finished)
				for i := range writes {
					if i == writes/4 {
						close(started)
					}
					qty := int64(i + 2)
					if _, err := s.SetInventory(context.Background(), p.ID, db.InventoryUpdate{Quantity: &qty}); err != nil {
						t.Errorf("set inventory: %v", err)
						return
					}
				}
			}()
			<-started
			st := openStream(t, u, map[string]string{HeaderLastEventID: fmt.Sprint(from)})
			<-finished
			want := eventsAfter(t, s, from)
			if len(want) != writes {
				t.Fatalf("outbox has %d events, want %d", len(want), writes)
			}
			st.wantEvents(t, want, 5*time.Second)
			select {
			case f := <-st.frames:
				if f.Comment == "" {
					t.Fatalf("extra event after the last one: %+v", f)
				}
			case <-time.After(100 * time.Millisecond):
			}
			t.Logf("live feeds dropped: %d", h.lags.Load())
		})
	}
}

// TestLaggingStreamCatchesUp offers a burst larger than the buffer: the hub
// drops the stream's live feed instead of waiting, and the stream reads the
// rest from the database.
func TestLaggingStreamCatchesUp(t *testing.T) {
	s := dbtest.SQLite(t)
	h, u, _ := newServer(t, s, serverOptions{hub: func(h *Hub) {
		noPoll(h)
		h.Buffer = 2
	}})
	cat := mustCategory(t, s, "Birds")
	p := mustPet(t, s, cat.ID, "Tweety")
	st := openStream(t, u, nil)
	from := lastID(t, s)
	for i := range 100 {
		mustSetStock(t, s, p.ID, int64(i+2)) // no OnEvent: nobody wakes the hub yet
	}
	h.Wake() // one page of 100 events against a buffer of 2
	st.wantEvents(t, eventsAfter(t, s, from), 5*time.Second)
	if h.lags.Load() == 0 {
		t.Errorf("the hub never dropped the live feed; the test did not exercise the catch-up")
	}
}

func TestHeartbeatAndClose(t *testing.T) {
	s := dbtest.SQLite(t)
	// The server's WriteTimeout is far shorter than the stream's life:
	// each write pushes the connection's deadline ahead.
	h, u, _ := newServer(t, s, serverOptions{
		hub:          func(h *Hub) { h.Heartbeat = 100 * time.Millisecond },
		writeTimeout: 500 * time.Millisecond,
	})
	st := openStream(t, u, nil)
	begin := time.Now()
	beats := 0
	for time.Since(begin) < 1500*time.Millisecond {
		f := st.next(t, time.Second)
		if f.Comment == "heartbeat" {
			beats++
		}
	}
	if beats < 5 {
		t.Errorf("%d heartbeats in 1.5 s at a 100 ms interval, want at least 5", beats)
	}

	closed := time.Now()
	h.Close()
	st.wantShutdownEnd(t, 2*time.Second)
	t.Logf("stream ended %v after Close", time.Since(closed))

	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("after Close: status %d, want 503", resp.StatusCode)
	}
}

func TestServerShutdownEndsStreams(t *testing.T) {
	s := dbtest.SQLite(t)
	_, u, app := newServer(t, s, serverOptions{})
	st := openStream(t, u, nil)
	st.next(t, time.Second) // connected
	begin := time.Now()
	if err := app.ShutdownWithTimeout(5 * time.Second); err != nil {
		t.Fatalf("shutdown with an open stream: %v", err)
	}
	st.wantShutdownEnd(t, time.Second)
	t.Logf("shutdown took %v", time.Since(begin))
}

func TestBadLastEventID(t *testing.T) {
	s := dbtest.SQLite(t)
	_, u, _ := newServer(t, s, serverOptions{})
	for _, tc := range []struct {
		name, header, query string
		want                int
	}{
		{name: "header text", header: "abc", want: 400},
		{name: "header negative", header: "-1", want: 400},
		{name: "header fraction", header: "1.5", want: 400},
		{name: "header too big", header: "99999999999999999999", want: 400},
		{name: "query text", query: "x", want: 400},
		{name: "query negative", query: "-5", want: 400},
		{name: "bad header wins over good query", header: "x", query: "3", want: 400},
		{name: "zero", header: "0", want: 200},
		{name: "query", query: "3", want: 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			target := u
			if tc.query != "" {
				target += "?" + url.Values{QueryLastEventID: {tc.query}}.Encode()
			}
			req, _ := http.NewRequest(http.MethodGet, target, nil)
			if tc.header != "" {
				req.Header.Set(HeaderLastEventID, tc.header)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.want)
			}
			if tc.want != 400 {
				return
			}
			b, _ := io.ReadAll(resp.Body)
			var e struct{ Code string }
			if err := json.Unmarshal(b, &e); err != nil || e.Code != db.EBadRequest {
				t.Fatalf("body %s, want code %s", b, db.EBadRequest)
			}
			if ct := resp.Header.Get("Content-Type"); strings.HasPrefix(ct, "text/event-stream") {
				t.Errorf("Content-Type = %s on an error", ct)
			}
		})
	}
}

func TestWakeNeverBlocks(t *testing.T) {
	h := NewHub(dbtest.SQLite(t), nil) // never started: nobody drains the wake-ups
	done := make(chan struct{})
	go func() {
		for range 10000 {
			h.Wake()
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Wake blocked")
	}
	h.Close()
}

// TestCloseDuringWritesEndsAfterAWholeEvent closes the hub while events
// stream out: every frame the client got is whole, and the stream ends
// with the shutdown frame, cleanly.
func TestCloseDuringWritesEndsAfterAWholeEvent(t *testing.T) {
	s := dbtest.SQLite(t)
	h, u, _ := newServer(t, s, serverOptions{})
	s.OnEvent(h.Wake)
	cat := mustCategory(t, s, "Dogs")
	st := openStream(t, u, nil)
	st.next(t, time.Second) // connected

	stop := make(chan struct{})
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			name := "Pup " + itoa(int64(i))
			if _, err := s.CreatePet(context.Background(), db.NewPet{Name: &name, CategoryID: &cat.ID}); err != nil {
				return
			}
		}
	}()
	defer func() { close(stop); <-wrote }()
	for range 20 {
		if f := st.nextEvent(t, 2*time.Second); f.ID == "" || f.Event == "" || !json.Valid([]byte(f.Data)) {
			t.Fatalf("event frame %+v is not whole", f)
		}
	}
	h.Close()
	st.wantShutdownEnd(t, 2*time.Second)
}
