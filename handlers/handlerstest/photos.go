package handlerstest

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/color"
	"image/png"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"testing"

	"petstore/web/browser/browsertest"
	"petstore/web/photo/phototest"
)

// JPEGOf is a w×h photo-like JPEG.
func JPEGOf(tb testing.TB, w, h int) []byte {
	tb.Helper()
	b, err := phototest.JPEG(w, h)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// PNGOf is a w×h PNG of one colour.
func PNGOf(tb testing.TB, w, h int) []byte {
	tb.Helper()
	m := image.NewNRGBA(image.Rect(0, 0, w, h))
	for i := range w * h {
		m.SetNRGBA(i%w, i/w, color.NRGBA{R: 200, G: 120, B: 40, A: 255})
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, m); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// PNGClaiming is a 1×1 PNG whose header claims w×h: a decompression
// bomb's header without the bomb.
func PNGClaiming(tb testing.TB, w, h uint32) []byte {
	tb.Helper()
	b, err := phototest.PNGClaiming(w, h)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// GPSLatitude is 51° 30' 12.34" as Exif writes it (three big-endian
// RATIONALs): the bytes a test looks for in what the store serves.
var GPSLatitude = []byte{
	0, 0, 0, 51, 0, 0, 0, 1,
	0, 0, 0, 30, 0, 0, 0, 1,
	0, 0, 0x04, 0xd2, 0, 0, 0, 100,
}

// WithExifGPS puts an Exif APP1 segment right after a JPEG's SOI marker,
// where cameras write it, holding a GPS position (GPSLatitude): "Exif\0\0",
// then a big-endian TIFF structure whose IFD0 points to a GPS IFD with
// GPSLatitudeRef "N" and GPSLatitude.
func WithExifGPS(tb testing.TB, jpg []byte) []byte {
	tb.Helper()
	be := binary.BigEndian
	b := []byte("Exif\x00\x00MM")
	b = be.AppendUint16(b, 42)
	b = be.AppendUint32(b, 8)
	entry := func(tag, typ uint16, count uint32, value []byte) {
		b = be.AppendUint16(b, tag)
		b = be.AppendUint16(b, typ)
		b = be.AppendUint32(b, count)
		b = append(b, value...)
	}
	b = be.AppendUint16(b, 1) // IFD0 at 8: one entry
	entry(0x8825, 4, 1, be.AppendUint32(nil, 26))
	b = be.AppendUint32(b, 0)
	b = be.AppendUint16(b, 2) // GPS IFD at 26: two entries
	entry(0x0001, 2, 2, []byte("N\x00\x00\x00"))
	entry(0x0002, 5, 3, be.AppendUint32(nil, 56))
	b = be.AppendUint32(b, 0)
	b = append(b, GPSLatitude...) // at 56
	out := append([]byte{}, jpg[:2]...)
	out = append(out, 0xff, 0xe1)
	out = be.AppendUint16(out, uint16(len(b)+2))
	out = append(out, b...)
	return append(out, jpg[2:]...)
}

// JPEGMarkers lists the markers of a JPEG's segments up to its image data
// (SOS): where metadata (APPn, COM) lives.
func JPEGMarkers(tb testing.TB, data []byte) []byte {
	tb.Helper()
	m, err := phototest.Markers(data)
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// UploadPhoto POSTs an image as the body of POST /api/pets/{petId}/photos
// with the staff key.
func (a *App) UploadPhoto(petID int64, contentType string, body []byte) *Response {
	a.T.Helper()
	return a.Do(Req{Method: "POST", Path: "/api/pets/" + Itoa(petID) + "/photos", Key: a.Staff, ContentType: contentType, Body: body})
}

// UploadFile is one file of a multipart upload.
type UploadFile struct {
	Name, ContentType string
	Data              []byte
}

// PhotoForm is a multipart/form-data body as the console's upload form
// sends it: the _csrf field first (unless token is ""), then each file as
// a "photos" part. It returns the body and its Content-Type.
func PhotoForm(tb testing.TB, token string, files ...UploadFile) ([]byte, string) {
	tb.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	if token != "" {
		if err := w.WriteField("_csrf", token); err != nil {
			tb.Fatal(err)
		}
	}
	for _, f := range files {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", `form-data; name="photos"; filename="`+f.Name+`"`)
		h.Set("Content-Type", f.ContentType)
		part, err := w.CreatePart(h)
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := part.Write(f.Data); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes(), w.FormDataContentType()
}

// Upload posts a multipart body (PhotoForm) to the console: as the plain
// form does, or with js as console.js does (HX-Request, and the CSRF
// token in the X-CSRF-Token header).
func (b *Browser) Upload(path string, body []byte, contentType string, js bool) *browsertest.Page {
	b.T.Helper()
	r := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	r.Header.Set("Content-Type", contentType)
	if js {
		r.Header.Set("HX-Request", "true")
		r.Header.Set("X-CSRF-Token", b.CSRF)
	}
	return b.Do(r)
}
