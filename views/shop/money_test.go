package shop

import (
	"testing"

	"petstore/db"
)

func TestPrice(t *testing.T) {
	for _, tc := range []struct {
		m    db.Money
		cur  string
		want string
	}{
		{12900, "EUR", "€129.00"},
		{0, "EUR", "€0.00"},
		{5, "EUR", "€0.05"},
		{99999999999, "EUR", "€999,999,999.99"},
		{123456700, "USD", "US$1,234,567.00"},
		{1250, "GBP", "£12.50"},
		{1250, "CHF", "CHF\u00a012.50"},
		{1250, "", "12.50"},
		{1250, "ZZZ", "12.50"},
		{-1250, "EUR", "-€12.50"},
	} {
		if got := Price(tc.m, tc.cur); got != tc.want {
			t.Errorf("Price(%d, %q) = %q, want %q", tc.m, tc.cur, got, tc.want)
		}
	}
	if got := UnitPrice(0, "EUR"); got != "No fee" {
		t.Errorf("UnitPrice(0) = %q", got)
	}
	if got := UnitPrice(12900, "EUR"); got != "€129.00" {
		t.Errorf("UnitPrice(12900) = %q", got)
	}
}
