package handlerstest

import (
	"bytes"
	"mime/multipart"
	"net/textproto"
	"testing"
)

// ImportForm is the console's import form as a browser sends it: the CSRF
// token first, then the file (field "file") named name.
func ImportForm(tb testing.TB, token, name string, data []byte) ([]byte, string) {
	tb.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	if err := w.WriteField("_csrf", token); err != nil {
		tb.Fatal(err)
	}
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="file"; filename="`+name+`"`)
	h.Set("Content-Type", "text/csv")
	part, err := w.CreatePart(h)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := part.Write(data); err != nil {
		tb.Fatal(err)
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes(), w.FormDataContentType()
}
