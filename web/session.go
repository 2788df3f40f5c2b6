package web

import (
	"crypto/sha256"
	"fmt"
	"net/http"

	"github.com/gofiber/fiber/v2"
	"github.com/gorilla/sessions"
)

// Sessions keeps browser sessions in signed and encrypted cookies
// (gorilla/sessions). It is the only place that touches gorilla/sessions,
// which is handed a net/http request holding the request's cookies alone
// (cookieRequest). Cookies carry the session's values,
// so any instance serves any browser; what must end on the server (the
// console's sign-in) is a database record the cookie names.
type Sessions struct {
	store *sessions.CookieStore
}

// NewSessions builds the cookie store from the SESSION_KEYS secrets: the
// first signs and encrypts new cookies, every one still opens old ones.
func NewSessions(secrets [][]byte) *Sessions {
	var pairs [][]byte
	for _, s := range secrets {
		hash := sha256.Sum256(append([]byte("petstore session hash:"), s...))
		block := sha256.Sum256(append([]byte("petstore session block:"), s...))
		pairs = append(pairs, hash[:], block[:])
	}
	st := sessions.NewCookieStore(pairs...)
	st.Options = &sessions.Options{Path: "/", MaxAge: 30 * 24 * 3600, HttpOnly: true, SameSite: http.SameSiteLaxMode}
	st.MaxAge(st.Options.MaxAge)
	return &Sessions{store: st}
}

type sessionLocal string

// Get returns the request's session of that name, new when the cookie is
// absent or no longer opens (a rotated-out key, tampering).
func (s *Sessions) Get(c *fiber.Ctx, name string) (*sessions.Session, error) {
	if sess, ok := c.Locals(sessionLocal(name)).(*sessions.Session); ok {
		return sess, nil
	}
	r := cookieRequest(c)
	sess, err := s.store.Get(r, name)
	if err != nil {
		// A cookie that does not decode starts a fresh session.
		sess, err = s.store.New(r, name)
		if sess == nil {
			return nil, fmt.Errorf("new session: %w", err)
		}
	}
	c.Locals(sessionLocal(name), sess)
	return sess, nil
}

// Save writes the session cookie to the response. The cookie is Secure
// when the request came over TLS (OverTLS: directly, or per a trusted
// proxy's X-Forwarded-Proto).
func (s *Sessions) Save(c *fiber.Ctx, sess *sessions.Session) error {
	r := cookieRequest(c)
	opts := *s.store.Options
	if sess.Options != nil {
		opts = *sess.Options
	}
	opts.Secure = OverTLS(c)
	sess.Options = &opts
	w := &headerWriter{h: http.Header{}}
	if err := s.store.Save(r, w, sess); err != nil {
		return fmt.Errorf("save session: %w", err)
	}
	for _, v := range w.h.Values("Set-Cookie") {
		c.Response().Header.Add(fiber.HeaderSetCookie, v)
	}
	return nil
}

// cookieRequest is the request as gorilla/sessions reads it: its cookies.
// Fiber's adaptor (adaptor.ConvertRequest) would copy the whole request,
// body included, and on a route that reads a large body itself
// (BodyLimits.Allow: the console's photo upload) that means waiting for,
// and holding, every byte of an upload the session's CSRF check has not
// yet let in.
func cookieRequest(c *fiber.Ctx) *http.Request {
	h := http.Header{}
	if cookie := c.Request().Header.Peek(fiber.HeaderCookie); len(cookie) > 0 {
		h.Set(fiber.HeaderCookie, string(cookie))
	}
	return &http.Request{Method: c.Method(), Header: h, Host: c.Hostname()}
}

// headerWriter is the http.ResponseWriter gorilla/sessions writes its
// Set-Cookie header to.
type headerWriter struct{ h http.Header }

func (w *headerWriter) Header() http.Header         { return w.h }
func (w *headerWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *headerWriter) WriteHeader(int)             {}

// RenewCSRF forgets the CSRF token kept in sess, so that CSRF makes a new
// one on the next request: a token seen before a sign-in is worth nothing
// after it.
func RenewCSRF(sess *sessions.Session) { delete(sess.Values, csrfKey) }
