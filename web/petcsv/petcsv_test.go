package petcsv_test

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"petstore/db"
	"petstore/web/petcsv"
)

var today = time.Now().UTC().Truncate(24 * time.Hour)

// read reads file and returns the rows emitted (name/category/stock) and
// the refusal's details.
func read(t *testing.T, file string) ([]string, []db.FieldError, error) {
	t.Helper()
	var got []string
	n, err := petcsv.Read(strings.NewReader(file), today, func(r *db.CatalogRow) error {
		got = append(got, fmt.Sprintf("%s/%s/%d", *r.Name, r.CategoryName(), r.Stock()))
		return nil
	})
	var e *db.Error
	if errors.As(err, &e) {
		return got, e.Details, err
	}
	if err == nil && n != int64(len(got)) {
		t.Errorf("rows = %d, emitted %d", n, len(got))
	}
	return got, nil, err
}

func TestReadAccepts(t *testing.T) {
	past := today.AddDate(-1, 0, 0).Format(time.DateOnly)
	for _, tc := range []struct {
		name, file string
		want       []string
	}{
		{"every column", "name,category,status,price,breed,birthDate,description,quantity\n" +
			"Rex,Dogs,available,850.00,Shepherd," + past + ",Good dog,3\n", []string{"Rex/Dogs/3"}},
		{"any order, default stock", "category,name\nCats,Milo\n", []string{"Milo/Cats/1"}},
		{"BOM", "\xEF\xBB\xBFname,category\nMilo,Cats\n", []string{"Milo/Cats/1"}},
		{"CRLF", "name,category\r\nMilo,Cats\r\nNala,Cats\r\n", []string{"Milo/Cats/1", "Nala/Cats/1"}},
		{"quoted newline", "name,category,description\n\"Milo\",Cats,\"line one\r\nline two, with \"\"quotes\"\"\"\nNala,Cats,\n",
			[]string{"Milo/Cats/1", "Nala/Cats/1"}},
		{"sold without quantity", "name,category,status\nMilo,Cats,sold\n", []string{"Milo/Cats/0"}},
		{"stock 0 is sold", "name,category,quantity\nMilo,Cats,0\n", []string{"Milo/Cats/0"}},
		{"no final newline", "name,category\nMilo,Cats", []string{"Milo/Cats/1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, details, err := read(t, tc.file)
			if err != nil {
				t.Fatalf("err = %v %v", err, details)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("rows (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		want       []db.FieldError
	}{
		{"empty", "", []db.FieldError{{Field: "file", Message: "is empty: its first row must name the columns (name, category, status, price, breed, birthDate, description, quantity)"}}},
		{"header only", "name,category\r\n", []db.FieldError{{Field: "file", Message: "has a header row and no pets"}}},
		{"unknown columns", "name,category,colour,size\nRex,Dogs,brown,L\n", []db.FieldError{
			{Field: "row 1: colour", Message: "is not a column of an import; the columns are name, category, status, price, breed, birthDate, description, quantity"},
			{Field: "row 1: size", Message: "is not a column of an import; the columns are name, category, status, price, breed, birthDate, description, quantity"},
		}},
		{"duplicate and missing", "name,name\nRex,Rex\n", []db.FieldError{
			{Field: "row 1: name", Message: "appears more than once"},
			{Field: "row 1: category", Message: "is a required column and is missing"},
		}},
		{"row problems name row and column", "name,category,price,status,quantity\nRex,Dogs,1.00,,\n,Dogs,abc,pending,\nMax,Dogs,,available,0\n", []db.FieldError{
			{Field: "row 3: name", Message: "is required"},
			{Field: "row 3: price", Message: `must be an amount like "129.00": up to 7 digits, then at most 2 decimals`},
			{Field: "row 3: status", Message: "a new pet is available or sold; pending comes from orders"},
			{Field: "row 4: quantity", Message: "must be at least 1 for an available pet (a pet without stock is sold)"},
		}},
		{"quoted newline keeps the row number", "name,category,quantity\nRex,Dogs,\"1\n2\"\nMax,Dogs,-1\n", []db.FieldError{
			{Field: "row 2: quantity", Message: "must be a whole number from 0 to 1000000"},
			{Field: "row 3: quantity", Message: "must be from 0 to 1000000"},
		}},
		{"bare quote", "name,category\nRex,Dogs\nMa\"x,Dogs\n", []db.FieldError{
			{Field: "row 3", Message: "is not valid CSV: bare \" in non-quoted-field (line 3, column 3)"},
		}},
		{"cell count", "name,category\nRex,Dogs,extra\n", []db.FieldError{{Field: "row 2", Message: "has 3 cells where the header has 2"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, details, err := read(t, tc.file)
			if db.ErrorCode(err) != db.EValidationFailed {
				t.Fatalf("err = %v, want validation_failed", err)
			}
			if diff := cmp.Diff(tc.want, details); diff != "" {
				t.Errorf("details (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadListsAtMost100Problems(t *testing.T) {
	var b strings.Builder
	b.WriteString("name,category\n")
	for range 500 {
		b.WriteString(",Dogs\n")
	}
	_, details, err := read(t, b.String())
	if db.ErrorCode(err) != db.EValidationFailed {
		t.Fatalf("err = %v", err)
	}
	if len(details) != petcsv.MaxProblems {
		t.Fatalf("%d problems, want %d", len(details), petcsv.MaxProblems)
	}
	if got, want := details[99].Field, "row 101: name"; got != want {
		t.Errorf("last problem %q, want %q", got, want)
	}
}

// One bad row among many: nothing after it is emitted, and it is named.
func TestReadOneBadRowInTenThousand(t *testing.T) {
	var b strings.Builder
	b.WriteString("name,category,price\n")
	for i := range 10_000 {
		price := "1.00"
		if i == 7_000 {
			price = "1.001"
		}
		fmt.Fprintf(&b, "Pet %d,Dogs,%s\n", i, price)
	}
	got, details, err := read(t, b.String())
	if db.ErrorCode(err) != db.EValidationFailed || len(details) != 1 || details[0].Field != "row 7002: price" {
		t.Fatalf("err = %v, details %v", err, details)
	}
	if len(got) != 7_000 {
		t.Errorf("emitted %d rows before the bad one, want 7000", len(got))
	}
}

// TestReadBoundsRecords: a header past MaxColumns cells or MaxRecordBytes,
// or a row past MaxRecordBytes, is one problem, found before encoding/csv
// has held more of it than that; rows before a long one are read as usual,
// and a row of the longest description quoted stays within the bound.
func TestReadBoundsRecords(t *testing.T) {
	commas := strings.Repeat(",", 1<<20)
	for _, tc := range []struct {
		name, file string
		want       []db.FieldError
	}{
		{"a mebibyte of commas as the header", commas + "\nRex,Dogs\n", []db.FieldError{{Field: "row 1",
			Message: "has more than 64 cells: the header names the columns (name, category, status, price, breed, birthDate, description, quantity)"}}},
		{"a header of 65 cells", "name,category" + strings.Repeat(",x", 63) + "\nRex,Dogs\n", []db.FieldError{{Field: "row 1",
			Message: "has more than 64 cells: the header names the columns (name, category, status, price, breed, birthDate, description, quantity)"}}},
		{"a long quoted header", `"` + strings.Repeat("a\n", 40<<10) + `",name,category` + "\nRex,Dogs\n", []db.FieldError{{Field: "row 1",
			Message: "is longer than 64 KiB: the header names the columns (name, category, status, price, breed, birthDate, description, quantity)"}}},
		{"a mebibyte of commas as a row", "name,category\nRex,Dogs\n" + commas + "\nMax,Dogs\n", []db.FieldError{{Field: "row 3",
			Message: "has more than 64 cells where the header has 2"}}},
		{"a long row", "name,category\nRex,Dogs\n" + strings.Repeat("a", 1<<20) + ",Dogs\nMax,Dogs\n", []db.FieldError{{Field: "row 3",
			Message: "is longer than 64 KiB, more than any pet's row can be"}}},
		{"a row longer within quotes", "name,category\nRex,Dogs\n\"" + strings.Repeat("a,\n", 30<<10) + "\",Dogs\nMax,Dogs\n", []db.FieldError{{Field: "row 3",
			Message: "is longer than 64 KiB, more than any pet's row can be"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, details, err := read(t, tc.file)
			if db.ErrorCode(err) != db.EValidationFailed {
				t.Fatalf("err = %v, want validation_failed", err)
			}
			if diff := cmp.Diff(tc.want, details); diff != "" {
				t.Errorf("details (-want +got):\n%s", diff)
			}
		})
	}
	// 64 cells: the header's problems, one per unknown column, are listed.
	_, details, err := read(t, "name,category"+strings.Repeat(",x", 62)+"\nRex,Dogs\n")
	if db.ErrorCode(err) != db.EValidationFailed || len(details) != 62 {
		t.Errorf("64 cells: %v, %d problems, want 62 (one per unknown column)", err, len(details))
	}
	// The longest description, of 4-byte characters and quotes (doubled).
	desc := strings.Repeat(`🐕""`, 1000)
	got, details, err := read(t, "name,category,description\nRex,Dogs,\""+desc+"\"\n")
	if err != nil || len(got) != 1 {
		t.Errorf("the longest description: %v %v", err, details)
	}
}

// TestReadKeepsMemoryBounded: reading a header of a mebibyte of commas
// allocates a few times MaxRecordBytes, not a few hundred megabytes (a cell,
// and a problem, for each comma).
func TestReadKeepsMemoryBounded(t *testing.T) {
	file := strings.Repeat(",", 1<<20) + "\n"
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, _ = petcsv.Read(strings.NewReader(file), today, nil)
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
		t.Errorf("reading a header of a MiB of commas allocated %d KiB, want under 1 MiB", got>>10)
	}
}
