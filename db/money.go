package db

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"golang.org/x/text/currency"
)

// Money is an amount in minor units (cents) of the store's one currency
// (SPEC §14). Integers keep sums exact; the wire form is a string with
// exactly two decimals, so no client reads a float.
type Money int64

// MaxMoney is the largest amount SPEC §14 accepts: 9,999,999.99.
const MaxMoney Money = 999_999_999

// moneyPattern is the request form of an amount (SPEC §14).
var moneyPattern = regexp.MustCompile(`^\d{1,7}(\.\d{1,2})?$`)

// moneyOutPattern is the response form of an amount: two decimals, and as
// many whole digits as a total (unit price × up to 1,000 units) needs.
var moneyOutPattern = regexp.MustCompile(`^\d{1,16}\.\d{2}$`)

// ParseMoney reads an amount in the request form "129", "129.5" or
// "129.00". Anything else is refused with why.
func ParseMoney(s string) (Money, error) {
	if !moneyPattern.MatchString(s) {
		return 0, fmt.Errorf(`must be an amount like "129.00": up to 7 digits, then at most 2 decimals`)
	}
	whole, frac, _ := strings.Cut(s, ".")
	for len(frac) < 2 {
		frac += "0"
	}
	n, err := strconv.ParseInt(whole+frac, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("must be an amount: %w", err)
	}
	return Money(n), nil
}

// String is the amount with exactly two decimals: "129.00".
func (m Money) String() string {
	sign := ""
	if m < 0 {
		sign, m = "-", -m
	}
	return fmt.Sprintf("%s%d.%02d", sign, m/100, m%100)
}

// MarshalJSON writes the amount as a JSON string ("129.00").
func (m Money) MarshalJSON() ([]byte, error) {
	return []byte(`"` + m.String() + `"`), nil
}

// UnmarshalJSON reads an amount written as a JSON string, in the response
// form ("129.00", totals included) or the request form ("129.5"), so a
// client decoding the API's Pet or Order (the tests among them) gets the
// amount back. null leaves it as it is, as encoding/json does for numbers.
func (m *Money) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("money: want a JSON string such as \"129.00\", got %s", b)
	}
	if moneyOutPattern.MatchString(s) {
		n, err := strconv.ParseInt(strings.Replace(s, ".", "", 1), 10, 64)
		if err != nil {
			return fmt.Errorf("money %q: %w", s, err)
		}
		*m = Money(n)
		return nil
	}
	v, err := ParseMoney(s)
	if err != nil {
		return fmt.Errorf("money %q: %w", s, err)
	}
	*m = v
	return nil
}

// Times is the amount of n units.
func (m Money) Times(n int64) Money { return m * Money(n) }

// DefaultCurrency is the store's currency when PETSTORE_CURRENCY is unset.
const DefaultCurrency = "EUR"

// ParseCurrency checks an ISO 4217 code ("EUR", "USD"): three upper-case
// letters naming a currency that exists.
func ParseCurrency(s string) (string, error) {
	if len(s) != 3 || strings.ToUpper(s) != s {
		return "", fmt.Errorf("must be an ISO 4217 code of three capital letters, such as EUR")
	}
	if _, err := currency.ParseISO(s); err != nil {
		return "", fmt.Errorf("%q is not an ISO 4217 currency", s)
	}
	return s, nil
}
