package photo

import (
	"bytes"
	"fmt"
	"image"
	"image/jpeg"

	"golang.org/x/image/draw"
)

// fit returns w×h scaled so that its longest side is at most side, keeping
// the aspect ratio (rounded to the nearest pixel, at least 1). An image that
// already fits keeps its size: uploads are never scaled up, which would
// only add bytes and blur.
func fit(w, h, side int) (int, int) {
	if w <= side && h <= side {
		return w, h
	}
	if w >= h {
		return side, max(1, int((int64(h)*int64(side)+int64(w)/2)/int64(w)))
	}
	return max(1, int((int64(w)*int64(side)+int64(h)/2)/int64(h))), side
}

// resized returns src scaled to fit side, as opaque RGB: it is drawn over
// white, so transparent parts of a PNG, GIF or WebP come out white rather
// than the black a JPEG encoder would make of them.
//
// Catmull-Rom is x/image/draw's sharpest kernel that still averages every
// source pixel when shrinking (no aliasing). Its scaler holds an
// intermediate of dst width × src height × 32 bytes: about 150 MB for a
// 12-megapixel photo, 320 MB at worst for 40 megapixels. Transform would
// avoid it but is two to three times slower, and time is what the timeout
// bounds; memory is bounded by the pixel limit and the single worker.
func resized(src image.Image, side int) *image.RGBA {
	b := src.Bounds()
	w, h := fit(b.Dx(), b.Dy(), side)
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := range dst.Pix {
		dst.Pix[i] = 0xff // opaque white
	}
	if w == b.Dx() && h == b.Dy() {
		draw.Draw(dst, dst.Bounds(), src, b.Min, draw.Over)
	} else {
		draw.CatmullRom.Scale(dst, dst.Bounds(), src, b, draw.Over, nil)
	}
	return dst
}

// encodeJPEG encodes m with image/jpeg, which writes the pixels and the
// tables it needs and no APPn segment: nothing of the upload's metadata can
// reach the output.
func encodeJPEG(m *image.RGBA, quality int) (JPEG, error) {
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, m, &jpeg.Options{Quality: quality}); err != nil {
		return JPEG{}, fmt.Errorf("encode jpeg: %w", err)
	}
	return JPEG{Bytes: buf.Bytes(), Width: m.Rect.Dx(), Height: m.Rect.Dy()}, nil
}
