package browser

import (
	"testing"

	"petstore/views/components"
)

// TestFlashOf: a kept message is "kind|text", the text free to hold a
// bar; one without a kind (or not a string) reads as an info message.
func TestFlashOf(t *testing.T) {
	for _, tc := range []struct {
		kept any
		want components.Flash
	}{
		{"success|Saved.", components.Flash{Kind: components.FlashSuccess, Text: "Saved."}},
		{"error|a | b", components.Flash{Kind: components.FlashError, Text: "a | b"}},
		{"no kind", components.Flash{Kind: components.FlashInfo, Text: "no kind"}},
		{42, components.Flash{Kind: components.FlashInfo}},
	} {
		if got := flashOf(tc.kept); got != tc.want {
			t.Errorf("flashOf(%#v) = %+v, want %+v", tc.kept, got, tc.want)
		}
	}
}
