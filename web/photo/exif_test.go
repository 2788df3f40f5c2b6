package photo

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"image"
	"image/color"
	"testing"

	"petstore/web/photo/phototest"
)

// TestReencodeStripsExif: a photo carrying an Exif segment with a GPS
// position comes out with no metadata segment at all, and the position's
// bytes are nowhere in the output.
func TestReencodeStripsExif(t *testing.T) {
	in := withAPP1(t, encodeJPEGBytes(t, phototest.PhotoLike(800, 600)), exifPayload(binary.BigEndian, 1))
	if !bytes.Contains(in, []byte("Exif\x00\x00MM")) || !bytes.Contains(in, gpsLatitude) {
		t.Fatal("the input does not carry the Exif GPS position the test is about")
	}
	if got := jpegMarkers(t, in); got[0] != 0xe1 {
		t.Fatalf("input markers % x, want APP1 first", got)
	}
	res := mustReencode(t, in, "image/jpeg")
	for _, j := range []struct {
		name string
		JPEG
	}{{"large", res.Large}, {"medium", res.Medium}, {"thumb", res.Thumb}} {
		decodeJPEG(t, j.name, j.JPEG)
		for _, m := range jpegMarkers(t, j.Bytes) {
			if m >= 0xe0 && m <= 0xef || m == 0xfe {
				t.Errorf("%s has a metadata segment (marker %#x)", j.name, m)
			}
		}
		if bytes.Contains(j.Bytes, []byte("Exif")) || bytes.Contains(j.Bytes, gpsLatitude) {
			t.Errorf("%s still holds the Exif data", j.name)
		}
	}
}

// TestReencodeAppliesOrientation: a 64×32 image stored with each EXIF
// orientation comes out as it should be displayed. The quadrants are red
// and green on top, blue and white below; each row of the table lists the
// colours expected top-left, top-right, bottom-left and bottom-right.
func TestReencodeAppliesOrientation(t *testing.T) {
	var (
		r = color.RGBA{255, 0, 0, 255}
		g = color.RGBA{0, 255, 0, 255}
		b = color.RGBA{0, 0, 255, 255}
		w = color.RGBA{255, 255, 255, 255}
	)
	stored := encodeJPEGBytes(t, quadrants(64, 32))
	for _, tt := range []struct {
		orientation uint16
		want        [4]color.RGBA
	}{
		{1, [4]color.RGBA{r, g, b, w}},
		{2, [4]color.RGBA{g, r, w, b}}, // mirrored left to right
		{3, [4]color.RGBA{w, b, g, r}}, // turned 180°
		{4, [4]color.RGBA{b, w, r, g}}, // mirrored top to bottom
		{5, [4]color.RGBA{r, b, g, w}}, // transposed
		{6, [4]color.RGBA{b, r, w, g}}, // turned 90° clockwise
		{7, [4]color.RGBA{w, g, b, r}}, // transversed
		{8, [4]color.RGBA{g, w, r, b}}, // turned 90° anticlockwise
	} {
		for _, bo := range []byteOrder{binary.BigEndian, binary.LittleEndian} {
			in := withAPP1(t, stored, exifPayload(bo, tt.orientation))
			if got := exifOrientation(in); got != int(tt.orientation) {
				t.Fatalf("exifOrientation = %d, want %d (%v)", got, tt.orientation, bo)
			}
			res := mustReencode(t, in, "image/jpeg")
			wantSize := image.Pt(64, 32)
			if tt.orientation >= 5 {
				wantSize = image.Pt(32, 64)
			}
			for _, j := range []JPEG{res.Large, res.Medium, res.Thumb} {
				m := decodeJPEG(t, "output", j)
				if got := m.Bounds().Size(); got != wantSize {
					t.Fatalf("orientation %d: size %v, want %v", tt.orientation, got, wantSize)
				}
				qw, qh := wantSize.X/4, wantSize.Y/4 // quadrant centres
				for i, p := range []image.Point{{qw, qh}, {3 * qw, qh}, {qw, 3 * qh}, {3 * qw, 3 * qh}} {
					assertNear(t, fmt.Sprintf("orientation %d, quadrant %d", tt.orientation, i), m.At(p.X, p.Y), tt.want[i])
				}
			}
		}
	}
}

// TestExifOrientationMalformed: every malformed or absent tag means "as
// stored", never a panic or an out-of-range value.
func TestExifOrientationMalformed(t *testing.T) {
	jpg := encodeJPEGBytes(t, image.NewGray(image.Rect(0, 0, 8, 8)))
	good := exifPayload(binary.BigEndian, 6)
	if got := exifOrientation(withAPP1(t, jpg, good)); got != 6 {
		t.Fatalf("well-formed: %d, want 6", got)
	}
	patched := func(at int, b ...byte) []byte {
		p := append([]byte{}, good...)
		copy(p[at:], b)
		return withAPP1(t, jpg, p)
	}
	const tiff = 6 // "Exif\0\0"
	const entry0 = tiff + 8 + 2
	for _, tt := range []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"not a JPEG", []byte("GIF89a......")},
		{"SOI only", []byte{0xff, 0xd8}},
		{"no Exif", jpg},
		{"APP1 not Exif", withAPP1(t, jpg, []byte("http://ns.adobe.com/xap/1.0/\x00<x/>"))},
		{"truncated TIFF", withAPP1(t, jpg, good[:tiff+5])},
		{"truncated IFD", withAPP1(t, jpg, good[:entry0+6])},
		{"bad byte order", patched(tiff, 'X', 'X')},
		{"bad magic", patched(tiff+2, 0, 43)},
		{"IFD offset past the end", patched(tiff+4, 0xff, 0xff, 0xff, 0xf0)},
		{"IFD offset in the header", patched(tiff+4, 0, 0, 0, 2)},
		{"wrong type", patched(entry0+2, 0, 4)},
		{"wrong count", patched(entry0+4, 0, 0, 0, 2)},
		{"value 0", patched(entry0+8, 0, 0)},
		{"value 9", patched(entry0+8, 0, 9)},
		{"segment length past the end", append([]byte{0xff, 0xd8, 0xff, 0xe1, 0xff, 0xff}, good...)},
		{"segment length under 2", []byte{0xff, 0xd8, 0xff, 0xe1, 0x00, 0x01, 0xff, 0xd9}},
		{"Exif after the image data", append(append([]byte{0xff, 0xd8, 0xff, 0xda, 0, 2}, 0xff, 0xe1, 0, byte(len(good)+2)), good...)},
		{"garbage between segments", append([]byte{0xff, 0xd8, 0x00}, jpg[2:]...)},
	} {
		if got := exifOrientation(tt.data); got != 1 {
			t.Errorf("%s: orientation %d, want 1", tt.name, got)
		}
	}
	// Fill bytes before a marker are allowed and skipped; an entry count
	// past the end of the segment stops at the last whole entry.
	filled := append([]byte{0xff, 0xd8, 0xff, 0xff}, withAPP1(t, jpg, good)[2:]...)
	if got := exifOrientation(filled); got != 6 {
		t.Errorf("fill bytes: %d, want 6", got)
	}
	if got := exifOrientation(patched(tiff+8, 0xff, 0xff)); got != 6 {
		t.Errorf("entry count past the end: %d, want 6", got)
	}
}
