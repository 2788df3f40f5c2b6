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

// csrfState is the request's session and its token, "" until a page asks
// for one (CSRFToken).
type csrfState struct {
	sess  *Session
	token string
}

// CSRF guards a browser area with a synchronizer token kept in its session
// (name): every unsafe request must send it back, in the form or the
// X-CSRF-Token header. The session cookie is SameSite=Lax as well. On a
// route whose body streams (a file upload) the form's token is read from
// the body's first part alone, and a refusal closes the connection with
// the rest of the body unread (upload.go). Elsewhere it reads the form
// ReadBody has read, so it goes after ReadBody in a chain.
//
// A session gets its token when a page first puts one in a form
// (CSRFToken), not on its first request: a page with no form to post
// (the storefront's catalog) neither writes a token nor sets a cookie,
// so a first visit costs no cookie to seal and its page can be the same
// for every new visitor. An unsafe request from a session without a token
// is refused: no page it was given could have sent one.
func CSRF(s *Sessions, name string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		sess, err := s.Get(c, name)
		if err != nil {
			return err
		}
		st := &csrfState{sess: sess, token: sess.Value(csrfKey)}
		c.Locals(csrfLocal{}, st)
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
		if st.token == "" || !tokenMatches(sent, st.token) {
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
// (BREACH); a masked one differs on every render, and each verifies. A
// session without a token gets one here, saved to the answer's cookie; ""
// outside CSRF's routes, or when that cookie cannot be written (the form
// then asks for a reload).
func CSRFToken(c *fiber.Ctx) string {
	st, _ := c.Locals(csrfLocal{}).(*csrfState)
	if st == nil {
		return ""
	}
	if st.token == "" {
		b := make([]byte, 32)
		_, _ = rand.Read(b)
		token := base64.RawURLEncoding.EncodeToString(b)
		st.sess.Set(csrfKey, token)
		if err := st.sess.Save(); err != nil {
			return ""
		}
		st.token = token
	}
	raw, err := base64.RawURLEncoding.DecodeString(st.token)
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
