package components

import (
	"testing"

	"petstore/db"
)

func TestAmount(t *testing.T) {
	for m, want := range map[db.Money]string{
		0: "0.00", 5: "0.05", 12900: "129.00", 112900: "1,129.00", 99999999: "999,999.99",
		999_999_999_000: "9,999,999,990.00", -123456: "-1,234.56",
	} {
		if got := Amount(m); got != want {
			t.Errorf("Amount(%d) = %q, want %q", m, got, want)
		}
	}
}
