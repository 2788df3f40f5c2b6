package api_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"petstore/db"
	"petstore/db/dbtest"
	"petstore/handlers/handlerstest"
)

// importFile is a catalog of n pets with every column, over the
// categories Dogs (as "dogs": the store's own, matched without case),
// Cats, Birds and Fish. Every tenth pet is sold without a quantity, every
// tenth after it has quantity 0 and no status (sold too), the others are
// available with 1 to 5 in stock. It returns the file, the stock it
// brings and how many are sold.
func importFile(n int, today time.Time) (file string, stock int64, sold int) {
	var b strings.Builder
	b.WriteString("\xEF\xBB\xBFname,category,status,price,breed,birthDate,description,quantity\r\n")
	cats := []string{"dogs", "Cats", "Birds", "Fish"}
	born := today.AddDate(-1, 0, 0).Format(time.DateOnly)
	for i := range n {
		status, qty := "available", fmt.Sprint(i%5+1)
		switch i % 10 {
		case 0:
			status, qty = "sold", ""
			sold++
		case 1:
			status, qty = "", "0"
			sold++
		default:
			stock += int64(i%5 + 1)
		}
		fmt.Fprintf(&b, "Pet %d,%s,%s,%d.%02d,Breed %d,%s,\"Line one, with a comma\r\nline \"\"two\"\"\",%s\r\n",
			i, cats[i%4], status, i%1000, i%100, i%7, born, qty)
	}
	return b.String(), stock, sold
}

// postImport sends file as a catalog import.
func postImport(a *handlerstest.App, file string) *handlerstest.Response {
	return a.Do(handlerstest.Req{Method: http.MethodPost, Path: "/api/pets/import", Key: a.Staff, Body: file, ContentType: "text/csv; charset=utf-8"})
}

// importAnswer is GET /api/imports/{id}.
type importAnswer struct {
	ID         int64   `json:"id"`
	Status     string  `json:"status"`
	Rows       int64   `json:"rows"`
	Processed  int64   `json:"processed"`
	Errors     []any   `json:"errors"`
	CreatedAt  string  `json:"createdAt"`
	FinishedAt *string `json:"finishedAt"`
}

func count(t *testing.T, a *handlerstest.App, query string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := a.Store.DB().GetContext(context.Background(), &n, query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// TestCatalogImport imports 10,000 pets with every column on both
// databases: 202 with the queued import, a second import refused while it
// waits (409), and once its job ran: every pet with its stock and status,
// the new categories (Dogs matched to the store's own), one
// catalog.imported event (no pet.created per pet), the pets listed by
// GET /api/pets?importId=, one audit entry, the console's counts (pet_counts) and
// the catalog's remembered answers changed.
func TestCatalogImport(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		ctx := context.Background()
		a.SeedPet("Rex", 1) // category Dogs
		before := a.Do(handlerstest.Req{Method: http.MethodGet, Path: "/api/pets?limit=5", Key: a.Customer}).Want(t, http.StatusOK)
		version, err := a.Store.CatalogVersion(ctx)
		if err != nil {
			t.Fatal(err)
		}
		const n = 10_000
		file, stock, sold := importFile(n, a.Clock.Now().UTC())

		r := postImport(a, file).Want(t, http.StatusAccepted)
		var im importAnswer
		r.Decode(t, &im)
		if im.Status != db.ImportQueued || im.Rows != n || im.Processed != 0 || im.FinishedAt != nil || im.Errors == nil || len(im.Errors) != 0 {
			t.Fatalf("import %+v, want queued with %d rows", im, n)
		}
		if got, want := r.Header.Get("Location"), "/api/imports/"+handlerstest.Itoa(im.ID); got != want {
			t.Errorf("Location = %q, want %q", got, want)
		}
		postImport(a, "name,category\nMax,Dogs\n").Want(t, http.StatusConflict, db.EImportRunning)
		if got := count(t, a, `SELECT count(*) FROM imports`); got != 1 {
			t.Errorf("%d imports stored, want 1 (the refused one stored nothing)", got)
		}
		if got := count(t, a, `SELECT count(*) FROM pets`); got != 1 {
			t.Fatalf("%d pets before the job ran, want 1", got)
		}

		began := time.Now()
		if err := a.Handler.Imports.Run(ctx, im.ID); err != nil {
			t.Fatal(err)
		}
		t.Logf("the job wrote %d pets in %s", n, time.Since(began).Round(time.Millisecond))
		a.GetJSON(t, a.Staff, "/api/imports/"+handlerstest.Itoa(im.ID), &im)
		if im.Status != db.ImportSucceeded || im.Rows != n || im.Processed != n || im.FinishedAt == nil || len(im.Errors) != 0 {
			t.Fatalf("import %+v, want succeeded with %d rows processed", im, n)
		}

		if got := count(t, a, `SELECT count(*) FROM pets p JOIN inventory i ON i.pet_id = p.id WHERE p.deleted_at IS NULL`); got != n+1 {
			t.Errorf("%d pets with inventory, want %d", got, n+1)
		}
		if got := count(t, a, `SELECT COALESCE(SUM(quantity), 0) FROM inventory`); got != stock+1 {
			t.Errorf("stock %d, want %d", got, stock+1)
		}
		if got := count(t, a, `SELECT count(*) FROM pets WHERE status = 'sold'`); got != int64(sold) {
			t.Errorf("%d sold, want %d", got, sold)
		}
		if got := count(t, a, `SELECT count(*) FROM pets p JOIN inventory i ON i.pet_id = p.id
			WHERE (p.status = 'sold') <> (i.quantity = 0)`); got != 0 {
			t.Errorf("%d pets whose status contradicts their stock", got)
		}
		if got := count(t, a, `SELECT count(*) FROM categories`); got != 4 {
			t.Errorf("%d categories, want 4 (Dogs kept, three new)", got)
		}
		if got := count(t, a, `SELECT count(*) FROM events WHERE type = 'pet.created'`); got != 1 {
			t.Errorf("%d pet.created events, want 1 (Rex's: an import is one catalog.imported)", got)
		}
		var data []string
		if err := a.Store.DB().SelectContext(ctx, &data, `SELECT data FROM events WHERE type = 'catalog.imported'`); err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf(`{"importId":%d,"rows":%d,"categoriesCreated":3}`, im.ID, n); len(data) != 1 || data[0] != want {
			t.Errorf("catalog.imported events %q, want one, %s", data, want)
		}
		// GET /api/pets?importId= lists the import's pets (the first page,
		// and every pet the import wrote is marked with it).
		var page []db.Pet
		r = a.GetJSON(t, a.Customer, "/api/pets?limit=100&importId="+handlerstest.Itoa(im.ID), &page)
		if len(page) != 100 || page[0].Name != "Pet 0" || handlerstest.NextLink(r) == "" {
			t.Errorf("GET /api/pets?importId= listed %d pets from %+v, want a first page of 100 from Pet 0", len(page), page[0])
		}
		if got := count(t, a, `SELECT count(*) FROM pets WHERE import_id = $1`, im.ID); got != n {
			t.Errorf("%d pets marked with the import, want %d", got, n)
		}
		var none []db.Pet
		a.GetJSON(t, a.Customer, "/api/pets?importId="+handlerstest.Itoa(im.ID+1), &none)
		if len(none) != 0 {
			t.Errorf("another import lists %d pets", len(none))
		}
		if got := count(t, a, `SELECT count(*) FROM audit_log WHERE action = $1 AND target_type = 'import' AND target_id = $2 AND actor_type = 'key'`,
			db.AuditCatalogImport, handlerstest.Itoa(im.ID)); got != 1 {
			t.Errorf("%d catalog.import audit entries for the staff key, want 1", got)
		}
		if got := count(t, a, `SELECT count(*) FROM import_chunks`); got != 0 {
			t.Errorf("%d chunks left", got)
		}
		var last db.Pet
		a.GetJSON(t, a.Customer, "/api/pets?limit=1&q=Pet%209999", &[]*db.Pet{&last})
		if last.Name != "Pet 9999" || last.Price != 999_99 || last.Breed == nil || *last.Breed != "Breed 3" ||
			last.Description == nil || *last.Description != "Line one, with a comma\nline \"two\"" {
			t.Errorf("Pet 9999 reads %+v", last)
		}

		// The console's counts (pet_counts) and the catalog's counter.
		byCat, err := a.Store.CountPetsByCategory(ctx)
		if err != nil {
			t.Fatal(err)
		}
		total := 0
		for _, c := range byCat {
			total += c
		}
		if total != n+1 || len(byCat) != 4 {
			t.Errorf("pet_counts: %v (%d pets), want %d in 4 categories", byCat, total, n+1)
		}
		dash, err := a.Store.CountDashboard(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if dash.Pets[db.StatusSold] != sold || dash.Pets[db.StatusAvailable] != n+1-sold {
			t.Errorf("dashboard counts %v, want %d sold and %d available", dash.Pets, sold, n+1-sold)
		}
		if v, err := a.Store.CatalogVersion(ctx); err != nil || v == version {
			t.Errorf("catalog version %d after the import, %d before (%v)", v, version, err)
		}
		after := a.Do(handlerstest.Req{Method: http.MethodGet, Path: "/api/pets?limit=5", Key: a.Customer,
			Header: map[string]string{"If-None-Match": before.Header.Get("ETag")}}).Want(t, http.StatusOK)
		if after.Header.Get("ETag") == before.Header.Get("ETag") || string(after.Body) == string(before.Body) {
			t.Errorf("GET /api/pets answers as before the import: %s", after.Body)
		}

		// The import is over: another may start.
		postImport(a, "name,category\nMax,Dogs\n").Want(t, http.StatusAccepted)
	})
}

// TestCatalogImportRefused: files the import refuses whole, with 422 and
// their problems, storing nothing; a body of another type (415); an
// unknown import (404).
func TestCatalogImportRefused(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		good, _, _ := importFile(10_000, a.Clock.Now().UTC())
		oneBad := strings.Replace(good, "Pet 5003,Fish,available,", "Pet 5003,Fish,lost,", 1)
		many := "name,category,price\n" + strings.Repeat(",Dogs,1.001\n", 200)

		for _, tc := range []struct {
			name, file string
			problems   int
			first      handlerstest.Problem
		}{
			{"empty", "", 1, problem("file", "is empty: its first row must name the columns (name, category, status, price, breed, birthDate, description, quantity)")},
			{"header only", "name,category\r\n", 1, problem("file", "has a header row and no pets")},
			{"unknown columns", "name,category,colour\nRex,Dogs,brown\n", 1, problem("row 1: colour", "is not a column of an import; the columns are name, category, status, price, breed, birthDate, description, quantity")},
			{"one bad row in 10,000", oneBad, 1, problem("row 5005: status", "must be one of available, pending, sold")},
			{"100 problems at most", many, 100, problem("row 2: name", "is required")},
			// Hostile bytes: NUL, bytes that are not UTF-8, a control
			// character in a column's name.
			{"NUL in a name", "name,category\nRe\x00x,Dogs\n", 1, problem("row 2: name", "must not contain control characters")},
			{"not UTF-8", "name,category,description\nRex,Dogs,caf\xe9\n", 1, problem("row 2: description", "must be valid UTF-8")},
			{"control character in the header", "name,category,a\x01b\nRex,Dogs,x\n", 1, problem("row 1: \"a\\x01b\"", "is not a column of an import; the columns are name, category, status, price, breed, birthDate, description, quantity")},
		} {
			t.Run(tc.name, func(t *testing.T) {
				p := postImport(a, tc.file).Want(t, http.StatusUnprocessableEntity, db.EValidationFailed).Problem(t)
				if len(p.Details) != tc.problems || p.Details[0] != tc.first.Details[0] {
					t.Errorf("%d problems, first %+v; want %d, first %+v", len(p.Details), p.Details[0], tc.problems, tc.first.Details[0])
				}
				for _, table := range []string{"imports", "import_chunks", "pets", "river_job"} {
					if n := count(t, a, `SELECT count(*) FROM `+table); n != 0 {
						t.Errorf("%d rows in %s after a refused import", n, table)
					}
				}
			})
		}
		a.Do(handlerstest.Req{Method: http.MethodPost, Path: "/api/pets/import", Key: a.Staff, Body: "name,category\nRex,Dogs\n"}).
			Want(t, http.StatusUnsupportedMediaType, "unsupported_media_type")
		a.Do(handlerstest.Req{Method: http.MethodPost, Path: "/api/pets/import", Key: a.Customer, Body: "name,category\nRex,Dogs\n", ContentType: "text/csv"}).
			Want(t, http.StatusForbidden, db.EForbidden)
		a.Do(handlerstest.Req{Method: http.MethodGet, Path: "/api/imports/99", Key: a.Staff}).Want(t, http.StatusNotFound, db.ENotFound)
		a.Do(handlerstest.Req{Method: http.MethodGet, Path: "/api/imports/x", Key: a.Staff}).Want(t, http.StatusBadRequest, db.EBadRequest)
	})
}

// problem is an Error object whose first detail is field and message.
func problem(field, message string) handlerstest.Problem {
	var p handlerstest.Problem
	p.Details = append(p.Details, struct {
		Field   string `json:"field"`
		Message string `json:"message"`
	}{field, message})
	return p
}
