package handlers_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"petstore/db"
	"petstore/db/dbtest"
	"petstore/handlers/handlerstest"
)

// TestConsoleUploadWire drives the console's photo upload over a real
// connection, on both databases. A post whose first part is a forged token,
// or whose first 4 KiB hold no token at all, is refused (403, the
// connection closed) while the client still holds back nearly all of the
// 60 MiB it announced: the refusal reads nothing past the first part, so a
// forged upload costs the server a few kilobytes. The real token's upload
// goes through; one announced over the limit is refused from its headers.
func TestConsoleUploadWire(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		rex := a.SeedPet("Rex", 1)
		b := a.SignedIn(t)
		addr := strings.TrimPrefix(a.Listen(), "http://")
		var cookies []string
		for _, c := range b.Cookies {
			cookies = append(cookies, c.Name+"="+c.Value)
		}
		head := func(length int) string {
			return fmt.Sprintf("POST /staff/pets/%d/photos HTTP/1.1\r\nHost: x\r\nCookie: %s\r\nContent-Type: multipart/form-data; boundary=B0UND\r\nContent-Length: %d",
				rex.ID, strings.Join(cookies, "; "), length)
		}
		token := func(tok string) string {
			return "--B0UND\r\nContent-Disposition: form-data; name=\"_csrf\"\r\n\r\n" + tok + "\r\n"
		}
		const file = "--B0UND\r\nContent-Disposition: form-data; name=\"photos\"; filename=\"a.jpg\"\r\nContent-Type: image/jpeg\r\n\r\n"
		refused := func(t *testing.T, sent string) {
			t.Helper()
			began := time.Now()
			r := wireAnswer(t, addr, head(60<<20), strings.NewReader(sent))
			if r.Status != http.StatusForbidden || r.Header.Get("Connection") != "close" {
				t.Errorf("answer %d, Connection %q; want 403 and close", r.Status, r.Header.Get("Connection"))
			}
			t.Logf("refused after %d of 60 MiB sent, in %s", len(sent), time.Since(began).Round(time.Millisecond))
			if n := len(petPhotos(t, a, rex.ID)); n != 0 {
				t.Fatalf("%d photos stored", n)
			}
		}

		t.Run("forged token", func(t *testing.T) {
			// fasthttp reads 8 KiB of a body with its headers before the
			// app sees the request: 16 KiB are sent.
			refused(t, token("forged")+file+strings.Repeat("x", 16<<10))
		})
		t.Run("no token in the first 4 KiB", func(t *testing.T) {
			refused(t, file+strings.Repeat("x", 16<<10))
		})
		t.Run("a long preamble", func(t *testing.T) {
			refused(t, strings.Repeat("preamble\r\n", 1000)+token(b.CSRF)+file+strings.Repeat("x", 16<<10))
		})
		t.Run("the real token", func(t *testing.T) {
			// A photo, 9 MiB that are too large for one, and another photo:
			// the stream goes on past the file it refuses.
			jpg := string(handlerstest.JPEGOf(t, 40, 30))
			body := token(b.CSRF) + file + jpg + "\r\n" + file + strings.Repeat("\x00", 9<<20) + "\r\n" + file + jpg + "\r\n--B0UND--\r\n"
			r := wireAnswer(t, addr, head(len(body)), strings.NewReader(body))
			if r.Status != http.StatusSeeOther {
				t.Fatalf("answer %d %s, want 303", r.Status, r.Body)
			}
			if n := len(petPhotos(t, a, rex.ID)); n != 2 {
				t.Fatalf("%d photos stored, want 2", n)
			}
		})
		t.Run("announced over the limit", func(t *testing.T) {
			limit := 8*8<<20 + 1<<20
			r := wireAnswer(t, addr, head(limit+1), bytes.NewReader([]byte(token(b.CSRF))))
			if r.Status != http.StatusRequestEntityTooLarge || !strings.Contains(string(r.Body), "65 MiB") {
				t.Errorf("answer %d %s, want 413 naming 65 MiB", r.Status, sweepShort(string(r.Body)))
			}
		})
	})
}

// petPhotos are a pet's photos as the store has them.
func petPhotos(t *testing.T, a *handlerstest.App, id int64) db.Photos {
	t.Helper()
	p, err := a.Store.FindPetByID(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return p.Photos
}
