package photo

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"image"
	"io"
	"runtime"
	"testing"
	"time"

	"petstore/web/photo/phototest"
)

// TestReencodeRefusesBombs: files whose headers declare more pixels than
// allowed are refused from the header alone: fast, and without allocating
// the pixels (10000×10000 RGBA would be 400 MB).
func TestReencodeRefusesBombs(t *testing.T) {
	gifClaiming := func(w, h uint16) []byte {
		data := encodeGIFBytes(t, image.NewGray(image.Rect(0, 0, 1, 1)))
		// "GIF89a", then the logical screen's width and height, little-endian.
		binary.LittleEndian.PutUint16(data[6:], w)
		binary.LittleEndian.PutUint16(data[8:], h)
		return data
	}
	for _, tt := range []struct {
		name, contentType string
		data              []byte
		want              error
	}{
		{"png 10000x10000", "image/png", pngClaiming(t, 10000, 10000), ErrTooManyPixels},
		{"png 1x40000001", "image/png", pngClaiming(t, 1, 40_000_001), ErrTooManyPixels},
		{"png 30000x1", "image/png", pngClaiming(t, 30000, 1), ErrTooManyPixels},
		// image/png's own header check refuses this one first.
		{"png 2^31-1 square", "image/png", pngClaiming(t, 1<<31-1, 1<<31-1), ErrUndecodable},
		{"jpeg 10000x10000", "image/jpeg", jpegClaiming(t, 10000, 10000), ErrTooManyPixels},
		{"jpeg 65535x65535", "image/jpeg", jpegClaiming(t, 65535, 65535), ErrTooManyPixels},
		{"gif 7000x7000", "image/gif", gifClaiming(7000, 7000), ErrTooManyPixels},
		{"gif 65535x65535", "image/gif", gifClaiming(65535, 65535), ErrTooManyPixels},
		{"webp 10000x10000", "image/webp", webpClaiming(t, 10000, 10000), ErrTooManyPixels},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			start := time.Now()
			allocated := allocatedBy(func() {
				_, err = testWorker.Reencode(context.Background(), bytes.NewReader(tt.data), tt.contentType, testLimits())
			})
			if !errors.Is(err, tt.want) {
				t.Errorf("err = %v, want %v", err, tt.want)
			}
			// Decoding would take seconds and hundreds of MB; the header
			// takes microseconds and kilobytes. The bounds leave room for
			// a busy machine and the race detector.
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("took %s", d)
			}
			if allocated > 1<<20 {
				t.Errorf("allocated %d bytes", allocated)
			}
		})
	}
}

// TestInspectBoundaries: exactly the limits is allowed, one more is not.
func TestInspectBoundaries(t *testing.T) {
	l := DefaultLimits()
	for _, tt := range []struct {
		w, h uint32
		want error
	}{
		{8000, 5000, nil}, // 40,000,000 pixels
		{8001, 5000, ErrTooManyPixels},
		{20000, 2000, nil},
		{20001, 1, ErrTooManyPixels},
		{1, 20001, ErrTooManyPixels},
		{0, 10, ErrUndecodable},
		{10, 0, ErrUndecodable},
	} {
		_, _, err := inspect(pngClaiming(t, tt.w, tt.h), l)
		if tt.want == nil && err != nil || tt.want != nil && !errors.Is(err, tt.want) {
			t.Errorf("%dx%d: err = %v, want %v", tt.w, tt.h, err, tt.want)
		}
	}
}

// TestReencodeTooLarge: one byte over the limit is refused, and no more than
// that is read, however much the client sends.
func TestReencodeTooLarge(t *testing.T) {
	big := make([]byte, 8<<20+1)
	copy(big, encodeJPEGBytes(t, phototest.PhotoLike(16, 16)))
	_, err := testWorker.Reencode(context.Background(), bytes.NewReader(big), "image/jpeg", testLimits())
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("8 MiB + 1: err = %v, want ErrTooLarge", err)
	}

	endless := &countingReader{}
	_, err = testWorker.Reencode(context.Background(), endless, "image/png", testLimits())
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("endless body: err = %v, want ErrTooLarge", err)
	}
	if endless.n != 8<<20+1 {
		t.Errorf("read %d bytes of an endless body, want %d", endless.n, 8<<20+1)
	}

	// Exactly the limit is accepted (a JPEG decoder ignores what follows
	// the end of the image).
	l := testLimits()
	l.MaxBytes = 5000
	if _, err = testWorker.Reencode(context.Background(), bytes.NewReader(big[:5000]), "image/jpeg", l); err != nil {
		t.Fatalf("exactly MaxBytes: err = %v", err)
	}
	if _, err = testWorker.Reencode(context.Background(), bytes.NewReader(big[:5001]), "image/jpeg", l); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("MaxBytes + 1: err = %v, want ErrTooLarge", err)
	}
}

// TestReencodeUnsupportedTypeReadsNothing: the type is refused before a byte
// of the body is read.
func TestReencodeUnsupportedTypeReadsNothing(t *testing.T) {
	for _, ct := range []string{"text/plain", "", "image/svg+xml", "application/json"} {
		body := &countingReader{}
		_, err := testWorker.Reencode(context.Background(), body, ct, testLimits())
		if !errors.Is(err, ErrUnsupportedType) {
			t.Errorf("%q: err = %v, want ErrUnsupportedType", ct, err)
		}
		if body.n != 0 {
			t.Errorf("%q: read %d bytes", ct, body.n)
		}
	}
}

// TestReencodeUndecodable: bytes that are no image, or a broken one, are
// ErrUndecodable whatever the Content-Type says.
func TestReencodeUndecodable(t *testing.T) {
	jpg := encodeJPEGBytes(t, phototest.PhotoLike(200, 150))
	png := encodePNGBytes(t, phototest.PhotoLike(200, 150))
	garbage := make([]byte, 4096)
	seed := uint32(7)
	for i := range garbage {
		seed = seed*1664525 + 1013904223
		garbage[i] = byte(seed >> 24)
	}
	for _, tt := range []struct {
		name, contentType string
		data              []byte
	}{
		{"empty", "image/jpeg", nil},
		{"garbage", "image/png", garbage},
		{"text", "image/gif", []byte("hello, world\n")},
		{"svg", "image/png", []byte(`<svg xmlns="http://www.w3.org/2000/svg"/>`)},
		{"html", "image/jpeg", []byte("<!doctype html><script>alert(1)</script>")},
		{"jpeg truncated after the header", "image/jpeg", jpg[:len(jpg)/2]},
		{"jpeg SOI only", "image/jpeg", jpg[:3]},
		{"png truncated", "image/png", png[:len(png)/2]},
		{"png signature only", "image/png", png[:8]},
		{"gif signature only", "image/gif", []byte("GIF89a")},
		{"webp signature only", "image/webp", []byte("RIFF\x00\x00\x00\x00WEBPVP8L")},
		{"bmp", "image/png", append([]byte("BM"), garbage[:100]...)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := testWorker.Reencode(context.Background(), bytes.NewReader(tt.data), tt.contentType, testLimits())
			if !errors.Is(err, ErrUndecodable) {
				t.Fatalf("err = %v, want ErrUndecodable", err)
			}
		})
	}
}

// TestReencodeRecoversDecoderPanics: a codec bug becomes ErrUndecodable,
// in the header check (the caller's goroutine) and in the decode (the
// worker's, where nothing else would recover it).
func TestReencodeRecoversDecoderPanics(t *testing.T) {
	saved := formats
	t.Cleanup(func() { formats = saved })
	formats = append([]format{
		{"config panics", prefix("CONFIG"), func(io.Reader) (image.Config, error) { panic("config") }, nil},
		{"decode panics", prefix("DECODE"),
			func(io.Reader) (image.Config, error) { return image.Config{Width: 1, Height: 1}, nil },
			func(io.Reader) (image.Image, error) { panic("decode") }},
	}, saved...)
	for _, data := range []string{"CONFIG", "DECODE"} {
		_, err := testWorker.Reencode(context.Background(), bytes.NewReader([]byte(data)), "image/png", testLimits())
		var p *decoderPanic
		if !errors.Is(err, ErrUndecodable) || !errors.As(err, &p) {
			t.Fatalf("%s: err = %v, want a recovered ErrUndecodable", data, err)
		}
		if err.Error() != "image cannot be decoded: decoder failed" {
			t.Errorf("%s: message %q tells the client more than it should", data, err)
		}
	}
	// The worker was released: the next upload is processed.
	formats = saved
	mustReencode(t, encodePNGBytes(t, phototest.PhotoLike(10, 10)), "image/png")
}

// jpegClaiming is a valid 1×1 JPEG whose SOF0 segment then claims w×h.
func jpegClaiming(tb testing.TB, w, h uint16) []byte {
	tb.Helper()
	data := encodeJPEGBytes(tb, image.NewGray(image.Rect(0, 0, 1, 1)))
	i := bytes.Index(data, []byte{0xff, 0xc0})
	if i < 0 {
		tb.Fatal("no SOF0 segment")
	}
	// Marker, length (2), precision (1), height (2), width (2).
	binary.BigEndian.PutUint16(data[i+5:], h)
	binary.BigEndian.PutUint16(data[i+7:], w)
	return data
}

// webpClaiming is x/image's lossless 75×100 gopher with its VP8L header
// claiming w×h. The header follows the chunk's size: a 0x2f signature, then
// 32 bits, little-endian, of width-1 (14 bits), height-1 (14 bits), an alpha
// hint (1) and a version (3).
func webpClaiming(tb testing.TB, w, h uint32) []byte {
	tb.Helper()
	data := readTestdata(tb, "gopher-doc.1bpp.lossless.webp")
	if string(data[12:16]) != "VP8L" || data[20] != 0x2f {
		tb.Fatal("not a simple VP8L file")
	}
	bits := binary.LittleEndian.Uint32(data[21:])
	bits = bits&^(1<<28-1) | (w - 1) | (h-1)<<14
	binary.LittleEndian.PutUint32(data[21:], bits)
	return data
}

// allocatedBy reports how many bytes f allocated. It first waits for any
// decode left running by an earlier test, so that only f is counted.
func allocatedBy(f func()) uint64 {
	leave, err := testWorker.Enter(context.Background())
	if err != nil {
		panic(err)
	}
	leave()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// countingReader is an endless body of zero bytes that counts what is read.
type countingReader struct{ n int64 }

func (r *countingReader) Read(p []byte) (int, error) {
	clear(p)
	r.n += int64(len(p))
	return len(p), nil
}
