package shop

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/currency"

	"petstore/db"
	"petstore/views/components"
)

// Price is an amount as shoppers read it: the currency's symbol from
// CLDR's root locale, which is never ambiguous ("€1,299.00", "US$5.00",
// "CA$5.00", "£5.00"), or its code with a space where the currency has no
// sign of its own ("CHF 12.50"). The store has one currency and the shop
// is in English, so digits are grouped by thousands with commas and there
// are always two decimals, like the API's amounts. An unknown or empty
// currency shows the number alone.
func Price(m db.Money, cur string) string {
	n := components.Amount(m)
	sym := currencySymbol(cur)
	switch {
	case sym == "":
		return n
	case endsInLetter(sym):
		return sym + "\u00a0" + n
	}
	if strings.HasPrefix(n, "-") {
		return "-" + sym + n[1:]
	}
	return sym + n
}

// UnitPrice is what one pet costs: its Price, or "No fee" when it costs
// nothing (SPEC §14: price "0.00" means no fee). Totals are always
// amounts (Price), so a sum never reads "No fee".
func UnitPrice(m db.Money, cur string) string {
	if m == 0 {
		return "No fee"
	}
	return Price(m, cur)
}

// currencySymbol is the root-locale symbol of an ISO 4217 code, "" when
// the code is not one.
func currencySymbol(cur string) string {
	if cur == "" {
		return ""
	}
	u, err := currency.ParseISO(cur)
	if err != nil {
		return ""
	}
	return fmt.Sprint(currency.Symbol(u))
}

// endsInLetter tells a code-like symbol ("CHF", "SEK") from a sign ("€").
func endsInLetter(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	return unicode.IsLetter(r)
}
