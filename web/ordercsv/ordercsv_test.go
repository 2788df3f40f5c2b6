package ordercsv

import (
	"bytes"
	"database/sql"
	"encoding/csv"
	"slices"
	"strings"
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

// TestNeutraliseAfterSeparators: a dangerous character right after a
// separator of any locale is neutralised as at the start (OWASP's CSV
// injection cases), and an export row holding such a cell, read as a
// spreadsheet of either locale reads it (by commas, honouring quotes; by
// semicolons, where a quote counts only at the start of a cell), has no
// cell a spreadsheet would run.
func TestNeutraliseAfterSeparators(t *testing.T) {
	for in, want := range map[string]string{
		";=1+1;":                      ";'=1+1;",
		`=1+2";=1+2`:                  `'=1+2";'=1+2`,
		`=1+2'" ;,=1+2`:               `'=1+2'" ;,'=1+2`,
		`a;"=HYPERLINK(1)"`:           `a;'"=HYPERLINK(1)"`,
		",@x,+y;-z;\tw;\rv":           ",'@x,'+y;'-z;'\tw;'\rv",
		"Ada;Bob":                     "Ada;Bob",
		"Smith, Ada":                  "Smith, Ada",
		"1,5;2":                       "1,5;2",
		"x;":                          "x;",
		"@SUM(1+1)*cmd|' /C calc'!A0": "'@SUM(1+1)*cmd|' /C calc'!A0",
	} {
		if got := Neutralise(in); got != want {
			t.Errorf("Neutralise(%q) = %q, want %q", in, got, want)
		}
	}
	for _, name := range []string{";=1+1;", `=1+2";=1+2`, `=1+2'" ;,=1+2`, `a;"=1+1"`, "x;-2+3+cmd|' /C calc'!A0", "Rex;@SUM(A1)", ",=1+1,"} {
		var buf bytes.Buffer
		w := csv.NewWriter(&buf)
		w.UseCRLF = true
		_ = w.Write(Record(&db.ExportedOrder{ID: 7, PlacedAt: time.Now(), PetID: 3, PetName: name, Quantity: 1,
			Currency: "EUR", Status: db.OrderOpen, BuyerName: sql.NullString{String: name, Valid: true}}))
		w.Flush()
		for _, sep := range []rune{',', ';'} {
			r := csv.NewReader(strings.NewReader(buf.String()))
			r.Comma, r.LazyQuotes, r.FieldsPerRecord = sep, true, -1
			cells, err := r.Read()
			if err != nil {
				t.Fatalf("%q read by %q: %v", buf.String(), sep, err)
			}
			for _, cell := range cells {
				if cell != "" && strings.ContainsRune("=+-@\t\r", rune(cell[0])) {
					t.Errorf("the row %q read by %q has a cell a spreadsheet runs: %q", buf.String(), sep, cell)
				}
			}
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
