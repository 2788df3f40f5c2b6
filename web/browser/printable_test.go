package browser_test

import (
	"testing"

	"petstore/web/browser"
)

// TestPrintable: control characters and bytes that are not UTF-8 become
// U+FFFD; line breaks stay only when asked for (a text area's value).
func TestPrintable(t *testing.T) {
	for _, tc := range []struct{ in, oneLine, lines string }{
		{in: "Rex the 2nd", oneLine: "Rex the 2nd", lines: "Rex the 2nd"},
		{in: "Ada\x00", oneLine: "Ada\uFFFD", lines: "Ada\uFFFD"},
		{in: "Ad\xffa", oneLine: "Ad\uFFFDa", lines: "Ad\uFFFDa"},
		{in: "\x1b[2J", oneLine: "\uFFFD[2J", lines: "\uFFFD[2J"},
		{in: "Ada\u0085\x7f", oneLine: "Ada\uFFFD\uFFFD", lines: "Ada\uFFFD\uFFFD"},
		{in: "calm\r\nkind\ttoo", oneLine: "calm\uFFFD\uFFFDkind\uFFFDtoo", lines: "calm\r\nkind\uFFFDtoo"},
		{in: "über 🐕", oneLine: "über 🐕", lines: "über 🐕"},
	} {
		if got := browser.Printable(tc.in, false); got != tc.oneLine {
			t.Errorf("Printable(%q, false) = %q, want %q", tc.in, got, tc.oneLine)
		}
		if got := browser.Printable(tc.in, true); got != tc.lines {
			t.Errorf("Printable(%q, true) = %q, want %q", tc.in, got, tc.lines)
		}
	}
}
