package photo

import (
	"bytes"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"

	"golang.org/x/image/webp"
)

// format is one image format we decode. Reencode picks it from the bytes'
// signature and calls its decoders directly rather than image.Decode, so
// what runs on an upload does not depend on which other formats some
// package in the binary happens to register with the image package.
type format struct {
	name         string
	matches      func(head []byte) bool
	decodeConfig func(io.Reader) (image.Config, error)
	decode       func(io.Reader) (image.Image, error)
}

// formats are SPEC §14's four, identified by the signatures their
// specifications put at offset 0.
var formats = []format{
	{"jpeg", prefix("\xff\xd8\xff"), jpeg.DecodeConfig, jpeg.Decode},
	{"png", prefix("\x89PNG\r\n\x1a\n"), png.DecodeConfig, png.Decode},
	// gif.Decode returns the first frame of an animation.
	{"gif", func(h []byte) bool {
		return bytes.HasPrefix(h, []byte("GIF87a")) || bytes.HasPrefix(h, []byte("GIF89a"))
	}, gif.DecodeConfig, gif.Decode},
	// "RIFF", a 4-byte length, "WEBP", then a VP8, VP8L or VP8X chunk.
	{"webp", func(h []byte) bool {
		return len(h) >= 15 && string(h[0:4]) == "RIFF" && string(h[8:15]) == "WEBPVP8"
	}, webp.DecodeConfig, webp.Decode},
}

func prefix(p string) func([]byte) bool {
	return func(h []byte) bool { return bytes.HasPrefix(h, []byte(p)) }
}

// sniff returns the format whose signature data starts with.
func sniff(data []byte) (format, bool) {
	for _, f := range formats {
		if f.matches(data) {
			return f, true
		}
	}
	return format{}, false
}
