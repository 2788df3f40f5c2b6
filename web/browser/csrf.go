package browser

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
	"petstore/web"
)

// CSRFField is the form field, and CSRFHeader the header (htmx), that
// carry the token.
const (
	CSRFField  = "_csrf"
	CSRFHeader = "X-CSRF-Token"
	csrfKey    = "csrf"
)

type csrfLocal struct{}

// CSRF guards a browser area with a synchronizer token kept in its session
// (name): every unsafe request must send it back, in the form or the
// X-CSRF-Token header. The session cookie is SameSite=Lax as well. On a
// route whose body streams (a file upload) the form's token is read from
// the body's first part alone, and a refusal closes the connection with
// the rest of the body unread (upload.go). Elsewhere it reads the form
// ReadBody has read, so it goes after ReadBody in a chain.
func CSRF(s *Sessions, name string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		sess, err := s.Get(c, name)
		if err != nil {
			return err
		}
		token := sess.Value(csrfKey)
		if token == "" {
			b := make([]byte, 32)
			if _, err := rand.Read(b); err != nil {
				return err
			}
			token = base64.RawURLEncoding.EncodeToString(b)
			sess.Set(csrfKey, token)
			if err := sess.Save(); err != nil {
				return err
			}
		}
		c.Locals(csrfLocal{}, token)
		switch c.Method() {
		case fiber.MethodGet, fiber.MethodHead, fiber.MethodOptions:
			return c.Next()
		}
		sent := c.Get(CSRFHeader)
		if sent == "" {
			if sent, err = formToken(c); err != nil {
				return err
			}
		}
		if !tokenMatches(sent, token) {
			if _, streamed := web.StreamedBody(c); streamed {
				c.Context().SetConnectionClose() // no more of it is read
			}
			return db.Errorf(db.EForbidden, "This form has expired. Reload the page and try again.")
		}
		return c.Next()
	}
}

// CSRFToken is the token to put in the request's forms: the session's,
// masked with fresh random bytes on every call (SPEC §17). A page that
// echoes what the visitor typed and is compressed would otherwise leak a
// fixed token a guessed character at a time through its compressed length
// (BREACH); a masked one differs on every render, and each verifies.
func CSRFToken(c *fiber.Ctx) string {
	t, _ := c.Locals(csrfLocal{}).(string)
	raw, err := base64.RawURLEncoding.DecodeString(t)
	if err != nil || len(raw) == 0 {
		return ""
	}
	masked := make([]byte, 2*len(raw))
	pad, sealed := masked[:len(raw)], masked[len(raw):]
	_, _ = rand.Read(pad) // crypto/rand does not fail (Go 1.24+)
	subtle.XORBytes(sealed, pad, raw)
	return base64.RawURLEncoding.EncodeToString(masked)
}

// tokenMatches reports whether sent, a masked token (CSRFToken), unmasks
// to the session's token, in constant time.
func tokenMatches(sent, token string) bool {
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(raw) == 0 {
		return false
	}
	masked, err := base64.RawURLEncoding.DecodeString(sent)
	if err != nil || len(masked) != 2*len(raw) {
		return false
	}
	got := make([]byte, len(raw))
	subtle.XORBytes(got, masked[:len(raw)], masked[len(raw):])
	return subtle.ConstantTimeCompare(got, raw) == 1
}

// RenewCSRF forgets the CSRF token kept in the session, so that CSRF makes
// a new one on the next request: a token seen before a sign-in is worth
// nothing after it.
func (s *Session) RenewCSRF() { s.Delete(csrfKey) }
