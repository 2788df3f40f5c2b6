package static

import "bytes"

// utf8BOM starts a file some editors (and Sass) save; mid-bundle it would
// be a stray character, so it is dropped.
var utf8BOM = []byte("\xef\xbb\xbf")

// MinifyCSS drops what a browser ignores from a stylesheet: comments (a
// licence comment, /*! … */, is kept), indentation, line breaks and the
// spaces next to { } and ;. Quoted strings are copied as they are. Nothing
// else is rewritten, so the rules mean what they meant: a space between
// two other characters (a descendant combinator, "0 auto") stays one
// space.
func MinifyCSS(src []byte) []byte {
	src = bytes.TrimPrefix(src, utf8BOM)
	out := make([]byte, 0, len(src))
	space := false // whitespace seen since the last byte written
	// flush writes the pending space, unless a neighbour makes it moot.
	flush := func(next byte) {
		if space && len(out) > 0 && !tight(out[len(out)-1]) && !tight(next) {
			out = append(out, ' ')
		}
		space = false
	}
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '"' || c == '\'':
			j := i + 1
			for j < len(src) && src[j] != c {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			j = min(j+1, len(src))
			flush(c)
			out = append(out, src[i:j]...)
			i = j
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			end := bytes.Index(src[i+2:], []byte("*/"))
			j := len(src)
			if end >= 0 {
				j = i + 2 + end + 2
			}
			if i+2 < len(src) && src[i+2] == '!' {
				flush('/')
				out = append(out, src[i:j]...)
				out = append(out, '\n')
			}
			i = j // a comment is no token: ".a/**/.b" is ".a.b"
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			space = true
			i++
		default:
			flush(c)
			out = append(out, c)
			i++
		}
	}
	return out
}

// tight reports whether whitespace next to c means nothing: after or
// before a brace or a semicolon, and at the start of a line.
func tight(c byte) bool { return c == '{' || c == '}' || c == ';' || c == '\n' }
