package photo

import (
	"errors"
	"testing"
)

func TestCheckContentType(t *testing.T) {
	for _, tt := range []struct {
		header string
		ok     bool
	}{
		{"image/jpeg", true},
		{"image/png", true},
		{"image/gif", true},
		{"image/webp", true},
		{"IMAGE/PNG", true},
		{"Image/WebP", true},
		{"image/jpeg; charset=binary", true},
		{" image/gif ;", true},
		{"image/png; charset", true}, // a malformed parameter is still a parameter
		{"", false},
		{"text/plain", false},
		{"image/jpg", false}, // not a registered type; SPEC §14 lists four
		{"image/svg+xml", false},
		{"image/tiff", false},
		{"application/octet-stream", false},
		{"image/png2", false},
		{"image", false},
		{"multipart/form-data; boundary=x", false},
	} {
		err := CheckContentType(tt.header)
		if tt.ok && err != nil {
			t.Errorf("CheckContentType(%q) = %v, want nil", tt.header, err)
		}
		if !tt.ok && !errors.Is(err, ErrUnsupportedType) {
			t.Errorf("CheckContentType(%q) = %v, want ErrUnsupportedType", tt.header, err)
		}
	}
}
