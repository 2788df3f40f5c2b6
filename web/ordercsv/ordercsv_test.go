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
	// A time of the real present, given in another zone: the cells are UTC.
	at := time.Now().Truncate(time.Second).Add(500).In(time.FixedZone("CET", 3600))
	utc := func(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.0000000Z") }
	ship := at.Add(48 * time.Hour)
	o := &db.ExportedOrder{ID: 7, PlacedAt: at, PetID: 3, PetName: "Rex", Quantity: 2, UnitPrice: 12950, Total: 25900,
		Currency: "EUR", Status: db.OrderComplete, ShipDate: &ship,
		BuyerName: sql.NullString{String: "=HYPERLINK()", Valid: true}, BuyerEmail: sql.NullString{String: "ada@example.com", Valid: true}}
	want := []string{"7", utc(at), "3", "Rex", "2", "129.50", "259.00", "EUR", "complete",
		utc(ship), "'=HYPERLINK()", "ada@example.com", ""}
	if got := Record(o); !slices.Equal(got, want) || len(got) != len(Header) {
		t.Errorf("Record = %q,\nwant     %q", got, want)
	}
	from := time.Now().UTC()
	to := from.AddDate(0, 0, 364)
	f, l := from.Format(time.DateOnly), to.Format(time.DateOnly)
	r, err := ParseRange(f, l)
	if err != nil || Filename(r) != "orders-"+f+"-"+l+".csv" || r.Days() != 365 {
		t.Errorf("range %+v (%v): %s, %d days", r, err, Filename(r), r.Days())
	}
}
