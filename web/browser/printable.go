package browser

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Printable is a form value as a page may show it again: bytes that are
// not UTF-8 and control characters become U+FFFD, so a refused value is
// seen (and can be fixed) without the page echoing text that no page
// should hold. Line breaks (\n, \r) stay when lineBreaks is set (the
// console's forms, whose descriptions are text areas, and its file names,
// which are then folded to one line) and become U+FFFD otherwise (the
// shop's one-line search and checkout fields).
func Printable(s string, lineBreaks bool) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) && !(lineBreaks && (r == '\n' || r == '\r')) {
			return utf8.RuneError
		}
		return r
	}, strings.ToValidUTF8(s, string(utf8.RuneError)))
}
