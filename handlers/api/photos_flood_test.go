package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"petstore/db/dbtest"
	"petstore/handlers"
	"petstore/handlers/handlerstest"
	"petstore/web/photo"
	"petstore/web/ratelimit"
)

// floodBody is the size of each upload of the flood: a small JPEG padded
// to 2 MiB (a decoder stops at the image's end), so that holding a body
// costs what a photo's does while processing one stays cheap.
const floodBody = 2 << 20

// TestPhotoUploadFlood: SPEC §17, on both databases. While one upload is
// processed, photo.MaxWaiting more wait for it; every other upload of a
// flood is refused at once, 503 unavailable with Retry-After, and holds
// nothing once answered: however many are sent, the memory the flood
// keeps is the waiting uploads' bodies. Then the worker is free, and the
// waiting uploads are processed and stored.
//
// The uploads travel over a real connection, so the bodies the server
// holds are the only copies in the process; what the flood keeps is read
// as the live heap after a collection, which no garbage and no other test
// (none runs beside this one) can make vary.
func TestPhotoUploadFlood(t *testing.T) {
	dbtest.EachInTurn(t, func(t *testing.T, open dbtest.Open) {
		logs := &syncBuffer{}
		a := handlerstest.NewOn(t, open, func(h *handlers.Handler, _ *ratelimit.Config) {
			h.Logger = slog.New(slog.NewJSONHandler(logs, nil))
		})
		rex := a.SeedPet("Rex", 1)
		base := a.Listen()
		body := append(handlerstest.JPEGOf(t, 320, 240), make([]byte, floodBody)...)[:floodBody]
		client := &http.Client{Timeout: 2 * time.Minute}
		t.Cleanup(client.CloseIdleConnections) // else the server's shutdown waits for them
		upload := func() answer {
			req, err := http.NewRequest(http.MethodPost, base+"/api/pets/"+handlerstest.Itoa(rex.ID)+"/photos", bytes.NewReader(body))
			if err != nil {
				return answer{err: err}
			}
			req.Header.Set("X-API-Key", a.Staff)
			req.Header.Set("Content-Type", "image/jpeg")
			resp, err := client.Do(req)
			if err != nil {
				return answer{err: err}
			}
			defer resp.Body.Close()
			raw, err := io.ReadAll(resp.Body)
			return answer{status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After"), body: raw, err: err}
		}

		// An upload is being processed: the test holds the worker.
		leave, err := a.Handler.Photos.Enter(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		released := false
		defer func() {
			if !released {
				leave()
			}
		}()
		before := liveHeap()

		// Eight at once: four wait, four are refused.
		const burst = 8
		answers := make(chan answer, burst)
		for range burst {
			go func() { answers <- upload() }()
		}
		for range burst - photo.MaxWaiting {
			wantBusy(t, receive(t, answers))
		}
		waitFor(t, func() bool { return a.Handler.Photos.Waiting() == photo.MaxWaiting })
		// The flood goes on: every one of these is refused at once.
		const more = 8
		for range more {
			wantBusy(t, upload())
		}
		if n := a.Handler.Photos.Waiting(); n != photo.MaxWaiting {
			t.Fatalf("%d uploads waiting, want %d", n, photo.MaxWaiting)
		}

		// Each waiting upload holds its body twice (as read, and the copy
		// being processed): 16 MiB for the four. Had the refused 12 been
		// kept too, it would be 64 MiB.
		kept := int64(liveHeap()) - int64(before)
		bound := int64(photo.MaxWaiting*2*floodBody + 8<<20)
		t.Logf("%d uploads sent, %d waiting: %.1f MiB kept (bound %.1f MiB)", burst+more, photo.MaxWaiting, float64(kept)/(1<<20), float64(bound)/(1<<20))
		if kept > bound {
			t.Errorf("the flood keeps %d bytes live, want at most %d: refused uploads are held", kept, bound)
		}

		// A full line is load, not a failure: its 503s are warnings.
		busy := 0
		for line := range strings.Lines(logs.String()) {
			var r struct {
				Level  string `json:"level"`
				Msg    string `json:"msg"`
				Status int    `json:"status"`
			}
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Fatalf("log line %q: %v", line, err)
			}
			if r.Level == "ERROR" {
				t.Errorf("logged at ERROR: %s", line)
			}
			if r.Status == http.StatusServiceUnavailable && r.Level == "WARN" {
				busy++
			}
		}
		if want := 2 * (burst - photo.MaxWaiting + more); busy != want {
			t.Errorf("%d warnings of a 503, want %d (the refusal and the request line of each)", busy, want)
		}

		// The worker is free: the waiting uploads are processed in turn.
		leave()
		released = true
		for range photo.MaxWaiting {
			r := receive(t, answers)
			if r.status != http.StatusCreated {
				t.Errorf("a waiting upload: status %d, want 201: %s", r.status, r.body)
			}
		}
		if got := petPhotos(t, a, rex.ID); len(got) != photo.MaxWaiting {
			t.Errorf("the pet has %d photos, want the %d that waited", len(got), photo.MaxWaiting)
		}
	})
}

// syncBuffer is a log sink the server's goroutines write while the test
// reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// answer is one upload's outcome.
type answer struct {
	status     int
	retryAfter string
	body       []byte
	err        error
}

// wantBusy fails unless r is SPEC §17's refusal: 503 unavailable, with
// Retry-After, in the Error object.
func wantBusy(t *testing.T, r answer) {
	t.Helper()
	if r.err != nil {
		t.Fatal(r.err)
	}
	var p handlerstest.Problem
	if err := json.Unmarshal(r.body, &p); err != nil || r.status != http.StatusServiceUnavailable || p.Status != r.status || p.Code != "unavailable" {
		t.Fatalf("status %d, body %s; want 503 unavailable", r.status, r.body)
	}
	if r.retryAfter == "" {
		t.Errorf("the 503 has no Retry-After")
	}
}

// receive takes the next answer, failing after a minute.
func receive(t *testing.T, answers <-chan answer) answer {
	t.Helper()
	select {
	case r := <-answers:
		return r
	case <-time.After(time.Minute):
		t.Fatal("no answer within a minute")
		return answer{}
	}
}

// waitFor polls cond for up to a minute.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for range 6000 {
		if cond() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("condition not met within a minute")
}

// liveHeap is the bytes of live objects, after two collections: the
// second empties what sync.Pools kept through the first.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
