package handlers_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"petstore/db/dbtest"
	"petstore/handlers/handlerstest"
)

// TestRefusedBodyAnswerArrivesEveryTime: a client that sends a body its
// route refuses (1 MiB to /api/store/orders, over SPEC §2's 64 KiB: a 413
// from the headers alone, the connection closed without reading the body,
// SPEC §17) reads the Error object every time, on both databases: 1,000
// tries with Go's http.Client, not one "broken pipe" or "connection reset".
// Before the app's listener closed connections with a lingering close
// (web.Lingering), the server closed the socket with the body's first
// bytes unread, the kernel answered them with a reset, and the client lost
// the answer in 2 % of the tries on SQLite, 0.3 % on PostgreSQL (9,000 each;
// an acceptance run on SQLite failed one time in three).
//
// Four clients at a time take a second or two per database (2 s of CPU).
// Under the race detector it is about 9 s of CPU, 4 to 5 s on two free
// cores: two thirds of it is every try's megabyte going through the
// client's and the server's race-annotated writes and reads. Fewer tries
// would miss a failure this rare.
func TestRefusedBodyAnswerArrivesEveryTime(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		base := a.Listen()
		body := bytes.Repeat([]byte{' '}, 1<<20)
		client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{}}
		defer client.CloseIdleConnections()

		const tries, clients = 1000, 4
		began := time.Now()
		answers := make(chan answer)
		var wg sync.WaitGroup
		for range clients {
			wg.Go(func() {
				for range tries / clients {
					answers <- postRefused(client, base, a.Customer, body)
				}
			})
		}
		go func() { wg.Wait(); close(answers) }()
		// The answers are checked on this one goroutine: encoding/json's
		// first use of a type on several goroutines at once trips the race
		// detector in this toolchain (its field cache), in a test binary
		// this busy.
		var failures []string
		for ans := range answers {
			if err := ans.check(); err != nil {
				failures = append(failures, err.Error())
			}
		}
		t.Logf("%d tries in %s", tries, time.Since(began).Round(time.Millisecond))
		if len(failures) > 0 {
			t.Errorf("%d of %d tries got no 413 Error object; the first: %q", len(failures), tries, failures[:min(len(failures), 5)])
		}
	})
}

// answer is what one try got: the answer's status and body, or the
// error that took its place.
type answer struct {
	status int
	body   []byte
	err    error
}

// postRefused posts body to the orders route.
func postRefused(client *http.Client, base, key string, body []byte) answer {
	req, err := http.NewRequest(http.MethodPost, base+"/api/store/orders", bytes.NewReader(body))
	if err != nil {
		return answer{err: err}
	}
	req.Header.Set("X-API-Key", key)
	req.Header.Set("Content-Type", "application/json")
	res, err := client.Do(req)
	if err != nil {
		return answer{err: err}
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return answer{err: fmt.Errorf("read the answer: %w", err)}
	}
	return answer{status: res.StatusCode, body: raw}
}

// check wants the 413 Error object.
func (a answer) check() error {
	if a.err != nil {
		return a.err
	}
	var e struct {
		Code   string `json:"code"`
		Status int    `json:"status"`
	}
	if err := json.Unmarshal(a.body, &e); err != nil || a.status != http.StatusRequestEntityTooLarge ||
		e.Code != "payload_too_large" || e.Status != http.StatusRequestEntityTooLarge {
		return fmt.Errorf("%d %s, want the 413 payload_too_large Error object", a.status, a.body)
	}
	return nil
}
