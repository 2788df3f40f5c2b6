package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"petstore/db"
	"petstore/db/dbtest"
	"petstore/handlers/handlerstest"
	"petstore/web/imports"
	"petstore/web/queue"
	"petstore/web/webhooks"
)

// TestCatalogImportIsOneEvent imports 5,000 pets with a webhook on every
// event ("*") and an event stream open, on both databases, through a
// started queue (the import's job and the webhook deliveries run as in
// the product): the receiver gets exactly one request, catalog.imported
// with {importId, rows, categoriesCreated}, and the stream shows that one
// event, no pet.created per row (SPEC §18).
func TestCatalogImportIsOneEvent(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		ctx := context.Background()

		var mu sync.Mutex
		var got []map[string]any
		receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var body map[string]any
			_ = json.NewDecoder(r.Body).Decode(&body)
			mu.Lock()
			got = append(got, body)
			mu.Unlock()
		}))
		defer receiver.Close()
		a.Do(handlerstest.Req{Method: http.MethodPost, Path: "/api/webhooks", Key: a.Staff,
			Body: map[string]any{"url": receiver.URL + "/hook", "events": []string{"*"}}}).Want(t, http.StatusCreated)

		// A queue that works imports and deliveries (the app's own is never
		// started in handler tests), reaching the loopback receiver.
		q := queue.New(a.Store, queue.Config{PollInterval: 100 * time.Millisecond, RelayPoll: 100 * time.Millisecond})
		if _, err := imports.New(a.Store, q, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := webhooks.New(q, webhooks.Config{Store: a.Store, Now: a.Clock.Now, AllowPrivate: true}); err != nil {
			t.Fatal(err)
		}

		base := a.Listen()
		req, _ := http.NewRequest(http.MethodGet, base+"/api/events", nil)
		req.Header.Set("X-API-Key", a.Staff)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		streamed := make(chan [2]string, 16)
		go func() {
			sc := bufio.NewScanner(res.Body)
			var typ string
			for sc.Scan() {
				line := sc.Text()
				switch {
				case strings.HasPrefix(line, "event: "):
					typ = strings.TrimPrefix(line, "event: ")
				case strings.HasPrefix(line, "data: "):
					streamed <- [2]string{typ, strings.TrimPrefix(line, "data: ")}
				}
			}
		}()

		const n = 5000
		file, _, _ := importFile(n, a.Clock.Now().UTC())
		var im importAnswer
		postImport(a, file).Want(t, http.StatusAccepted).Decode(t, &im)
		if err := q.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = q.Stop(ctx) }()

		want := fmt.Sprintf(`{"importId":%d,"rows":%d,"categoriesCreated":4}`, im.ID, n)
		select {
		case e := <-streamed:
			if e[0] != db.EventCatalogImported || e[1] != want {
				t.Errorf("streamed %s %s, want %s %s", e[0], e[1], db.EventCatalogImported, want)
			}
		case <-time.After(60 * time.Second):
			t.Fatal("no event streamed within 60 s")
		}
		deadline := time.Now().Add(30 * time.Second)
		for {
			mu.Lock()
			k := len(got)
			mu.Unlock()
			if k > 0 || time.Now().After(deadline) {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		// Anything else would have come by now: the relay polls every 100 ms.
		time.Sleep(time.Second)
		select {
		case e := <-streamed:
			t.Errorf("a second event streamed: %s %s", e[0], e[1])
		default:
		}
		mu.Lock()
		defer mu.Unlock()
		if len(got) != 1 || got[0]["type"] != db.EventCatalogImported {
			t.Fatalf("the webhook received %d requests (%v), want one catalog.imported", len(got), got)
		}
		var wantData map[string]any
		_ = json.Unmarshal([]byte(want), &wantData)
		if fmt.Sprint(got[0]["data"]) != fmt.Sprint(wantData) {
			t.Errorf("delivered data %v, want %s", got[0]["data"], want)
		}
		var one importAnswer
		a.GetJSON(t, a.Staff, "/api/imports/"+handlerstest.Itoa(im.ID), &one)
		if one.Status != db.ImportSucceeded {
			t.Errorf("import %+v, want succeeded", one)
		}
	})
}
