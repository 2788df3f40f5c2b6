package web

import (
	"errors"
	"io"
	"mime/multipart"
	"strings"
	"testing"
	"testing/iotest"
)

// csrfPrefixMax is the browser kit's CSRF gate (web/browser).
const csrfPrefixMax = 8 << 10

// TestBodyReader: a body of exactly the limit reads whole; one byte more
// is ErrBodyTooLarge, having read no more than the limit; while the limit
// is a gate below the route's (BodyReader.Gate), going past it is
// ErrBodyGated.
func TestBodyReader(t *testing.T) {
	for _, tc := range []struct {
		name         string
		size         int
		limit, max   int64
		want         error
		wantReadSize int
	}{
		{"under", 99, 100, 100, nil, 99},
		{"exactly", 100, 100, 100, nil, 100},
		{"one byte over", 101, 100, 100, ErrBodyTooLarge, 100},
		{"far over", 1 << 20, 100, 100, ErrBodyTooLarge, 100},
		{"past the gate", csrfPrefixMax + 1000, csrfPrefixMax, 1 << 20, ErrBodyGated, csrfPrefixMax},
		{"within the gate", csrfPrefixMax - 100, csrfPrefixMax, 1 << 20, nil, csrfPrefixMax - 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// One byte a read, the way a slow client's body arrives.
			b := &BodyReader{r: iotest.OneByteReader(strings.NewReader(strings.Repeat("x", tc.size))), limit: tc.limit, max: tc.max}
			got, err := io.ReadAll(b)
			if !errors.Is(err, tc.want) || len(got) != tc.wantReadSize {
				t.Errorf("read %d bytes, error %v; want %d and %v", len(got), err, tc.wantReadSize, tc.want)
			}
			b = &BodyReader{r: strings.NewReader(strings.Repeat("x", tc.size)), limit: tc.limit, max: tc.max}
			got, err = io.ReadAll(b)
			if !errors.Is(err, tc.want) || len(got) != tc.wantReadSize {
				t.Errorf("in big reads: read %d bytes, error %v; want %d and %v", len(got), err, tc.wantReadSize, tc.want)
			}
		})
	}
}

// TestBodyGateAfterToken: once the token part is read through the gate,
// the rest of the upload reads on, however the body's bytes arrive.
// mime/multipart reads up to 4 KiB ahead of the part it hands out, so a
// gate of 4 KiB tripped behind a token that had already passed when the
// body came in small pieces (a flaky 403-free, 1-photo upload before).
func TestBodyGateAfterToken(t *testing.T) {
	var body strings.Builder
	body.WriteString("--B\r\nContent-Disposition: form-data; name=\"_csrf\"\r\n\r\n" + strings.Repeat("t", 43) + "\r\n")
	body.WriteString("--B\r\nContent-Disposition: form-data; name=\"photos\"; filename=\"a.jpg\"\r\n\r\n" + strings.Repeat("x", 64<<10) + "\r\n--B--\r\n")
	for chunk := 1; chunk < 200; chunk++ {
		// The first chunk short (what came with the headers), the rest in
		// reads as large as asked for.
		b := &BodyReader{r: &chunkedReads{r: strings.NewReader(body.String()), first: chunk}, limit: csrfPrefixMax, max: 1 << 20}
		mr := multipart.NewReader(b, "B")
		part, err := mr.NextPart()
		if err != nil || part.FormName() != "_csrf" {
			t.Fatalf("first read of %d: first part %v", chunk, err)
		}
		if _, err := io.ReadAll(part); err != nil {
			t.Fatalf("first read of %d: the token part: %v", chunk, err)
		}
		b.limit = b.max
		part, err = mr.NextPart()
		if err != nil {
			t.Fatalf("first read of %d: second part: %v", chunk, err)
		}
		if got, err := io.ReadAll(part); err != nil || len(got) != 64<<10 {
			t.Errorf("first read of %d: the file: %d bytes, %v", chunk, len(got), err)
		}
	}
}

// chunkedReads hands out at most first bytes in its first read, then as many
// as asked for.
type chunkedReads struct {
	r     io.Reader
	first int
	done  bool
}

func (c *chunkedReads) Read(p []byte) (int, error) {
	if !c.done && len(p) > c.first {
		p = p[:c.first]
	}
	c.done = true
	return c.r.Read(p)
}
