package photo

import (
	"errors"
	"fmt"
)

// The errors Reencode and CheckContentType return wrap exactly one of these
// (test with errors.Is), so the caller maps them to a status with one
// table; the text of every error they wrap is safe to show a client.
var (
	// ErrUnsupportedType: the Content-Type is not image/jpeg, image/png,
	// image/gif or image/webp. Decided before the body is read (→ 415).
	ErrUnsupportedType = errors.New("unsupported media type: send image/jpeg, image/png, image/gif or image/webp")
	// ErrTooLarge: the body is over Limits.MaxBytes (→ 413). Detected
	// while reading, so no more than MaxBytes+1 bytes are ever held.
	ErrTooLarge = errors.New("image too large")
	// ErrUndecodable: the bytes are not a JPEG, PNG, GIF or WebP image we
	// can decode, whatever the Content-Type said (→ 422).
	ErrUndecodable = errors.New("image cannot be decoded")
	// ErrTooManyPixels: the header declares more than Limits.MaxPixels or a
	// side over Limits.MaxSide; refused before decoding (→ 422).
	ErrTooManyPixels = errors.New("image has too many pixels")
	// ErrTimeout: the work took longer than Limits.Timeout, or waited that
	// long for the photo worker. The image may be fine and the server busy
	// (→ 503). It also matches context.DeadlineExceeded.
	ErrTimeout = errors.New("image processing timed out")
	// ErrBusy: MaxWaiting uploads are waiting for the Worker already, so
	// this one is refused at once rather than held in memory in line. The
	// image may be fine (→ 503 with Retry-After).
	ErrBusy = errors.New("too many photos are waiting to be processed")
)

// decoderPanic is what a panic inside a decoder becomes: the image is
// undecodable to us, and the process must not die of a codec bug. Its text
// says no more than that; the value and stack are for tests and logs.
type decoderPanic struct {
	value any
	stack []byte
}

func (p *decoderPanic) Error() string { return "decoder failed" }

// panicError turns a recovered value into an ErrUndecodable.
func panicError(v any, stack []byte) error {
	return fmt.Errorf("%w: %w", ErrUndecodable, &decoderPanic{value: v, stack: stack})
}
