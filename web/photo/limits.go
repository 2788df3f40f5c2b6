package photo

import "time"

// Limits bounds what Reencode accepts and what it produces. They exist so
// that an upload can cost the server only a known amount of memory and
// time, however it was crafted. A zero or negative field takes its value
// from DefaultLimits, so callers set only what they mean to change.
type Limits struct {
	// MaxBytes is the largest body read; one byte more is ErrTooLarge.
	// SPEC §14: 8 MiB.
	MaxBytes int64
	// MaxPixels is the largest width × height decoded (ErrTooManyPixels).
	// It is what bounds the decoder's memory, checked from the header
	// before any pixel is decoded. SPEC §14: 40 megapixels.
	MaxPixels int64
	// MaxSide is the longest width or height accepted (ErrTooManyPixels):
	// a 40-megapixel image 1 pixel tall is a bomb of another shape.
	MaxSide int
	// LargeSide is the longest side of Result.Large (SPEC §14: 1600).
	LargeSide int
	// MediumSide is the longest side of Result.Medium: 800, the photo on
	// a pet's page, and a card's on a high-density screen.
	MediumSide int
	// ThumbSide is the longest side of Result.Thumb (SPEC §14: 400).
	ThumbSide int
	// Timeout bounds everything after the body is read: waiting for the
	// photo worker, decoding, resizing and encoding (ErrTimeout).
	Timeout time.Duration
}

// Encoding qualities: 82 keeps photographs free of visible artefacts at
// about a third of quality 95's bytes (the large and the medium size); a
// thumbnail is looked at small, so 80 is enough.
const (
	LargeQuality = 82
	ThumbQuality = 80
)

// DefaultLimits returns SPEC §14's limits: 8 MiB, 40 megapixels, sides up
// to 20,000 pixels, 1600, 800 and 400 pixel outputs, and 10 seconds of work. It is
// a function, not a variable, so no caller can change another's defaults.
func DefaultLimits() Limits {
	return Limits{
		MaxBytes:   8 << 20,
		MaxPixels:  40_000_000,
		MaxSide:    20_000,
		LargeSide:  1600,
		MediumSide: 800,
		ThumbSide:  400,
		Timeout:    10 * time.Second,
	}
}

// withDefaults fills every zero or negative field from DefaultLimits.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxBytes <= 0 {
		l.MaxBytes = d.MaxBytes
	}
	if l.MaxPixels <= 0 {
		l.MaxPixels = d.MaxPixels
	}
	if l.MaxSide <= 0 {
		l.MaxSide = d.MaxSide
	}
	if l.LargeSide <= 0 {
		l.LargeSide = d.LargeSide
	}
	if l.MediumSide <= 0 {
		l.MediumSide = d.MediumSide
	}
	if l.ThumbSide <= 0 {
		l.ThumbSide = d.ThumbSide
	}
	if l.Timeout <= 0 {
		l.Timeout = d.Timeout
	}
	return l
}
