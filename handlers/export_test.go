package handlers_test

import (
	"context"
	"encoding/csv"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"petstore/db"
	"petstore/db/dbtest"
	"petstore/handlers/handlerstest"
	"petstore/web/ordercsv"
)

// exportFixture places orders on three days (the day before the clock's,
// its day, the day after) through the storefront's checkout and the API,
// one of them cancelled, with buyers whose names a CSV must quote or
// neutralise, and returns the ids of the clock's day's orders, in the
// order they were placed.
func exportFixture(t *testing.T, a *handlerstest.App) (day time.Time, ids []int64) {
	t.Helper()
	ctx := context.Background()
	now := a.Clock.Now()
	day = now.UTC().Truncate(24 * time.Hour)
	pet := a.SeedPet(`Rex, the "Great"`, 50)
	place := func(at time.Time, buyer db.NewCheckout) int64 {
		t.Helper()
		a.Clock.Set(at)
		ck, err := a.Store.PlaceCheckout(ctx, "shopper-"+buyer.Email, 100, buyer, []db.NewOrder{{PetID: &pet.ID, Quantity: handlerstest.Ptr(int64(2))}})
		if err != nil {
			t.Fatal(err)
		}
		return ck.Orders[0].ID
	}
	place(now.Add(-24*time.Hour), db.NewCheckout{Name: "Yesterday", Email: "y@example.com"})
	quoted := place(now, db.NewCheckout{Name: "Ada Lovelace", Email: "ada@example.com", Phone: "+44 20 7946 0000"})
	formula := place(now.Add(time.Minute), db.NewCheckout{Name: "Eve", Email: "eve@example.com"})
	a.Clock.Set(now.Add(2 * time.Minute))
	apiOrder, err := a.Store.PlaceOrder(ctx, db.Owner{APIKeyID: a.CustID}, db.NewOrder{PetID: &pet.ID, Quantity: handlerstest.Ptr(int64(1))})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Store.CancelOrder(ctx, apiOrder.ID, nil); err != nil {
		t.Fatal(err)
	}
	place(now.Add(24*time.Hour), db.NewCheckout{Name: "Tomorrow", Email: "t@example.com"})
	a.Clock.Set(now)
	// Text the checkout form refuses today but older rows, or a future
	// form, may hold: quotes, a comma and a line break; a formula.
	if _, err := a.Store.DB().ExecContext(ctx, `UPDATE checkouts SET name = $1 WHERE email = 'ada@example.com'`, "Ada \"Countess\", Lovelace\nof Ockham"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Store.DB().ExecContext(ctx, `UPDATE checkouts SET name = $1 WHERE email = 'eve@example.com'`, "=cmd|' /C calc'!A0"); err != nil {
		t.Fatal(err)
	}
	return day, []int64{quoted, formula, apiOrder.ID}
}

// readCSV parses an export, failing on anything RFC 4180 does not allow.
func readCSV(t *testing.T, body []byte) [][]string {
	t.Helper()
	r := csv.NewReader(strings.NewReader(string(body)))
	r.FieldsPerRecord = len(ordercsv.Header)
	rows, err := r.ReadAll()
	if err != nil {
		t.Fatalf("not CSV: %v\n%s", err, body)
	}
	if len(rows) == 0 || !slices.Equal(rows[0], ordercsv.Header) {
		t.Fatalf("header = %v, want %v", rows, ordercsv.Header)
	}
	return rows[1:]
}

func TestOrdersExport(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		day, ids := exportFixture(t, a)
		d := day.Format(time.DateOnly)
		before := lastAuditID(t, a)
		r := a.Do(handlerstest.Req{Method: "GET", Path: "/api/store/orders/export?from=" + d + "&to=" + d, Key: a.Staff}).Want(t, http.StatusOK)
		if got := r.Header.Get("Content-Type"); got != "text/csv; charset=utf-8" {
			t.Errorf("Content-Type = %q", got)
		}
		if got, want := r.Header.Get("Content-Disposition"), `attachment; filename="orders-`+d+`-`+d+`.csv"`; got != want {
			t.Errorf("Content-Disposition = %q, want %q", got, want)
		}
		if got := r.Header.Get("Cache-Control"); got != "private, no-store" {
			t.Errorf("Cache-Control = %q, want private, no-store", got)
		}
		if !strings.HasPrefix(string(r.Body), strings.Join(ordercsv.Header, ",")+"\r\n") || !strings.HasSuffix(string(r.Body), "\r\n") {
			t.Errorf("records do not end in CRLF (RFC 4180):\n%q", r.Body)
		}
		rows := readCSV(t, r.Body)
		var got []int64
		for _, row := range rows {
			got = append(got, mustInt(t, row[0]))
		}
		if !slices.Equal(got, ids) {
			t.Fatalf("exported orders %v, want the day's %v in the order placed", got, ids)
		}
		placed := a.Clock.Now().UTC().Format(time.RFC3339Nano)
		quoted := rows[0]
		want := []string{itoa(ids[0]), placed, quoted[2], `Rex, the "Great"`, "2", "0.00", "0.00", "EUR", "open", "",
			"Ada \"Countess\", Lovelace\nof Ockham", "ada@example.com", "'+44 20 7946 0000"}
		if !slices.Equal(quoted, want) {
			t.Errorf("row = %q,\nwant  %q", quoted, want)
		}
		if !strings.Contains(string(r.Body), `"Ada ""Countess"", Lovelace`+"\r\nof Ockham\"") {
			t.Errorf("the name is not quoted as RFC 4180 says (its line break a CRLF):\n%s", r.Body)
		}
		if got := rows[1][10]; got != "'=cmd|' /C calc'!A0" {
			t.Errorf("customerName = %q, want the formula neutralised with a leading '", got)
		}
		if got := rows[2]; got[8] != "cancelled" || got[10] != "" || got[11] != "" {
			t.Errorf("the API's cancelled order = %q, want status cancelled and no customer", got)
		}
		// Two days: the day before too.
		from := day.AddDate(0, 0, -1).Format(time.DateOnly)
		r = a.Do(handlerstest.Req{Method: "GET", Path: "/api/store/orders/export?from=" + from + "&to=" + d, Key: a.Staff}).Want(t, http.StatusOK)
		if n := len(readCSV(t, r.Body)); n != 4 {
			t.Errorf("two days: %d orders, want 4", n)
		}

		// Each export is in the audit log, with its range.
		entries := auditEntries(t, a, before)
		staffKey, err := a.Store.Authenticate(context.Background(), a.Staff)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != 2 || entries[0].Action != db.AuditOrderExport || entries[0].Actor != db.KeyActor(staffKey.ID, staffKey.Name) ||
			entries[0].Target != (db.Target{Type: "orders", ID: d + "/" + d}) || entries[1].Target.ID != from+"/"+d {
			t.Errorf("audit entries = %+v", entries)
		}

		// OWASP's separator case: Excel in a semicolon locale splits the
		// line at each ;, so a dangerous character after one is neutralised
		// too.
		if _, err := a.Store.DB().ExecContext(context.Background(), `UPDATE checkouts SET name = $1 WHERE email = 'eve@example.com'`, ";=1+1;"); err != nil {
			t.Fatal(err)
		}
		r = a.Do(handlerstest.Req{Method: "GET", Path: "/api/store/orders/export?from=" + d + "&to=" + d, Key: a.Staff}).Want(t, http.StatusOK)
		if got := readCSV(t, r.Body)[1][10]; got != ";'=1+1;" || strings.Contains(string(r.Body), ";=") {
			t.Errorf("customerName = %q, want ;'=1+1; (the formula after the separator neutralised)", got)
		}
	})
}

// TestOrdersExportRefusals: the range is two dates, in order, at most 366
// days apart (both included); anything else is 400 naming the parameter,
// and only staff may export.
func TestOrdersExportRefusals(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		start := a.Clock.Now().UTC().Truncate(24*time.Hour).AddDate(-1, 0, 0)
		day := func(n int) string { return start.AddDate(0, 0, n).Format(time.DateOnly) }
		path := func(q string) string { return "/api/store/orders/export?" + q }
		a.Do(handlerstest.Req{Method: "GET", Path: path("from=" + day(0) + "&to=" + day(365)), Key: a.Staff}).Want(t, http.StatusOK)
		a.Do(handlerstest.Req{Method: "GET", Path: path("from=" + day(0) + "&to=" + day(0)), Key: a.Staff}).Want(t, http.StatusOK)
		for q, field := range map[string]string{
			"from=" + day(0) + "&to=" + day(366): "to",
			"from=" + day(1) + "&to=" + day(0):   "to",
			"to=" + day(0):                       "from",
			"from=" + day(0):                     "to",
			"from=2026-02-30&to=" + day(0):       "from",
			"from=" + day(0) + "&to=tomorrow":    "to",
			"from=20260101&to=" + day(0):         "from",
			"from=%00&to=" + day(0):              "from",
			"from=&to=" + day(0):                 "from",
		} {
			r := a.Do(handlerstest.Req{Method: "GET", Path: path(q), Key: a.Staff}).Want(t, http.StatusBadRequest, db.EBadRequest)
			if p := r.Problem(t); len(p.Details) == 0 || p.Details[0].Field != field {
				t.Errorf("%s: details %+v, want the first naming %s", q, p.Details, field)
			}
		}
		a.Do(handlerstest.Req{Method: "GET", Path: path("from=" + day(0) + "&to=" + day(1)), Key: a.Customer}).Want(t, http.StatusForbidden, db.EForbidden)
		a.Do(handlerstest.Req{Method: "GET", Path: path("from=" + day(0) + "&to=" + day(1))}).Want(t, http.StatusUnauthorized)
	})
}

// TestConsoleOrdersExport: the orders page offers the export, which any
// staff user downloads (a clerk too), audited as theirs.
func TestConsoleOrdersExport(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		day, ids := exportFixture(t, a)
		b := a.SignedIn(t)
		clerk := makeClerk(t, a, handlerstest.StaffName)
		page := b.Get("/staff/orders").WantStatus(http.StatusOK)
		form := page.ID("export-form")
		if form.Length() != 1 || form.AttrOr("action", "") != "/staff/orders/export" || form.AttrOr("method", "") != "get" {
			t.Fatalf("no export form on the orders page")
		}
		if v, _ := page.ID("export-to").Attr("value"); v != day.Format(time.DateOnly) {
			t.Errorf("the form's last day = %q, want today %s", v, day.Format(time.DateOnly))
		}
		d := day.Format(time.DateOnly)
		before := lastAuditID(t, a)
		r := b.Get("/staff/orders/export?from=" + d + "&to=" + d).WantStatus(http.StatusOK)
		if got := r.Header.Get("Content-Type"); got != ordercsv.ContentType {
			t.Errorf("Content-Type = %q", got)
		}
		if got := r.Header.Get("Content-Disposition"); !strings.HasPrefix(got, "attachment;") {
			t.Errorf("Content-Disposition = %q", got)
		}
		rows := readCSV(t, []byte(r.Body))
		if len(rows) != len(ids) {
			t.Errorf("%d rows, want %d", len(rows), len(ids))
		}
		entries := auditEntries(t, a, before)
		if len(entries) != 1 || entries[0].Action != db.AuditOrderExport || entries[0].Actor != db.StaffActor(clerk.ID, clerk.Username) {
			t.Errorf("audit entries = %+v, want one order.export by the clerk", entries)
		}
		for _, q := range []string{"from=" + d, "from=" + d + "&to=" + day.AddDate(2, 0, 0).Format(time.DateOnly), "from=x&to=y"} {
			p := b.Get("/staff/orders/export?" + q).WantStatus(http.StatusUnprocessableEntity)
			// The orders page again, the form open with an error summary
			// that says why (issue 42).
			if p.ID("error-summary").Length() != 1 || p.ID("orders").Length() != 1 {
				t.Errorf("%s: the orders page does not say why:\n%.400s", q, p.Body)
			}
		}
	})
}

// makeClerk makes the staff user username a clerk (SPEC §16).
func makeClerk(t *testing.T, a *handlerstest.App, username string) *db.StaffUser {
	t.Helper()
	ctx := context.Background()
	if _, err := a.Store.DB().ExecContext(ctx, `UPDATE staff_users SET role = 'clerk' WHERE username = $1`, username); err != nil {
		t.Fatal(err)
	}
	u, err := a.Store.FindStaffUserByUsername(ctx, username)
	if err != nil || u.Role != db.RoleClerk {
		t.Fatalf("clerk %s: %+v, %v", username, u, err)
	}
	return u
}

func mustInt(t *testing.T, s string) int64 {
	t.Helper()
	var n int64
	for _, r := range s {
		if r < '0' || r > '9' {
			t.Fatalf("%q is not an id", s)
		}
		n = n*10 + int64(r-'0')
	}
	return n
}

func itoa(n int64) string { return handlerstest.Itoa(n) }

// TestOrdersExportShipDate (issue 42): the export's shipDate is written
// as the API writes the order's shipDate, an RFC 3339 timestamp in UTC
// (SPEC §2, §16: "times are RFC 3339 in UTC, as elsewhere in this API";
// the document's Order.shipDate is format: date-time), never a
// spreadsheet's date or a local time, on both databases.
func TestOrdersExportShipDate(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		pet := a.SeedPet("Rex", 5)
		id := a.PlaceOrder(t, a.Customer, map[string]any{"petId": pet.ID, "quantity": 1})
		ship := a.ShipDate(3).Add(1500 * time.Millisecond).In(time.FixedZone("CET", 3600))
		a.Do(handlerstest.Req{Method: "PATCH", Path: "/api/store/orders/" + itoa(id), Key: a.Staff,
			Body: map[string]any{"shipDate": ship.Format(time.RFC3339Nano)}}).Want(t, http.StatusOK)
		var order struct {
			ShipDate string `json:"shipDate"`
		}
		a.GetJSON(t, a.Staff, "/api/store/orders/"+itoa(id), &order)
		d := a.Clock.Now().UTC().Format(time.DateOnly)
		rows := readCSV(t, a.Do(handlerstest.Req{Method: "GET", Path: "/api/store/orders/export?from=" + d + "&to=" + d, Key: a.Staff}).Want(t, http.StatusOK).Body)
		if len(rows) != 1 {
			t.Fatalf("%d rows exported, want the one order", len(rows))
		}
		if got, want := rows[0][9], handlerstest.JSONTime(ship); got != want || got != order.ShipDate {
			t.Errorf("shipDate cell = %q, want %q, as the API's order has it (%q)", got, want, order.ShipDate)
		}
	})
}
