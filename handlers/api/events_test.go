package api_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"petstore/db/dbtest"
	"petstore/handlers/handlerstest"
)

// TestAPIEventsOrderArrives places an order through the API while a staff
// client holds GET /api/events open: order.created arrives within a
// second, with the order as the API showed it, price snapshot included.
func TestAPIEventsOrderArrives(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		pet := a.SeedPet("Rex", 3)
		a.Do(handlerstest.Req{Method: "PUT", Path: "/api/pets/" + handlerstest.Itoa(pet.ID), Key: a.Staff,
			Body: map[string]any{"name": "Rex", "categoryId": pet.CategoryID, "price": "12.5"}}).Want(t, 200)
		base := a.Listen()

		req, _ := http.NewRequest("GET", base+"/api/events", nil)
		req.Header.Set("X-API-Key", a.Staff)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
			t.Fatalf("events: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
		}
		if got := res.Header.Get("X-API-Stability"); got != "experimental" {
			t.Errorf("X-API-Stability = %q", got)
		}

		body, _ := json.Marshal(map[string]any{"petId": pet.ID, "quantity": 1})
		post, _ := http.NewRequest("POST", base+"/api/store/orders", bytes.NewReader(body))
		post.Header.Set("X-API-Key", a.Customer)
		post.Header.Set("Content-Type", "application/json")
		pres, err := http.DefaultClient.Do(post)
		if err != nil {
			t.Fatal(err)
		}
		// The order is placed when its answer comes (it commits as the
		// answer is written): the event is due within a second of that,
		// judged by when it arrived, so a slow answer on a busy machine
		// spends none of the event's second.
		placed := time.Now()
		var order map[string]any
		_ = json.NewDecoder(pres.Body).Decode(&order)
		pres.Body.Close()
		if pres.StatusCode != 201 {
			t.Fatalf("order: %d %v", pres.StatusCode, order)
		}

		type event struct {
			id, typ, data string
			at            time.Time // when it arrived
		}
		events := make(chan event, 16)
		go func() {
			sc := bufio.NewScanner(res.Body)
			var e event
			for sc.Scan() {
				line := sc.Text()
				switch {
				case strings.HasPrefix(line, "id: "):
					e.id = strings.TrimPrefix(line, "id: ")
				case strings.HasPrefix(line, "event: "):
					e.typ = strings.TrimPrefix(line, "event: ")
				case strings.HasPrefix(line, "data: "):
					e.data = strings.TrimPrefix(line, "data: ")
				case line == "" && e.typ != "":
					e.at = time.Now()
					events <- e
					e = event{}
				}
			}
		}()
		deadline := time.After(10 * time.Second)
		for {
			select {
			case e := <-events:
				if e.typ != "order.created" {
					continue
				}
				if late := e.at.Sub(placed); late > time.Second {
					t.Fatalf("order.created arrived %s after the order's answer, over a second", late)
				}
				var got map[string]any
				if err := json.Unmarshal([]byte(e.data), &got); err != nil || e.id == "" {
					t.Fatalf("event %+v: %v", e, err)
				}
				if diff := cmp.Diff(order, got); diff != "" || got["unitPrice"] != "12.50" || got["total"] != "12.50" || got["currency"] != "EUR" {
					t.Fatalf("event data is not the order as placed, at 12.50 EUR (-order +event):\n%s", diff)
				}
				return
			case <-deadline:
				t.Fatal("order.created did not arrive within 10 s")
			}
		}
	})
}
