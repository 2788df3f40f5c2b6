package console_test

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"petstore/db/dbtest"
	"petstore/handlers/handlerstest"
	"petstore/web/browser/browsertest"
)

// TestConsolePhotoUploadRefused: an upload without the session's CSRF
// token, or from someone not signed in, stores nothing. The plain form's
// token must be the body's first part; a refusal closes the connection
// (the rest of the body is never read). On both databases.
func TestConsolePhotoUploadRefused(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		rex := a.SeedPet("Rex", 1)
		b := a.SignedIn(t)
		upload := "/staff/pets/" + handlerstest.Itoa(rex.ID) + "/photos"
		jpg := handlerstest.UploadFile{Name: "a.jpg", ContentType: "image/jpeg", Data: handlerstest.JPEGOf(t, 64, 48)}
		// Another visitor's token is a real token, of the wrong session.
		other := a.Browser(t)
		other.Get("/staff/login").WantStatus(http.StatusOK)
		if other.CSRF == "" || other.CSRF == b.CSRF {
			t.Fatalf("tokens: %q and %q", other.CSRF, b.CSRF)
		}

		refused := func(t *testing.T, p *browsertest.Page) {
			t.Helper()
			if p.Status != http.StatusForbidden {
				t.Errorf("status %d, want 403: %s", p.Status, p.Body)
			}
			if p.Header.Get("Connection") != "close" {
				t.Errorf("a refused upload keeps its connection open: its body would be read")
			}
			if n := len(petPhotos(t, a, rex.ID)); n != 0 {
				t.Fatalf("%d photos stored by a refused upload", n)
			}
		}
		t.Run("no token", func(t *testing.T) {
			body, ct := handlerstest.PhotoForm(t, "", jpg)
			refused(t, b.Upload(upload, body, ct, false))
		})
		t.Run("forged token", func(t *testing.T) {
			body, ct := handlerstest.PhotoForm(t, "forged-token-forged-token-forged-token-abcd", jpg)
			refused(t, b.Upload(upload, body, ct, false))
		})
		t.Run("another session's token", func(t *testing.T) {
			body, ct := handlerstest.PhotoForm(t, other.CSRF, jpg)
			refused(t, b.Upload(upload, body, ct, false))
		})
		t.Run("token after the files", func(t *testing.T) {
			// The token as the last part, where only reading the whole
			// body would find it.
			var buf bytes.Buffer
			w := multipart.NewWriter(&buf)
			part, _ := w.CreateFormFile("photos", "a.jpg")
			_, _ = part.Write(jpg.Data)
			_ = w.WriteField("_csrf", b.CSRF)
			_ = w.Close()
			refused(t, b.Upload(upload, buf.Bytes(), w.FormDataContentType(), false))
		})
		t.Run("forged header", func(t *testing.T) {
			body, ct := handlerstest.PhotoForm(t, b.CSRF, jpg)
			real := b.CSRF
			b.CSRF = other.CSRF
			p := b.Upload(upload, body, ct, true)
			b.CSRF = real
			refused(t, p)
		})
		t.Run("not signed in", func(t *testing.T) {
			body, ct := handlerstest.PhotoForm(t, other.CSRF, jpg)
			other.Upload(upload, body, ct, false).WantRedirect("/staff/login")
			p := other.Upload(upload, body, ct, true).WantStatus(http.StatusUnauthorized)
			if p.Header.Get("HX-Redirect") != "/staff/login" {
				t.Errorf("HX-Redirect = %q", p.Header.Get("HX-Redirect"))
			}
			if n := len(petPhotos(t, a, rex.ID)); n != 0 {
				t.Fatalf("%d photos stored without a sign-in", n)
			}
		})
		t.Run("the real token", func(t *testing.T) {
			body, ct := handlerstest.PhotoForm(t, b.CSRF, jpg)
			b.Upload(upload, body, ct, false).WantRedirect("/staff/pets/" + handlerstest.Itoa(rex.ID) + "/edit#photos")
			if n := len(petPhotos(t, a, rex.ID)); n != 1 {
				t.Fatalf("%d photos stored, want 1", n)
			}
		})
	})
}

// TestConsolePhotoUploadHostile posts broken and hostile multipart bodies
// with the real token, as the plain form and as console.js: never a 5xx,
// and names that are not text are shown as text. On both databases.
func TestConsolePhotoUploadHostile(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		rex := a.SeedPet("Rex", 1)
		b := a.SignedIn(t)
		upload := "/staff/pets/" + handlerstest.Itoa(rex.ID) + "/photos"
		const ct = "multipart/form-data; boundary=B"
		tokenPart := func() string {
			return "--B\r\nContent-Disposition: form-data; name=\"_csrf\"\r\n\r\n" + b.CSRF + "\r\n"
		}
		filePart := func(name, data string) string {
			return "--B\r\nContent-Disposition: form-data; name=\"photos\"; filename=\"" + name + "\"\r\nContent-Type: image/png\r\n\r\n" + data + "\r\n"
		}
		bodies := map[string]string{
			"no closing boundary":  tokenPart() + filePart("a.png", "xyz"),
			"cut inside a part":    tokenPart() + "--B\r\nContent-Disposition: form-data; name=\"photos\"; filename=\"a.png\"\r\n\r\n\x89PNG",
			"garbage headers":      tokenPart() + "--B\r\ngarbage without a colon\r\n\r\nxyz\r\n--B--\r\n",
			"headers never end":    tokenPart() + "--B\r\nContent-Disposition: form-data; name=\"photos\"\r\n" + strings.Repeat("X-A: b\r\n", 5000),
			"NUL in the name":      tokenPart() + filePart("a\x00b.png", "xyz") + "--B--\r\n",
			"not UTF-8 name":       tokenPart() + filePart("\xff\xfe.png", "xyz") + "--B--\r\n",
			"escape in the name":   tokenPart() + filePart("\x1b[31mred.png", "xyz") + "--B--\r\n",
			"a long name":          tokenPart() + filePart(strings.Repeat("ü", 3000)+".png", "xyz") + "--B--\r\n",
			"a path for a name":    tokenPart() + filePart("../../etc/passwd", "xyz") + "--B--\r\n",
			"quoted-printable":     tokenPart() + "--B\r\nContent-Disposition: form-data; name=\"photos\"; filename=\"q.png\"\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n=89PNG=\r\n--B--\r\n",
			"nested multipart":     tokenPart() + "--B\r\nContent-Disposition: form-data; name=\"photos\"; filename=\"n.png\"\r\nContent-Type: multipart/mixed; boundary=C\r\n\r\n--C\r\n\r\nx\r\n--C--\r\n--B--\r\n",
			"only the end":         tokenPart() + "--B--\r\n",
			"an empty file input":  tokenPart() + filePart("", "") + "--B--\r\n",
			"a file with no field": tokenPart() + "--B\r\nContent-Disposition: form-data; filename=\"x.png\"\r\n\r\nxyz\r\n--B--\r\n",
		}
		for name, body := range bodies {
			for _, js := range []bool{false, true} {
				p := b.Upload(upload, []byte(body), ct, js)
				if p.Status >= 500 || (p.Status != http.StatusSeeOther && p.Status != http.StatusOK) {
					t.Errorf("%s (js %v): %d %s", name, js, p.Status, p.Body)
				}
				if !js {
					p = b.Get("/staff/pets/" + handlerstest.Itoa(rex.ID) + "/edit").WantStatus(http.StatusOK)
				}
				msg := p.ID("photos-message")
				if msg.Length() != 1 {
					t.Errorf("%s (js %v): no outcome shown", name, js)
				}
				if text := browsertest.Text(msg); strings.ContainsAny(text, "\x00\x1b") || !utf8.ValidString(text) || len(text) > 1000 {
					t.Errorf("%s (js %v): the outcome shows %q", name, js, text)
				}
			}
		}
		if n := len(petPhotos(t, a, rex.ID)); n != 0 {
			t.Errorf("%d photos stored from hostile bodies", n)
		}

		// Eight refused files with long names of 4-byte characters: the
		// outcome still fits the session cookie it crosses the redirect in.
		var files []handlerstest.UploadFile
		for range 8 {
			files = append(files, handlerstest.UploadFile{Name: strings.Repeat("😀", 200) + ".txt", ContentType: "text/plain", Data: []byte("x")})
		}
		body, contentType := handlerstest.PhotoForm(t, b.CSRF, files...)
		b.Upload(upload, body, contentType, false).WantRedirect("/staff/pets/" + handlerstest.Itoa(rex.ID) + "/edit#photos")
		p := b.Get("/staff/pets/" + handlerstest.Itoa(rex.ID) + "/edit").WantStatus(http.StatusOK)
		p.WantText("photos-message", "No photo was added. 8 files were not added:")
		items := p.ID("photos-refused").Find("li")
		if last := browsertest.Text(items.Last()); items.Length() < 2 || !strings.HasPrefix(last, "and ") || !strings.HasSuffix(last, " more files.") {
			t.Errorf("refused files listed: %d, the last %q", items.Length(), last)
		}
	})
}
