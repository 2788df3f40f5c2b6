package main

import (
	"bytes"
	"io"
	"testing"
	"time"

	"petstore/db"
	"petstore/web/imports"
	"petstore/web/petcsv"
)

func TestImportCSV(t *testing.T) {
	// A million pets with every column fit the import's 50 MiB.
	if size := csvSize(db.MaxImportRows); size > imports.MaxBytes {
		t.Errorf("a million rows make %d bytes, over %d", size, imports.MaxBytes)
	}
	// Every row is one the import takes.
	var b bytes.Buffer
	if err := writeCSV(&b, 5000); err != nil {
		t.Fatal(err)
	}
	if int64(b.Len()) != csvSize(5000) {
		t.Errorf("csvSize(5000) = %d, file %d", csvSize(5000), b.Len())
	}
	today := time.Now().UTC().Truncate(24 * time.Hour)
	rows, err := petcsv.Read(&b, today, nil)
	if err != nil || rows != 5000 {
		t.Errorf("petcsv.Read: %d rows, %v", rows, err)
	}
}

func TestParseImport(t *testing.T) {
	o, err := parseFlags([]string{"-import", "100000,1_000_000"}, io.Discard)
	if err != nil || len(o.Import) != 2 || o.Import[1] != 1_000_000 {
		t.Errorf("-import: %+v, %v", o.Import, err)
	}
	if _, err := parseFlags([]string{"-import", "ten"}, io.Discard); err == nil {
		t.Error("-import ten accepted")
	}
}

func TestRateBetween(t *testing.T) {
	s := time.Second
	curve := []progressAt{{0, 0}, {1 * s, 0}, {2 * s, 100}, {3 * s, 300}, {4 * s, 600}, {5 * s, 1000}}
	if got := rateBetween(curve, 100, 300); got != 200 {
		t.Errorf("100 to 300 rows: %v rows/s, want 200", got)
	}
	if got := rateBetween(curve, 700, 1000); got != 400 { // from 600 at 4 s
		t.Errorf("700 to 1000 rows: %v rows/s, want 400 (600 at 4 s to 1000 at 5 s)", got)
	}
	if got := rateBetween([]progressAt{{0, 0}, {s, 1000}}, 100, 300); got != 0 {
		t.Errorf("one jump: %v rows/s, want 0 (unknown)", got)
	}
}
