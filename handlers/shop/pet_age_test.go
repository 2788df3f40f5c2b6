package shop

import (
	"testing"
	"time"
)

func TestPetAge(t *testing.T) {
	// Fixed dates: petAge is given its day, it never reads a clock.
	today := time.Date(2027, time.March, 15, 10, 0, 0, 0, time.UTC)
	for born, want := range map[string]string{
		"2027-03-15": "under a month",
		"2027-02-16": "under a month",
		"2027-02-15": "1 month",
		"2026-12-15": "3 months",
		"2026-03-16": "11 months",
		"2026-03-15": "1 year",
		"2025-03-15": "2 years",
		"2025-11-14": "1 year 4 months",
		"2024-02-29": "3 years",
		"2027-03-16": "", // after today: not an age
		"15/03/2020": "",
		"":           "",
	} {
		if got := petAge(&born, today); got != want {
			t.Errorf("born %s: %q, want %q", born, got, want)
		}
	}
	if got := petAge(nil, today); got != "" {
		t.Errorf("no birth date: %q", got)
	}
	// Born on the 31st: a month old on the last day of a shorter month
	// only once that month's 31st would have come, i.e. the next month.
	born := "2027-01-31"
	if got := petAge(&born, time.Date(2027, time.February, 28, 0, 0, 0, 0, time.UTC)); got != "under a month" {
		t.Errorf("31 Jan to 28 Feb: %q", got)
	}
	if got := petAge(&born, time.Date(2027, time.March, 1, 0, 0, 0, 0, time.UTC)); got != "1 month" {
		t.Errorf("31 Jan to 1 Mar: %q", got)
	}
}
