package photo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"io"
	"runtime/debug"
)

// JPEG is one stored size of a photo: baseline JPEG bytes with no metadata
// segment at all, and the pixel size the API reports (SPEC §14's Photo
// width and height are the large size's).
type JPEG struct {
	Bytes  []byte
	Width  int
	Height int
}

// Result is what an upload becomes: the two sizes SPEC §14 stores, and a
// middle one for the pages (a pet page's photo is shown some 500 px wide:
// 400 is too coarse for it, 1600 four times the bytes).
type Result struct {
	// Large has its longest side at most Limits.LargeSide, Medium at most
	// Limits.MediumSide, Thumb at most Limits.ThumbSide. None is ever
	// larger than the upload.
	Large  JPEG
	Medium JPEG
	Thumb  JPEG
	// Format is what the bytes were ("jpeg", "png", "gif" or "webp"),
	// which need not match the declared Content-Type; for logs.
	Format string
}

// Reencode turns an untrusted upload into the large, medium and thumbnail
// JPEGs.
//
// contentType is the request's Content-Type header; anything CheckContentType
// refuses is ErrUnsupportedType before r is read. Then at most
// limits.MaxBytes+1 bytes are read (more is ErrTooLarge). The format is taken
// from the bytes, not the header: a PNG labelled image/jpeg is processed as
// the PNG it is, since the output is a fresh JPEG either way, while bytes that
// are none of the four formats are ErrUndecodable. Width and height are read
// from the header and checked (ErrTooManyPixels, ErrUndecodable) before a
// pixel is decoded. Then the upload waits for w's turn, if MaxWaiting
// others are not waiting already (ErrBusy). Waiting, decoding, resizing
// and encoding share limits.Timeout (ErrTimeout). A JPEG's EXIF orientation is
// applied; a GIF's first frame is shown on its logical screen; the image is
// flattened onto white, scaled down with Catmull-Rom (never up) and encoded
// with image/jpeg, which writes no metadata: EXIF, GPS positions, comments
// and colour profiles of the upload are all gone.
//
// Errors other than those sentinels are the reader's own (a client that
// went away) or ctx's, when the caller cancels it.
func (w *Worker) Reencode(ctx context.Context, r io.Reader, contentType string, limits Limits) (res *Result, err error) {
	if err := CheckContentType(contentType); err != nil {
		return nil, err
	}
	l := limits.withDefaults()
	data, err := readBounded(r, l.MaxBytes)
	if err != nil {
		return nil, err
	}
	defer func() {
		if v := recover(); v != nil {
			res, err = nil, panicError(v, debug.Stack())
		}
	}()
	f, cfg, err := inspect(data, l)
	if err != nil {
		return nil, err
	}
	orientation := 1
	if f.name == "jpeg" {
		orientation = exifOrientation(data)
	}

	ctx, cancel := context.WithTimeoutCause(ctx, l.Timeout, ErrTimeout)
	defer cancel()
	leave, err := w.Enter(ctx)
	if errors.Is(err, ErrBusy) {
		return nil, err
	} else if err != nil {
		return nil, stopped(ctx, l)
	}
	type outcome struct {
		res *Result
		err error
	}
	done := make(chan outcome, 1)
	// A decoder cannot be interrupted. When ctx ends first, Reencode returns
	// and this goroutine finishes in the background: its memory is bounded
	// by the pixel checks above and it still holds the worker's turn, so
	// abandoned decodes cannot pile up. Decoders read through ctxReader, so
	// most of them stop at their next read, and the scaler checks ctx.
	go func() {
		defer leave()
		// The decoded image is garbage once the sizes are made: collecting
		// it, and handing it back to the system, before the next upload may
		// start keeps the process at one upload's worth rather than
		// several, at the cost of one collection of a small heap per upload.
		defer debug.FreeOSMemory()
		defer func() {
			if v := recover(); v != nil {
				done <- outcome{err: panicError(v, debug.Stack())}
			}
		}()
		var o outcome
		o.res, o.err = render(ctx, f, cfg, data, orientation, l)
		done <- o
	}()
	select {
	case o := <-done:
		return o.res, o.err
	case <-ctx.Done():
		select {
		case o := <-done: // finished just in time: use it
			return o.res, o.err
		default:
			return nil, stopped(ctx, l)
		}
	}
}

// readBounded reads all of r if it is at most max bytes. Reading one byte
// more than max is how an oversized body is told apart from one of exactly
// max bytes without ever holding more than that. A reader that knows its
// length (a body already in memory) is read into one buffer of that size,
// not the doubling ones of io.ReadAll: a waiting upload holds its copy.
func readBounded(r io.Reader, max int64) ([]byte, error) {
	var data []byte
	var err error
	if n, ok := r.(interface{ Len() int }); ok {
		data = make([]byte, min(int64(n.Len()), max+1))
		var read int
		read, err = io.ReadFull(r, data)
		data = data[:read]
		if err == io.ErrUnexpectedEOF {
			err = nil // shorter than it said: what there is
		}
	} else {
		data, err = io.ReadAll(io.LimitReader(r, max+1))
	}
	if err != nil {
		return nil, fmt.Errorf("read photo: %w", err)
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%w: over %d bytes", ErrTooLarge, max)
	}
	return data, nil
}

// inspect finds the format of data and checks the dimensions its header
// declares, which costs next to nothing: a decompression bomb (a small
// file declaring a huge image) is refused here, before the decoder would
// allocate its pixels.
func inspect(data []byte, l Limits) (format, image.Config, error) {
	f, ok := sniff(data)
	if !ok {
		return format{}, image.Config{}, fmt.Errorf("%w: not a JPEG, PNG, GIF or WebP image", ErrUndecodable)
	}
	cfg, err := f.decodeConfig(bytes.NewReader(data))
	if err != nil {
		return format{}, image.Config{}, fmt.Errorf("%w: %v", ErrUndecodable, err)
	}
	w, h := cfg.Width, cfg.Height
	switch {
	case w <= 0 || h <= 0:
		err = fmt.Errorf("%w: %dx%d has no pixels", ErrUndecodable, w, h)
	case w > l.MaxSide || h > l.MaxSide:
		err = fmt.Errorf("%w: %dx%d has a side over %d pixels", ErrTooManyPixels, w, h, l.MaxSide)
	case int64(w)*int64(h) > l.MaxPixels:
		err = fmt.Errorf("%w: %dx%d is over %d pixels", ErrTooManyPixels, w, h, l.MaxPixels)
	}
	return f, cfg, err
}

// render decodes data, whose header inspect found to be cfg, and produces
// the three sizes, each scaled from the next larger one.
func render(ctx context.Context, f format, cfg image.Config, data []byte, orientation int, l Limits) (*Result, error) {
	img, err := f.decode(ctxReader{ctx, bytes.NewReader(data)})
	if ctx.Err() != nil {
		return nil, stopped(ctx, l) // the decoder's error may be ctxReader's
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUndecodable, err)
	}
	screen := image.Rect(0, 0, cfg.Width, cfg.Height)
	if b := img.Bounds(); b.Empty() || !b.In(screen) {
		// The decoders keep to their header; this is in case one does not.
		return nil, fmt.Errorf("%w: decoded %v, header says %v", ErrUndecodable, b, screen)
	}
	// A GIF frame may cover part of the screen; browsers show the rest as
	// transparent, which becomes white here. The scaler reads img a row at
	// a time, so the decoded pixels are the only full-size buffer.
	large, err := resized(ctx, img, screen, l.LargeSide)
	if err != nil {
		return nil, stopped(ctx, l)
	}
	large = orient(large, orientation)
	medium, err := resized(ctx, large, large.Rect, l.MediumSide)
	if err != nil {
		return nil, stopped(ctx, l)
	}
	thumb, err := resized(ctx, medium, medium.Rect, l.ThumbSide)
	if err != nil {
		return nil, stopped(ctx, l)
	}
	res := &Result{Format: f.name}
	if res.Large, err = encodeJPEG(large, LargeQuality); err != nil {
		return nil, err
	}
	if res.Medium, err = encodeJPEG(medium, LargeQuality); err != nil {
		return nil, err
	}
	if res.Thumb, err = encodeJPEG(thumb, ThumbQuality); err != nil {
		return nil, err
	}
	return res, nil
}

// stopped is the error for a ctx that ended: ErrTimeout when our own
// deadline passed, the caller's cancellation otherwise.
func stopped(ctx context.Context, l Limits) error {
	cause := context.Cause(ctx)
	if errors.Is(cause, ErrTimeout) {
		return fmt.Errorf("%w after %s: %w", ErrTimeout, l.Timeout, context.DeadlineExceeded)
	}
	return fmt.Errorf("process photo: %w", cause)
}

// ctxReader fails every read once ctx is done, so that a decoder still
// running after its caller gave up stops at its next read.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
