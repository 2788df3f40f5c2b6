// Package phototest makes the images that tests and the bench feed the
// photo pipeline: photo-like pixels, decompression-bomb headers, and a
// reading of where a JPEG keeps its metadata. It is test support, shared
// so that web/photo's tests, the handlers' and make bench make the same
// images the same way.
package phototest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"image"
	"image/jpeg"
	"image/png"
)

// PhotoLike is a w×h opaque image with smooth gradients and some noise, so
// that it compresses like a photograph rather than like a flat colour.
func PhotoLike(w, h int) *image.RGBA {
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	seed := uint32(1)
	for y := range h {
		for x := range w {
			seed = seed*1664525 + 1013904223
			noise := uint8(seed>>24) & 0x0f
			i := m.PixOffset(x, y)
			m.Pix[i+0] = uint8(x*255/w) + noise
			m.Pix[i+1] = uint8(y*255/h) + noise
			m.Pix[i+2] = uint8((x+y)*127/(w+h)) + noise
			m.Pix[i+3] = 0xff
		}
	}
	return m
}

// JPEG is PhotoLike(w, h) encoded at quality 90, about what a phone sends.
func JPEG(w, h int) ([]byte, error) {
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, PhotoLike(w, h), &jpeg.Options{Quality: 90}); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// PNG is a w×h opaque PNG of smooth gradients without noise: 8-bit RGB,
// which image/png decodes into an *image.RGBA of 4 bytes a pixel, and
// which compresses so well that 40 megapixels fit a few hundred kilobytes,
// the kind of upload that costs the server far more than its bytes.
func PNG(w, h int) ([]byte, error) {
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			i := m.PixOffset(x, y)
			m.Pix[i+0] = uint8(x * 255 / w)
			m.Pix[i+1] = uint8(y * 255 / h)
			m.Pix[i+2] = uint8((x + y) * 127 / (w + h))
			m.Pix[i+3] = 0xff
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, m); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// PNGClaiming is a valid 1×1 PNG whose IHDR then claims w×h, with the
// chunk's CRC recomputed so that the header is well-formed: a
// decompression bomb's header, without the bomb.
func PNGClaiming(w, h uint32) ([]byte, error) {
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewGray(image.Rect(0, 0, 1, 1))); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	// 8-byte signature, then the IHDR chunk: length (4), "IHDR", width (4),
	// height (4), 5 more bytes, and a CRC of the type and data.
	if string(data[12:16]) != "IHDR" {
		return nil, errors.New("IHDR is not the first chunk")
	}
	binary.BigEndian.PutUint32(data[16:], w)
	binary.BigEndian.PutUint32(data[20:], h)
	binary.BigEndian.PutUint32(data[29:], crc32.ChecksumIEEE(data[12:29]))
	return data, nil
}

// Markers lists the markers of a JPEG's segments up to its image data
// (SOS): the part where metadata segments (APPn, COM) live.
func Markers(data []byte) ([]byte, error) {
	if len(data) < 2 || data[0] != 0xff || data[1] != 0xd8 {
		return nil, errors.New("not a JPEG: no SOI marker")
	}
	var markers []byte
	for i := 2; ; {
		if i+4 > len(data) || data[i] != 0xff {
			return nil, fmt.Errorf("malformed JPEG segment at %d", i)
		}
		m := data[i+1]
		markers = append(markers, m)
		if m == 0xda {
			return markers, nil
		}
		i += 2 + int(binary.BigEndian.Uint16(data[i+2:]))
	}
}
