package components

import (
	"strings"

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
