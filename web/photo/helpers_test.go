package photo

import (
	"bytes"
	"context"
	"encoding/binary"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"petstore/web/photo/phototest"
)

// testLimits are the defaults with room for the race detector, which makes
// decoding a 12-megapixel JPEG many times slower than in production.
func testLimits() Limits {
	l := DefaultLimits()
	l.Timeout = 5 * time.Minute
	return l
}

// testWorker processes the tests' uploads, one at a time, as a server's
// Worker does.
var testWorker = NewWorker()

// mustReencode runs Reencode and fails the test on an error.
func mustReencode(tb testing.TB, data []byte, contentType string) *Result {
	tb.Helper()
	res, err := testWorker.Reencode(context.Background(), bytes.NewReader(data), contentType, testLimits())
	if err != nil {
		tb.Fatalf("Reencode: %v", err)
	}
	return res
}

// quadrants is a w×h image whose quarters are red, green (top), blue and
// white (bottom), so that any turn or mirror of it can be told apart.
func quadrants(w, h int) *image.RGBA {
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			c := [2][2]color.RGBA{
				{{255, 0, 0, 255}, {0, 255, 0, 255}},
				{{0, 0, 255, 255}, {255, 255, 255, 255}},
			}[y*2/h][x*2/w]
			m.SetRGBA(x, y, c)
		}
	}
	return m
}

// twelveMP is a 4000×3000 JPEG, what a phone typically uploads, made once
// per test binary: making it takes seconds under the race detector.
var twelveMP = sync.OnceValue(func() []byte {
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, phototest.PhotoLike(4000, 3000), &jpeg.Options{Quality: 90}); err != nil {
		panic(err)
	}
	return buf.Bytes()
})

func encodeJPEGBytes(tb testing.TB, m image.Image) []byte {
	tb.Helper()
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, m, &jpeg.Options{Quality: 90}); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

func encodePNGBytes(tb testing.TB, m image.Image) []byte {
	tb.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, m); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

func encodeGIFBytes(tb testing.TB, m image.Image) []byte {
	tb.Helper()
	var buf bytes.Buffer
	if err := gif.Encode(&buf, m, nil); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

func readTestdata(tb testing.TB, name string) []byte {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// decodeJPEG checks that j is a JPEG of the size it claims and returns it.
func decodeJPEG(tb testing.TB, name string, j JPEG) image.Image {
	tb.Helper()
	m, err := jpeg.Decode(bytes.NewReader(j.Bytes))
	if err != nil {
		tb.Fatalf("%s: not a JPEG: %v", name, err)
	}
	if got := m.Bounds().Size(); got != image.Pt(j.Width, j.Height) {
		tb.Fatalf("%s: decodes as %v, claims %dx%d", name, got, j.Width, j.Height)
	}
	return m
}

// jpegMarkers lists the markers of a JPEG's segments up to the image data.
func jpegMarkers(tb testing.TB, data []byte) []byte {
	tb.Helper()
	m, err := phototest.Markers(data)
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// withAPP1 inserts an APP1 segment holding payload right after the SOI
// marker, where cameras put their Exif segment.
func withAPP1(tb testing.TB, jpg, payload []byte) []byte {
	tb.Helper()
	if len(payload)+2 > 0xffff {
		tb.Fatal("APP1 payload too long")
	}
	out := append([]byte{}, jpg[:2]...)
	out = append(out, 0xff, 0xe1)
	out = binary.BigEndian.AppendUint16(out, uint16(len(payload)+2))
	out = append(out, payload...)
	return append(out, jpg[2:]...)
}

// byteOrder is binary.BigEndian or binary.LittleEndian.
type byteOrder interface {
	binary.ByteOrder
	binary.AppendByteOrder
}

// gpsLatitude is 51° 30' 12.34" as three TIFF RATIONALs (numerator and
// denominator, 32 bits each, big-endian): the bytes the GPS test looks for.
var gpsLatitude = []byte{
	0, 0, 0, 51, 0, 0, 0, 1,
	0, 0, 0, 30, 0, 0, 0, 1,
	0, 0, 0x04, 0xd2, 0, 0, 0, 100,
}

// exifPayload hand-assembles the smallest Exif APP1 payload a phone would
// write for these tests: "Exif\0\0", then a TIFF structure in byte order bo:
//
//	0   "MM" or "II", 42, offset of IFD0 (8)
//	8   IFD0: 2 entries, then 0 (no next IFD)
//	      0x0112 Orientation, SHORT, 1, orientation
//	      0x8825 GPS IFD pointer, LONG, 1, 38
//	38  GPS IFD: 2 entries, then 0
//	      0x0001 GPSLatitudeRef, ASCII, 2, "N\0"
//	      0x0002 GPSLatitude, RATIONAL, 3, at 68
//	68  the latitude: gpsLatitude
//
// An entry is tag (2 bytes), type (2), count (4) and a 4-byte value, or
// the offset of the value when it does not fit in 4 bytes.
func exifPayload(bo byteOrder, orientation uint16) []byte {
	b := []byte("Exif\x00\x00")
	if bo == byteOrder(binary.LittleEndian) {
		b = append(b, "II"...)
	} else {
		b = append(b, "MM"...)
	}
	b = bo.AppendUint16(b, 42)
	b = bo.AppendUint32(b, 8)
	entry := func(tag, typ uint16, count uint32, value []byte) {
		b = bo.AppendUint16(b, tag)
		b = bo.AppendUint16(b, typ)
		b = bo.AppendUint32(b, count)
		b = append(b, value...)
	}
	b = bo.AppendUint16(b, 2)
	entry(0x0112, 3, 1, bo.AppendUint16(bo.AppendUint16(nil, orientation), 0))
	entry(0x8825, 4, 1, bo.AppendUint32(nil, 38))
	b = bo.AppendUint32(b, 0)
	b = bo.AppendUint16(b, 2)
	entry(0x0001, 2, 2, []byte("N\x00\x00\x00"))
	entry(0x0002, 5, 3, bo.AppendUint32(nil, 68))
	b = bo.AppendUint32(b, 0)
	if bo == byteOrder(binary.LittleEndian) {
		for i := 0; i < len(gpsLatitude); i += 4 {
			b = bo.AppendUint32(b, binary.BigEndian.Uint32(gpsLatitude[i:]))
		}
	} else {
		b = append(b, gpsLatitude...)
	}
	return b
}

// pngClaiming is a 1×1 PNG whose header claims w×h.
func pngClaiming(tb testing.TB, w, h uint32) []byte {
	tb.Helper()
	b, err := phototest.PNGClaiming(w, h)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}
