package db

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Field limits of SPEC §2.
const (
	MaxNameLen           = 100
	MaxDescriptionLen    = 500
	MaxOrderQuantity     = 1000
	MaxInventoryQuantity = 1_000_000
)

// checkName trims a name and records why it is unacceptable, if it is; a
// missing name (nil) is required. Control characters are looked for before trimming: a tab or a U+0085
// at the end is trimmable space to strings.TrimSpace but a control
// character to SPEC §2 and to the API document's pattern.
func checkName(p *Problems, field string, name *string) {
	if name == nil {
		p.Add(field, "is required")
		return
	}
	control := hasControl(*name)
	*name = strings.TrimSpace(*name)
	n := utf8.RuneCountInString(*name)
	switch {
	case !utf8.ValidString(*name):
		p.Add(field, "must be valid UTF-8")
	case control:
		p.Add(field, "must not contain control characters")
	case n == 0:
		p.Add(field, "is required")
	case n > MaxNameLen:
		p.Add(field, "must be at most %d characters", MaxNameLen)
	}
}

func hasControl(s string) bool {
	return strings.IndexFunc(s, unicode.IsControl) >= 0
}

// checkDescription records why a description is unacceptable, if it is:
// longer than max, not UTF-8, or holding a control character other than
// a line break (a textarea sends CRLF). PostgreSQL's text cannot hold NUL
// at all; the rest would only ever be an attack on whoever reads it.
func checkDescription(p *Problems, field string, s string, max int) {
	checkText(p, field, s, s, max)
}

// trimDescription trims *s and checks it as checkDescription does, its
// length once trimmed but its control characters before, as checkName
// does: a tab or a U+0085 at an end is trimmable space to
// strings.TrimSpace but a control character to SPEC §2 and to the API
// document's pattern, which sees the text as sent.
func trimDescription(p *Problems, field string, s *string, max int) {
	raw := *s
	*s = strings.TrimSpace(raw)
	checkText(p, field, raw, *s, max)
}

// checkText is checkDescription of a text as sent (raw) and as it will be
// kept (trimmed).
func checkText(p *Problems, field, raw, trimmed string, max int) {
	switch {
	case !utf8.ValidString(raw):
		p.Add(field, "must be valid UTF-8")
	case utf8.RuneCountInString(trimmed) > max:
		p.Add(field, "must be at most %d characters", max)
	case strings.IndexFunc(raw, func(r rune) bool { return unicode.IsControl(r) && r != '\n' && r != '\r' }) >= 0:
		p.Add(field, "must not contain control characters other than line breaks")
	}
}

// SearchProblem says why s cannot be searched for among names, "" when it
// can: a name is UTF-8 without control characters (SPEC §2), so a search
// holding anything else matches nothing, and PostgreSQL would refuse NUL
// or bytes that are not UTF-8 outright. The API answers such a `q` with
// 400; the storefront finds nothing.
func SearchProblem(s string) string {
	switch {
	case !utf8.ValidString(s):
		return "must be valid UTF-8"
	case hasControl(s):
		return "must not contain control characters"
	}
	return ""
}

// foldName is the key names are compared and searched by. Folding in Go,
// not SQL, keeps SQLite (ASCII-only lower()) and PostgreSQL in agreement.
func foldName(s string) string { return strings.ToLower(s) }
