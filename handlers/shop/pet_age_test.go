package shop

import (
	"fmt"
	"testing"
	"time"

	"petstore/db/dbtest"
)

func TestPetAge(t *testing.T) {
	// petAge is given its day and never reads a clock; the days here are
	// placed around 15 March of the present year (dbtest.Present), so the
	// test holds whatever the date.
	y := dbtest.Present(t).Year()
	day := func(years int, m time.Month, d int) string {
		return time.Date(y+years, m, d, 0, 0, 0, 0, time.UTC).Format(time.DateOnly)
	}
	today := time.Date(y, time.March, 15, 10, 0, 0, 0, time.UTC)
	leap := y - 1
	for leap%4 != 0 || (leap%100 == 0 && leap%400 != 0) {
		leap--
	}
	leapAge := fmt.Sprintf("%d year", y-leap)
	if y-leap > 1 {
		leapAge += "s"
	}
	for born, want := range map[string]string{
		day(0, time.March, 15):        "under a month",
		day(0, time.February, 16):     "under a month",
		day(0, time.February, 15):     "1 month",
		day(-1, time.December, 15):    "3 months",
		day(-1, time.March, 16):       "11 months",
		day(-1, time.March, 15):       "1 year",
		day(-2, time.March, 15):       "2 years",
		day(-2, time.November, 14):    "1 year 4 months",
		fmt.Sprintf("%d-02-29", leap): leapAge,
		day(0, time.March, 16):        "", // after today: not an age
		"15/03/2020":                  "",
		"":                            "",
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
	born := day(0, time.January, 31)
	if got := petAge(&born, time.Date(y, time.February, 28, 0, 0, 0, 0, time.UTC)); got != "under a month" {
		t.Errorf("31 Jan to 28 Feb: %q", got)
	}
	if got := petAge(&born, time.Date(y, time.March, 1, 0, 0, 0, 0, time.UTC)); got != "1 month" {
		t.Errorf("31 Jan to 1 Mar: %q", got)
	}
}
