package ordercsv

import (
	"database/sql"
	"slices"
	"testing"
	"time"

	"petstore/db"
)

func TestNeutralise(t *testing.T) {
	for in, want := range map[string]string{
		"=cmd": "'=cmd", "+44 1": "'+44 1", "-2": "'-2", "@sum": "'@sum", "\tx": "'\tx", "\rx": "'\rx",
		"Ada": "Ada", "": "", "a=b": "a=b", " =x": " =x", "'=x": "'=x",
	} {
		if got := Neutralise(in); got != want {
			t.Errorf("Neutralise(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRecord(t *testing.T) {
	at := time.Date(2026, 3, 1, 10, 0, 0, 500, time.FixedZone("CET", 3600))
	ship := at.Add(48 * time.Hour)
	o := &db.ExportedOrder{ID: 7, PlacedAt: at, PetID: 3, PetName: "Rex", Quantity: 2, UnitPrice: 12950, Total: 25900,
		Currency: "EUR", Status: db.OrderComplete, ShipDate: &ship,
		BuyerName: sql.NullString{String: "=HYPERLINK()", Valid: true}, BuyerEmail: sql.NullString{String: "ada@example.com", Valid: true}}
	want := []string{"7", "2026-03-01T09:00:00.0000005Z", "3", "Rex", "2", "129.50", "259.00", "EUR", "complete",
		"2026-03-03T09:00:00.0000005Z", "'=HYPERLINK()", "ada@example.com", ""}
	if got := Record(o); !slices.Equal(got, want) || len(got) != len(Header) {
		t.Errorf("Record = %q,\nwant     %q", got, want)
	}
	r, err := ParseRange("2026-01-01", "2026-12-31")
	if err != nil || Filename(r) != "orders-2026-01-01-2026-12-31.csv" || r.Days() != 365 {
		t.Errorf("range %+v (%v): %s, %d days", r, err, Filename(r), r.Days())
	}
}
