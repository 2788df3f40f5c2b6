package photo

import "strings"

// mediaTypes are the Content-Types SPEC §14 accepts.
var mediaTypes = map[string]bool{
	"image/jpeg": true,
	"image/png":  true,
	"image/gif":  true,
	"image/webp": true,
}

// CheckContentType reports ErrUnsupportedType unless the Content-Type header
// names one of the four accepted image types. It exists so that the caller
// can answer 415 before reading a byte of the body. Parameters
// ("; charset=binary") and letter case are ignored; an empty header is
// unsupported. Passing it says nothing about the bytes: Reencode trusts
// what they are, not what the header says.
func CheckContentType(header string) error {
	mediaType, _, _ := strings.Cut(header, ";")
	mediaType = strings.ToLower(strings.TrimSpace(mediaType))
	if !mediaTypes[mediaType] {
		return ErrUnsupportedType
	}
	return nil
}
