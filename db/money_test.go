package db_test

import (
	"encoding/json"
	"testing"

	"petstore/db"
)

func TestParseMoney(t *testing.T) {
	for in, want := range map[string]db.Money{
		"0": 0, "0.00": 0, "129": 12900, "129.5": 12950, "129.05": 12905, "9999999.99": 999999999, "007.1": 710,
	} {
		got, err := db.ParseMoney(in)
		if err != nil || got != want {
			t.Errorf("ParseMoney(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-1", "1.234", "12345678", ".5", "5.", "1,50", " 1", "1e3", "abc", "١٢"} {
		if got, err := db.ParseMoney(in); err == nil {
			t.Errorf("ParseMoney(%q) = %d, want an error", in, got)
		}
	}
}

func TestMoneyJSON(t *testing.T) {
	for m, want := range map[db.Money]string{0: `"0.00"`, 5: `"0.05"`, 12950: `"129.50"`, 999999999: `"9999999.99"`} {
		b, err := json.Marshal(m)
		if err != nil || string(b) != want {
			t.Errorf("Marshal(%d) = %s, %v; want %s", m, b, err, want)
		}
	}
}

func TestParseCurrency(t *testing.T) {
	for _, ok := range []string{"EUR", "USD", "GBP", "JPY", "CHF"} {
		if _, err := db.ParseCurrency(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "eur", "EU", "EURO", "XYZ", "E1R"} {
		if _, err := db.ParseCurrency(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestMoneyJSONRoundTrip: an amount goes out as a string with two decimals and
// comes back from it (and from the request form), so API clients written
// in Go, the tests among them, can decode Pet and Order.
func TestMoneyJSONRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want db.Money
	}{
		{`"0.00"`, 0},
		{`"0"`, 0},
		{`"129.5"`, 12950},
		{`"129.05"`, 12905},
		{`"9999999.99"`, db.MaxMoney},
	} {
		var m db.Money
		if err := json.Unmarshal([]byte(tc.in), &m); err != nil || m != tc.want {
			t.Errorf("unmarshal %s = %d (%v), want %d", tc.in, m, err, tc.want)
		}
	}
	for _, bad := range []string{`129.5`, `"12.345"`, `"-1"`, `"abc"`, `""`, `"1e3"`, `{}`} {
		var m db.Money
		if err := json.Unmarshal([]byte(bad), &m); err == nil {
			t.Errorf("unmarshal %s = %d, want an error", bad, m)
		}
	}
	m := db.Money(7)
	if err := json.Unmarshal([]byte(`null`), &m); err != nil || m != 7 {
		t.Errorf("unmarshal null = %d (%v), want it left at 7", m, err)
	}
	type order struct {
		Total db.Money `json:"total"`
	}
	for _, v := range []db.Money{0, 5, 12950, 999_999_999_000} {
		b, err := json.Marshal(order{v})
		if err != nil {
			t.Fatal(err)
		}
		var back order
		if err := json.Unmarshal(b, &back); err != nil || back.Total != v {
			t.Errorf("round trip of %d through %s = %d (%v)", v, b, back.Total, err)
		}
	}
}
