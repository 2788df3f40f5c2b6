package api_test

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"petstore/db/dbtest"
	"petstore/handlers/handlerstest"
)

// TestSlowImportUploadNeverStopsTheShop sends an import over a real
// connection a few bytes at a time, as a slow (or hostile) client does,
// and while its body is still arriving changes the inventory, places an
// order and starts a second, small import, on both databases: each must
// answer as it would with no upload going on (SPEC §18: an import never
// stops the shop). The upload is spooled outside every transaction; only
// the short write at its end takes the database's write lock. (Before,
// the upload's transaction held SQLite's only writer while the body
// arrived, and on PostgreSQL the second import waited on its unique index.)
func TestSlowImportUploadNeverStopsTheShop(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		a.SkipContract = true // a.Do runs beside the upload; the contract is checked elsewhere
		pet := a.SeedPet("Rex", 50)
		base := a.Listen()

		head, _, _ := importFile(200, a.Clock.Now().UTC())
		const size = 10 << 20 // announced: the rest would arrive over hours
		conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "POST /api/pets/import HTTP/1.1\r\nHost: x\r\nX-API-Key: %s\r\nContent-Type: text/csv\r\nContent-Length: %d\r\n\r\n%s",
			a.Staff, size, head)
		stop := make(chan struct{})
		dribbled := make(chan struct{})
		go func() {
			defer close(dribbled)
			row := 0
			for {
				line := fmt.Sprintf("Slow %d,Dogs,,1.00,,,,1\r\n", row)
				for i := range len(line) {
					select {
					case <-stop:
						return
					case <-time.After(20 * time.Millisecond):
					}
					if _, err := conn.Write([]byte{line[i]}); err != nil {
						return
					}
				}
				row++
			}
		}()
		// Let the server take the request and start reading its body.
		time.Sleep(500 * time.Millisecond)

		timed := func(what string, fn func() *handlerstest.Response, want ...int) {
			t.Helper()
			began := time.Now()
			r := fn()
			took := time.Since(began)
			t.Logf("%s during the upload: %d in %s", what, r.Status, took.Round(time.Millisecond))
			ok := false
			for _, w := range want {
				ok = ok || r.Status == w
			}
			if !ok {
				t.Errorf("%s during the upload: %d, want %v; body %s", what, r.Status, want, r.Body)
			}
			if took > 2*time.Second {
				t.Errorf("%s took %s while an upload arrived, want under 2 s", what, took)
			}
		}
		timed("PUT inventory", func() *handlerstest.Response {
			return a.Do(handlerstest.Req{Method: http.MethodPut, Path: "/api/store/inventory/" + handlerstest.Itoa(pet.ID), Key: a.Staff,
				Body: map[string]any{"quantity": 40}})
		}, http.StatusOK)
		timed("POST order", func() *handlerstest.Response {
			return a.Do(handlerstest.Req{Method: http.MethodPost, Path: "/api/store/orders", Key: a.Customer,
				Body: map[string]any{"petId": pet.ID, "quantity": 1}})
		}, http.StatusCreated)
		// A second import: the slow one is not queued yet, so this one may
		// go ahead (202); it must not wait for the slow one's body.
		timed("a second import", func() *handlerstest.Response {
			return postImport(a, "name,category\nMax,Dogs\n")
		}, http.StatusAccepted, http.StatusConflict)

		close(stop)
		<-dribbled
		conn.Close()
		// The cut-off upload stores nothing.
		time.Sleep(300 * time.Millisecond)
		if n := count(t, a, `SELECT count(*) FROM imports`); n != 1 {
			t.Errorf("%d imports stored, want 1 (the second; the cut-off upload stores nothing)", n)
		}
		if n := count(t, a, `SELECT count(*) FROM pets WHERE name LIKE 'Slow %'`); n != 0 {
			t.Errorf("%d pets of the cut-off upload", n)
		}
	})
}
