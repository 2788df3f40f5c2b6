package components

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/currency"

	"petstore/db"
)

// Amount is an amount as people read it in the storefront and the
// console: thousands grouped with commas, always two decimals
// ("1,129.00"). Each page adds the currency its own way.
func Amount(m db.Money) string {
	s, sign := m.String(), ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	whole, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	for i, r := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return sign + b.String() + "." + frac
}

// Price is an amount as shoppers and staff read it (one format for the
// storefront and the console): the currency's symbol from
// CLDR's root locale, which is never ambiguous ("€1,299.00", "US$5.00",
// "CA$5.00", "£5.00"), or its code with a space where the currency has no
// sign of its own ("CHF 12.50"). The store has one currency and the shop
// is in English, so digits are grouped by thousands with commas and there
// are always two decimals, like the API's amounts. An unknown or empty
// currency shows the number alone.
func Price(m db.Money, cur string) string {
	n := Amount(m)
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
