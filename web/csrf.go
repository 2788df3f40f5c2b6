package web

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
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
// route that reads a large body itself (BodyLimits.Allow: a file upload)
// the form's token is read from the body's first part alone, and a refusal
// closes the connection with the rest of the body unread (upload.go).
func CSRF(s *Sessions, name string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		sess, err := s.Get(c, name)
		if err != nil {
			return err
		}
		token, _ := sess.Values[csrfKey].(string)
		if token == "" {
			b := make([]byte, 32)
			if _, err := rand.Read(b); err != nil {
				return err
			}
			token = base64.RawURLEncoding.EncodeToString(b)
			sess.Values[csrfKey] = token
			if err := s.Save(c, sess); err != nil {
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
		if subtle.ConstantTimeCompare([]byte(sent), []byte(token)) != 1 {
			if streamedRoute(c) {
				c.Context().SetConnectionClose() // BodyLimits reads no more of it
			}
			return db.Errorf(db.EForbidden, "This form has expired. Reload the page and try again.")
		}
		return c.Next()
	}
}

// CSRFToken is the token to put in the request's forms.
func CSRFToken(c *fiber.Ctx) string {
	t, _ := c.Locals(csrfLocal{}).(string)
	return t
}

// SecurityHeaders sets the browser protections of the HTML pages: only
// same-origin scripts, styles and frames, no sniffing, no referrer leaks.
func SecurityHeaders(c *fiber.Ctx) error {
	c.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'")
	c.Set("X-Content-Type-Options", "nosniff")
	c.Set("Referrer-Policy", "same-origin")
	c.Set("X-Frame-Options", "DENY")
	return c.Next()
}
