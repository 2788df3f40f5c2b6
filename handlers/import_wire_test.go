package handlers_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"petstore/db"
	"petstore/db/dbtest"
	"petstore/handlers/handlerstest"
)

// TestImportWire sends catalog imports over a real connection, on both
// databases. A body announced over 50 MiB (51 MiB) is refused with 413
// from its headers while the client holds back all of it; so is a second
// import while one is queued (409), and the connection closes.
func TestImportWire(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		addr := strings.TrimPrefix(a.Listen(), "http://")
		head := func(length int) string {
			return "POST /api/pets/import HTTP/1.1\r\nHost: x\r\nX-API-Key: " + a.Staff +
				"\r\nContent-Type: text/csv\r\nContent-Length: " + handlerstest.Itoa(int64(length))
		}
		r := wireAnswer(t, addr, head(51<<20), strings.NewReader("name,category\n"))
		if r.Status != http.StatusRequestEntityTooLarge || r.Header.Get("Connection") != "close" || !strings.Contains(string(r.Body), "50 MiB") {
			t.Errorf("51 MiB announced: %d (Connection %q) %s; want 413 naming 50 MiB, closed", r.Status, r.Header.Get("Connection"), r.Body)
		}

		file := "name,category\nRex,Dogs\n"
		if r := wireAnswer(t, addr, head(len(file)), strings.NewReader(file)); r.Status != http.StatusAccepted {
			t.Fatalf("import: %d %s", r.Status, r.Body)
		}
		r = wireAnswer(t, addr, head(40<<20), strings.NewReader("name,category\n"))
		if r.Status != http.StatusConflict || r.Header.Get("Connection") != "close" || !strings.Contains(string(r.Body), db.EImportRunning) {
			t.Errorf("second import: %d (Connection %q) %s; want 409 import_running, closed", r.Status, r.Header.Get("Connection"), r.Body)
		}
		var n int
		_ = a.Store.DB().GetContext(context.Background(), &n, `SELECT count(*) FROM imports`)
		if n != 1 {
			t.Errorf("%d imports stored, want 1", n)
		}
	})
}
