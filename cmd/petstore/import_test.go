package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"petstore/db"
	"petstore/db/dbtest"
)

// TestImportJob runs a catalog import through the real server on both
// databases: the job inserted with the import (River's InsertTx) is worked
// by the server's one River client beside the webhook deliveries, and
// GET /api/imports/{id} follows it to succeeded with every pet written.
func TestImportJob(t *testing.T) {
	t.Parallel() // mostly waiting (on a restart, a rescue, a job): beside the browser tests
	dbtest.EachURL(t, func(t *testing.T, url string) {
		cfg := testConfig(t, map[string]string{"DATABASE_URL": url, "SESSION_KEYS": testSessionKey})
		n := startNode(t, "A", cfg, nil, nil)
		c := newClient(t)
		staff, _ := issueKey(t, n.srv.Store, "staff", db.RoleStaff, 1000, 100000)

		// Three transactions of db's 1,000-row batches, the last one short.
		const pets = 2500
		var b strings.Builder
		b.WriteString("name,category,price,quantity\n")
		for i := range pets {
			fmt.Fprintf(&b, "Pet %d,Kind %d,%d.50,%d\n", i, i%7, i%100, i%4)
		}
		req, _ := http.NewRequest(http.MethodPost, n.base+"/api/pets/import", strings.NewReader(b.String()))
		req.Header.Set("Content-Type", "text/csv")
		req.Header.Set("X-API-Key", staff)
		res, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusAccepted {
			t.Fatalf("import: %d", res.StatusCode)
		}
		loc := res.Header.Get("Location")
		// The server runs in this process, under -race in CI: SQLite's
		// writes there are many times slower than a real server's, on a
		// machine the rest of the suite keeps busy. The wait ends with
		// the import's answer; the deadline only bounds a stuck one.
		deadline := time.Now().Add(3 * time.Minute)
		var im db.Import
		for {
			call(c, http.MethodGet, n.base+loc, staff, nil).must(t, http.StatusOK, &im)
			if im.Status == db.ImportSucceeded || im.Status == db.ImportFailed || time.Now().After(deadline) {
				break
			}
			time.Sleep(50 * time.Millisecond) // the condition is the answer itself: ask again
		}
		if im.Status != db.ImportSucceeded || im.Processed != pets || im.Rows != pets {
			t.Fatalf("import %+v, want succeeded with %d pets", im, pets)
		}
		var got int
		if err := n.srv.Store.DB().Get(&got, `SELECT count(*) FROM pets`); err != nil || got != pets {
			t.Errorf("%d pets (%v), want %d", got, err, pets)
		}
	})
}
