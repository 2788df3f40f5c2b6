package photo

import (
	"image"
	"image/color"
)

// rowReader writes the pixels x0 ≤ x < x1 of row y of an image into out
// as R, G, B floats from 0 to 255, flattened onto white: a JPEG has no
// alpha, and transparent parts of a PNG, GIF or WebP are to come out
// white rather than the black an encoder would make of them. Reading a row
// at a time is what lets the scaler work without a converted copy of the
// whole image: the decoder's own pixels are the only full-size buffer.
type rowReader func(y, x0, x1 int, out []float32)

// rowsOf returns the rowReader of m. The formats' decoders return the
// types of the cases; any other image.Image is read through At, slowly
// but correctly.
func rowsOf(m image.Image) rowReader {
	switch m := m.(type) {
	case *image.YCbCr:
		return func(y, x0, x1 int, out []float32) {
			for x := x0; x < x1; x++ {
				yi, ci := m.YOffset(x, y), m.COffset(x, y)
				r, g, b := color.YCbCrToRGB(m.Y[yi], m.Cb[ci], m.Cr[ci])
				out[0], out[1], out[2] = float32(r), float32(g), float32(b)
				out = out[3:]
			}
		}
	case *image.NYCbCrA: // a WebP with alpha
		return func(y, x0, x1 int, out []float32) {
			for x := x0; x < x1; x++ {
				yi, ci := m.YOffset(x, y), m.COffset(x, y)
				r, g, b := color.YCbCrToRGB(m.Y[yi], m.Cb[ci], m.Cr[ci])
				straightOnWhite(out, float32(r), float32(g), float32(b), float32(m.A[m.AOffset(x, y)]))
				out = out[3:]
			}
		}
	case *image.Gray:
		return func(y, x0, x1 int, out []float32) {
			for _, v := range m.Pix[m.PixOffset(x0, y):m.PixOffset(x1, y)] {
				out[0], out[1], out[2] = float32(v), float32(v), float32(v)
				out = out[3:]
			}
		}
	case *image.RGBA: // alpha-premultiplied
		return func(y, x0, x1 int, out []float32) {
			p := m.Pix[m.PixOffset(x0, y):m.PixOffset(x1, y)]
			for i := 0; i+3 < len(p); i += 4 {
				white := 255 - float32(p[i+3])
				out[0], out[1], out[2] = float32(p[i])+white, float32(p[i+1])+white, float32(p[i+2])+white
				out = out[3:]
			}
		}
	case *image.NRGBA:
		return func(y, x0, x1 int, out []float32) {
			p := m.Pix[m.PixOffset(x0, y):m.PixOffset(x1, y)]
			for i := 0; i+3 < len(p); i += 4 {
				straightOnWhite(out, float32(p[i]), float32(p[i+1]), float32(p[i+2]), float32(p[i+3]))
				out = out[3:]
			}
		}
	case *image.CMYK: // a JPEG from print software
		return func(y, x0, x1 int, out []float32) {
			p := m.Pix[m.PixOffset(x0, y):m.PixOffset(x1, y)]
			for i := 0; i+3 < len(p); i += 4 {
				r, g, b := color.CMYKToRGB(p[i], p[i+1], p[i+2], p[i+3])
				out[0], out[1], out[2] = float32(r), float32(g), float32(b)
				out = out[3:]
			}
		}
	case *image.Gray16: // 16-bit PNGs, big-endian samples
		return func(y, x0, x1 int, out []float32) {
			p := m.Pix[m.PixOffset(x0, y):m.PixOffset(x1, y)]
			for i := 0; i+1 < len(p); i += 2 {
				v := float32(be16(p[i:])) / 257
				out[0], out[1], out[2] = v, v, v
				out = out[3:]
			}
		}
	case *image.RGBA64:
		return func(y, x0, x1 int, out []float32) {
			p := m.Pix[m.PixOffset(x0, y):m.PixOffset(x1, y)]
			for i := 0; i+7 < len(p); i += 8 {
				c := premultipliedOnWhite(be16(p[i:]), be16(p[i+2:]), be16(p[i+4:]), be16(p[i+6:]))
				copy(out, c[:])
				out = out[3:]
			}
		}
	case *image.NRGBA64:
		return func(y, x0, x1 int, out []float32) {
			p := m.Pix[m.PixOffset(x0, y):m.PixOffset(x1, y)]
			for i := 0; i+7 < len(p); i += 8 {
				straightOnWhite(out, float32(be16(p[i:]))/257, float32(be16(p[i+2:]))/257, float32(be16(p[i+4:]))/257, float32(be16(p[i+6:]))/257)
				out = out[3:]
			}
		}
	case *image.Paletted:
		// A GIF's or PNG's palette: each entry flattened once.
		var table [256][3]float32
		for i, c := range m.Palette {
			table[i] = premultipliedOnWhite(c.RGBA())
		}
		return func(y, x0, x1 int, out []float32) {
			for _, v := range m.Pix[m.PixOffset(x0, y):m.PixOffset(x1, y)] {
				copy(out, table[v][:])
				out = out[3:]
			}
		}
	}
	// Reached by no decoder of ours: At boxes every pixel's colour.
	return func(y, x0, x1 int, out []float32) {
		for x := x0; x < x1; x++ {
			c := premultipliedOnWhite(m.At(x, y).RGBA())
			copy(out, c[:])
			out = out[3:]
		}
	}
}

// straightOnWhite writes the colour r, g, b of alpha a (not premultiplied,
// all 0 to 255) as it shows over white.
func straightOnWhite(out []float32, r, g, b, a float32) {
	white := 255 - a
	out[0], out[1], out[2] = r*a/255+white, g*a/255+white, b*a/255+white
}

// premultipliedOnWhite is a color.Color's RGBA (16-bit, premultiplied) as
// it shows over white, from 0 to 255.
func premultipliedOnWhite(r, g, b, a uint32) [3]float32 {
	white := float32(0xffff - a)
	return [3]float32{(float32(r) + white) / 257, (float32(g) + white) / 257, (float32(b) + white) / 257}
}

// be16 is a 16-bit big-endian sample, as image's 16-bit types store them.
func be16(p []byte) uint32 { return uint32(p[0])<<8 | uint32(p[1]) }
