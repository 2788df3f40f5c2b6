package browser_test

import (
	"testing"

	"petstore/web/browser"
)

// TestPrintable: control characters and bytes that are not UTF-8 become
// U+FFFD; line breaks stay only when asked for (a text area's value).
func TestPrintable(t *testing.T) {
	for _, tc := range []struct {
		in               string
		oneLine, withBrk string
	}{
		{"Rex the 2nd", "Rex the 2nd", "Rex the 2nd"},
		{"Ada\x00", "Ada\uFFFD", "Ada\uFFFD"},
		{"Ad\xffa", "Ad\uFFFDa", "Ad\uFFFDa"},
		{"\x1b[2J", "\uFFFD[2J", "\uFFFD[2J"},
		{"Ada\u0085", "Ada\uFFFD", "Ada\uFFFD"},
		{"\x7f", "\uFFFD", "\uFFFD"},
		{"calm\r\nkind\ttoo", "calm\uFFFD\uFFFDkind\uFFFDtoo", "calm\r\nkind\uFFFDtoo"},
		{"über 🐕", "über 🐕", "über 🐕"},
	} {
		if got := browser.Printable(tc.in, false); got != tc.oneLine {
			t.Errorf("Printable(%q, false) = %q, want %q", tc.in, got, tc.oneLine)
		}
		if got := browser.Printable(tc.in, true); got != tc.withBrk {
			t.Errorf("Printable(%q, true) = %q, want %q", tc.in, got, tc.withBrk)
		}
	}
}
