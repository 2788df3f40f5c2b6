package browser

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// TestUploadBody: a body of exactly the limit reads whole; one byte more
// is ErrUploadTooLarge, having read no more than the limit; while the
// limit is the CSRF gate, going past it is errTokenNotFirst.
func TestUploadBody(t *testing.T) {
	for _, tc := range []struct {
		name         string
		size         int
		limit, max   int64
		want         error
		wantReadSize int
	}{
		{"under", 99, 100, 100, nil, 99},
		{"exactly", 100, 100, 100, nil, 100},
		{"one byte over", 101, 100, 100, ErrUploadTooLarge, 100},
		{"far over", 1 << 20, 100, 100, ErrUploadTooLarge, 100},
		{"past the gate", 5000, csrfPrefixMax, 1 << 20, errTokenNotFirst, csrfPrefixMax},
		{"within the gate", 4000, csrfPrefixMax, 1 << 20, nil, 4000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// One byte a read, the way a slow client's body arrives.
			b := &uploadBody{r: iotest.OneByteReader(strings.NewReader(strings.Repeat("x", tc.size))), limit: tc.limit, max: tc.max}
			got, err := io.ReadAll(b)
			if !errors.Is(err, tc.want) || len(got) != tc.wantReadSize {
				t.Errorf("read %d bytes, error %v; want %d and %v", len(got), err, tc.wantReadSize, tc.want)
			}
			b = &uploadBody{r: strings.NewReader(strings.Repeat("x", tc.size)), limit: tc.limit, max: tc.max}
			got, err = io.ReadAll(b)
			if !errors.Is(err, tc.want) || len(got) != tc.wantReadSize {
				t.Errorf("in big reads: read %d bytes, error %v; want %d and %v", len(got), err, tc.wantReadSize, tc.want)
			}
		})
	}
}
