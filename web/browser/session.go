// Package browser is the browser kit the storefront and the console share:
// sessions in signed and encrypted cookies, the CSRF check and its token,
// flash messages, the reply that ends a form post, the per-address limit
// of form posts, the streamed reading of a file upload, and form values as
// a page may show them again. It is the only package that touches
// gorilla/sessions.
package browser

import (
	"crypto/sha256"
	"fmt"
	"net/http"

	"github.com/gofiber/fiber/v2"
	"github.com/gorilla/securecookie"
	"github.com/gorilla/sessions"

	"petstore/web"
)

// Sessions keeps browser sessions in signed and encrypted cookies
// (gorilla/sessions), which are handed a net/http request holding the
// request's cookies alone (cookieRequest). Cookies carry the session's
// values, so any instance serves any browser; what must end on the server
// (the console's sign-in) is a database record the cookie names.
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
	for _, codec := range st.Codecs {
		if sc, ok := codec.(*securecookie.SecureCookie); ok {
			sc.SetSerializer(sessionValues{})
		}
	}
	st.Options = &sessions.Options{Path: "/", MaxAge: 30 * 24 * 3600, HttpOnly: true, SameSite: http.SameSiteLaxMode}
	st.MaxAge(st.Options.MaxAge)
	return &Sessions{store: st}
}

// Session is one named session of a request: its values (strings, by
// key), its flash messages (Flashes) and the CSRF token (CSRF), written to
// the response as its cookie by Save.
type Session struct {
	store *Sessions
	c     *fiber.Ctx
	raw   *sessions.Session
	// written: a value was set or deleted since the last Save (Reply
	// saves such a session before it answers).
	written bool
}

type sessionLocal string

// Get returns the request's session of that name, the same one for every
// step of the request; new when the cookie is absent or no longer opens
// (a rotated-out key, tampering).
func (s *Sessions) Get(c *fiber.Ctx, name string) (*Session, error) {
	if sess, ok := c.Locals(sessionLocal(name)).(*Session); ok {
		return sess, nil
	}
	r := cookieRequest(c)
	raw, err := s.store.Get(r, name)
	if err != nil {
		// A cookie that does not decode starts a fresh session.
		raw, err = s.store.New(r, name)
		if raw == nil {
			return nil, fmt.Errorf("new session: %w", err)
		}
	}
	sess := &Session{store: s, c: c, raw: raw}
	c.Locals(sessionLocal(name), sess)
	return sess, nil
}

// Value is the string kept under key, "" when there is none.
func (s *Session) Value(key string) string {
	v, _ := s.raw.Values[key].(string)
	return v
}

// Fresh reports whether the session is a new one with nothing in it: the
// browser sent no cookie that opens, and nothing was set since.
func (s *Session) Fresh() bool {
	return s.raw.IsNew && len(s.raw.Values) == 0
}

// Set keeps value under key, for Save to write.
func (s *Session) Set(key, value string) {
	s.raw.Values[key] = value
	s.written = true
}

// Delete forgets key, for Save to write.
func (s *Session) Delete(key string) {
	delete(s.raw.Values, key)
	s.written = true
}

// Save writes the session cookie to the response, in place of one an
// earlier step of the request wrote (CSRF on a first visit), so the
// response carries one cookie with everything in it. The cookie is Secure
// when the request came over TLS (web.OverTLS: directly, or per a trusted
// proxy's X-Forwarded-Proto).
func (s *Session) Save() error {
	c := s.c
	opts := *s.store.store.Options
	if s.raw.Options != nil {
		opts = *s.raw.Options
	}
	opts.Secure = web.OverTLS(c)
	s.raw.Options = &opts
	w := &headerWriter{h: http.Header{}}
	if err := s.store.store.Save(cookieRequest(c), w, s.raw); err != nil {
		return fmt.Errorf("save session: %w", err)
	}
	c.Response().Header.DelCookie(s.raw.Name())
	for _, v := range w.h.Values("Set-Cookie") {
		c.Response().Header.Add(fiber.HeaderSetCookie, v)
	}
	s.written = false
	return nil
}

// cookieRequest is the request as gorilla/sessions reads it: its cookies.
// Fiber's adaptor (adaptor.ConvertRequest) would copy the whole request,
// body included, and on a route whose body streams (web.Body: the
// console's photo upload) that means waiting
// for, and holding, every byte of an upload the session's CSRF check has
// not yet let in.
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
