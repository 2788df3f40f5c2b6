package console_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"petstore/db"
	"petstore/db/dbtest"
	"petstore/handlers/handlerstest"
)

// TestConsoleImport drives the Import page as a clerk (SPEC §16: clerks run
// the catalog), on both databases: a file with a bad row comes back on the
// form with its problems (422) and stores nothing; a good one leads to
// the import's page, a progress bar htmx refreshes while it is queued,
// a second upload meanwhile is refused on the form (409); once the job
// ran, the page (and htmx's part) shows the outcome without polling.
func TestConsoleImport(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		a.AddStaffAs("cleo", "a clerk's long password", db.RoleClerk)
		b := a.Browser(t)
		b.Follow(b.Login("cleo", "a clerk's long password").WantStatus(http.StatusSeeOther)).WantStatus(http.StatusOK)

		page := b.Get("/staff/import").WantStatus(http.StatusOK)
		if page.ID("nav-import").Length() != 1 || page.Find(`label[for="import-file"]`).Length() != 1 {
			t.Fatal("the Import page has no navigation entry or no labelled file input")
		}
		body, ct := handlerstest.ImportForm(t, b.CSRF, "pets.csv", []byte("name,category,price\nRex,Dogs,1.00\nMax,Dogs,abc\n"))
		refused := b.Upload("/staff/import", body, ct, false).WantStatus(http.StatusUnprocessableEntity)
		if got := refused.Text("error-summary"); !strings.Contains(got, "row 3: price") {
			t.Errorf("problems %q, want row 3: price named", got)
		}
		if n := handlerstest.CountRows(t, a, "imports"); n != 0 {
			t.Fatalf("%d imports stored from a refused file", n)
		}

		body, ct = handlerstest.ImportForm(t, b.CSRF, "pets.csv", []byte("name,category,quantity\nRex,Dogs,2\nMax,Cats,0\n"))
		loc := b.Upload("/staff/import", body, ct, false).WantStatus(http.StatusSeeOther).Header.Get("Location")
		if !strings.HasPrefix(loc, "/staff/imports/") {
			t.Fatalf("redirect to %q", loc)
		}
		queued := b.Get(loc).WantStatus(http.StatusOK)
		status := queued.ID("import-status")
		if s, _ := status.Attr("data-status"); s != db.ImportQueued {
			t.Errorf("status %q, want queued", s)
		}
		if trig, _ := status.Attr("hx-trigger"); trig != "every 1s" {
			t.Errorf("a queued import's part is refreshed on %q, want every 1s", trig)
		}
		if queued.ID("import-progress").Length() != 1 || queued.Find("progress[aria-label]").Length() != 1 {
			t.Error("no labelled progress bar while queued")
		}
		b.Get("/staff/import").WantStatus(http.StatusOK).WantText("import-active", "is queued")

		body, ct = handlerstest.ImportForm(t, b.CSRF, "more.csv", []byte("name,category\nBella,Dogs\n"))
		if got := b.Upload("/staff/import", body, ct, false).WantStatus(http.StatusConflict).Text("error-summary"); !strings.Contains(got, "wait until it has finished") {
			t.Errorf("second upload says %q", got)
		}

		id := strings.TrimPrefix(loc, "/staff/imports/")
		var im db.Import
		a.GetJSON(t, a.Staff, "/api/imports/"+id, &im)
		if err := a.Handler.Imports.Run(context.Background(), im.ID); err != nil {
			t.Fatal(err)
		}
		part := b.HX(loc).WantStatus(http.StatusOK)
		if part.IsFullPage() {
			t.Error("htmx got the whole page, want the status part")
		}
		if _, polling := part.ID("import-status").Attr("hx-trigger"); polling {
			t.Error("a finished import's part still polls")
		}
		if got := part.Text("import-done"); !strings.Contains(got, "Imported 2 pets") {
			t.Errorf("outcome %q", got)
		}
		if got := handlerstest.CountRows(t, a, "pets"); got != 2 {
			t.Errorf("%d pets, want 2", got)
		}
	})
}
