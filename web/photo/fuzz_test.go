package photo

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"image"
	"image/color"
	"testing"
	"time"

	"petstore/web/photo/phototest"
)

// fuzzLimits are small enough that the fuzzer spends its time on parsing,
// not on decoding large images: the code paths are the same.
var fuzzLimits = Limits{
	MaxBytes:   1 << 16,
	MaxPixels:  1 << 18,
	MaxSide:    4096,
	LargeSide:  64,
	MediumSide: 32,
	ThumbSide:  16,
	Timeout:    10 * time.Second,
}

// FuzzReencode: whatever the bytes, Reencode does not panic (nor recovers a
// decoder panic), returns only its sentinel errors, and whatever it returns
// is two metadata-free JPEGs of the sizes it claims, within the limits.
//
//	go test -run x -fuzz FuzzReencode -fuzztime 60s ./web/photo/
func FuzzReencode(f *testing.F) {
	nrgba := image.NewNRGBA(image.Rect(0, 0, 12, 9))
	for i := range nrgba.Pix {
		nrgba.Pix[i] = uint8(i * 37)
	}
	jpg := encodeJPEGBytes(f, phototest.PhotoLike(24, 16))
	for _, seed := range [][]byte{
		jpg,
		withAPP1(f, jpg, exifPayload(binary.BigEndian, 6)),
		withAPP1(f, jpg, exifPayload(binary.LittleEndian, 8)),
		encodeJPEGBytes(f, image.NewGray(image.Rect(0, 0, 9, 7))),
		encodePNGBytes(f, nrgba),
		encodePNGBytes(f, image.NewRGBA64(image.Rect(0, 0, 5, 3))),
		encodePNGBytes(f, image.NewPaletted(image.Rect(0, 0, 7, 5), color.Palette{color.Black, color.Transparent})),
		encodeGIFBytes(f, phototest.PhotoLike(10, 6)),
		readTestdata(f, "gopher-doc.1bpp.lossless.webp"),
		readTestdata(f, "blue-purple-pink.lossy.webp"),
		pngClaiming(f, 10000, 10000),
		jpg[:len(jpg)/2],
		[]byte("GIF89a"),
		[]byte("RIFF\x00\x00\x00\x00WEBPVP8X"),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := testWorker.Reencode(context.Background(), bytes.NewReader(data), "image/jpeg", fuzzLimits)
		if err != nil {
			var p *decoderPanic
			if errors.As(err, &p) {
				t.Fatalf("decoder panicked: %v\n%s", p.value, p.stack)
			}
			for _, sentinel := range []error{ErrTooLarge, ErrUndecodable, ErrTooManyPixels, ErrTimeout} {
				if errors.Is(err, sentinel) {
					return
				}
			}
			t.Fatalf("unexpected error: %v", err)
		}
		switch res.Format {
		case "jpeg", "png", "gif", "webp":
		default:
			t.Fatalf("Format = %q", res.Format)
		}
		for _, j := range []struct {
			name string
			side int
			JPEG
		}{{"large", fuzzLimits.LargeSide, res.Large}, {"medium", fuzzLimits.MediumSide, res.Medium}, {"thumb", fuzzLimits.ThumbSide, res.Thumb}} {
			decodeJPEG(t, j.name, j.JPEG)
			if j.Width < 1 || j.Height < 1 || j.Width > j.side || j.Height > j.side {
				t.Fatalf("%s is %dx%d, limit %d", j.name, j.Width, j.Height, j.side)
			}
			for _, m := range jpegMarkers(t, j.Bytes) {
				if m >= 0xe0 && m <= 0xef || m == 0xfe {
					t.Fatalf("%s has a metadata segment (marker %#x)", j.name, m)
				}
			}
		}
		if res.Thumb.Width > res.Medium.Width || res.Thumb.Height > res.Medium.Height ||
			res.Medium.Width > res.Large.Width || res.Medium.Height > res.Large.Height {
			t.Fatalf("sizes not in order: thumb %dx%d, medium %dx%d, large %dx%d", res.Thumb.Width, res.Thumb.Height,
				res.Medium.Width, res.Medium.Height, res.Large.Width, res.Large.Height)
		}
	})
}
