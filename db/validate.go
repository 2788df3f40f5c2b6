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

// checkName trims a name and records why it is unacceptable, if it is.
func checkName(p *Problems, field string, name *string) {
	*name = strings.TrimSpace(*name)
	n := utf8.RuneCountInString(*name)
	switch {
	case !utf8.ValidString(*name):
		p.Add(field, "must be valid UTF-8")
	case n == 0:
		p.Add(field, "is required")
	case n > MaxNameLen:
		p.Add(field, "must be at most %d characters", MaxNameLen)
	case hasControl(*name):
		p.Add(field, "must not contain control characters")
	}
}

func hasControl(s string) bool {
	return strings.IndexFunc(s, unicode.IsControl) >= 0
}

// foldName is the key names are compared and searched by. Folding in Go,
// not SQL, keeps SQLite (ASCII-only lower()) and PostgreSQL in agreement.
func foldName(s string) string { return strings.ToLower(s) }
