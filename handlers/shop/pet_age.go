package shop

import (
	"strconv"
	"time"
)

// petAge words a pet's age from its birth date (YYYY-MM-DD) on the day
// today: "under a month", "3 months", "2 years", "1 year 4 months". A
// month is complete on the same day of the month (born 15 March: a month
// old on 15 April). "" when there is no date, or it cannot be an age (a
// date after today).
func petAge(birth *string, today time.Time) string {
	if birth == nil {
		return ""
	}
	b, err := time.Parse(time.DateOnly, *birth)
	if err != nil {
		return ""
	}
	today = today.UTC()
	months := (today.Year()-b.Year())*12 + int(today.Month()-b.Month())
	if today.Day() < b.Day() {
		months--
	}
	switch {
	case today.Before(b):
		return ""
	case months < 1:
		return "under a month"
	case months < 12:
		return count(months, "month")
	case months%12 == 0:
		return count(months/12, "year")
	}
	return count(months/12, "year") + " " + count(months%12, "month")
}

// count is "1 month", "3 months".
func count(n int, unit string) string {
	s := strconv.Itoa(n) + " " + unit
	if n != 1 {
		s += "s"
	}
	return s
}
