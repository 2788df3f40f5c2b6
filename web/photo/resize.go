package photo

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/jpeg"
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

// resized returns m, as shown on screen, scaled to fit side (never up)
// as opaque RGB: it is drawn over white, so transparent parts of a PNG,
// GIF or WebP come out white rather than the black a JPEG encoder would
// make of them. See scaleTo for how, and what it costs.
func resized(ctx context.Context, m image.Image, screen image.Rectangle, side int) (*image.RGBA, error) {
	w, h := fit(screen.Dx(), screen.Dy(), side)
	return scaleTo(ctx, m, screen, w, h)
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
