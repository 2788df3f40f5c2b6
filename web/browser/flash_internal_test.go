package browser

import (
	"testing"

	"petstore/views/components"
)

// TestFlashOf: a kept message is "kind|text", the text free to hold a
// bar; one without a kind (or not a string) reads as an info message.
func TestFlashOf(t *testing.T) {
	want := map[any]components.Flash{
		"success|Saved.": {Kind: components.FlashSuccess, Text: "Saved."},
		"error|a | b":    {Kind: components.FlashError, Text: "a | b"},
		"no kind":        {Kind: components.FlashInfo, Text: "no kind"},
		42:               {Kind: components.FlashInfo},
	}
	for kept, w := range want {
		if got := flashOf(kept); got != w {
			t.Errorf("flashOf(%#v) = %+v, want %+v", kept, got, w)
		}
	}
}
