package handlers

import (
	"errors"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gorilla/sessions"
	"golang.org/x/crypto/bcrypt"

	"petstore/db"
	"petstore/views/console"
	"petstore/web"
)

// consoleSessionName names the console's cookie, separate from the shop's:
// signed and encrypted by web.Sessions, HttpOnly and SameSite=Lax, Secure
// behind TLS. It holds the sign-in's session id (the sign-in itself lives
// in the database, so signing out ends it on every instance), a flash
// message and the CSRF token (web.CSRF's own "csrf" key).
const consoleSessionName = "petstore_staff"

// Session keys of the console's cookie.
const (
	keyStaffSession = "sid"
	keyFlashKind    = "flashKind"
	keyFlashText    = "flash"
)

// csrfSessionKey is where web.CSRF keeps its token in the session.
const csrfSessionKey = "csrf"

// Login throttling (SPEC §10, §13): this many failures within the window
// lock the username for the client IP, even for the right password.
const (
	loginMaxFailures = 5
	loginWindow      = 15 * time.Minute
)

// consoleSessionTTL is how long a sign-in lasts (the database's
// staff_sessions row expires then).
const consoleSessionTTL = 12 * time.Hour

type staffLocal struct{}

// dummyHash is compared against when the username is unknown, so a wrong
// username takes as long as a wrong password.
var dummyHash = sync.OnceValue(func() []byte {
	h, _ := bcrypt.GenerateFromPassword([]byte("petstore: no such user"), bcrypt.DefaultCost)
	return h
})

// consoleSession is the request's console session.
func (h *Handler) consoleSession(c *fiber.Ctx) (*sessions.Session, error) {
	return h.Sessions.Get(c, consoleSessionName)
}

// signedIn returns the staff user the request's console session signs in,
// nil when it signs in no one: no session id, or one that was signed out
// or expired (on any instance). One query.
func (h *Handler) signedIn(c *fiber.Ctx) (*db.StaffUser, error) {
	sess, err := h.consoleSession(c)
	if err != nil {
		return nil, err
	}
	sid, _ := sess.Values[keyStaffSession].(string)
	if sid == "" {
		return nil, nil
	}
	u, err := h.Store.FindStaffUserBySession(c.UserContext(), sid)
	if db.ErrorCode(err) == db.ENotFound {
		return nil, nil
	}
	return u, err
}

// requireStaff lets signed-in staff through and sends everyone else to the
// sign-in page (htmx requests by HX-Redirect, as a redirect would be
// swapped into the page).
func (h *Handler) requireStaff(c *fiber.Ctx) error {
	u, err := h.signedIn(c)
	if err != nil {
		return err
	}
	if u != nil {
		c.Locals(staffLocal{}, u)
		return c.Next()
	}
	target := "/staff/login"
	if c.Method() == fiber.MethodGet && !web.IsHTMX(c) && c.Path() != "/staff" {
		target += "?next=" + url.QueryEscape(c.OriginalURL())
	}
	if web.IsHTMX(c) {
		c.Set("HX-Redirect", target)
		return c.SendStatus(fiber.StatusUnauthorized)
	}
	if c.Path() == "/staff/events" {
		return c.SendStatus(fiber.StatusUnauthorized)
	}
	return c.Redirect(target, fiber.StatusSeeOther)
}

// currentStaff is the signed-in user (after requireStaff).
func currentStaff(c *fiber.Ctx) *db.StaffUser {
	u, _ := c.Locals(staffLocal{}).(*db.StaffUser)
	return u
}

// consoleNoStore keeps console pages out of caches: they show stock,
// orders and keys.
func consoleNoStore(c *fiber.Ctx) error {
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Next()
}

// safeNext keeps a post-login redirect inside the console.
func safeNext(next string) string {
	if next == "/staff" || (strings.HasPrefix(next, "/staff/") && !strings.HasPrefix(next, "//") && !strings.ContainsAny(next, "\\\r\n")) {
		return next
	}
	return "/staff"
}

func (h *Handler) consoleLoginPage(c *fiber.Ctx) error {
	sess, err := h.consoleSession(c)
	if err != nil {
		return err
	}
	if u, err := h.signedIn(c); err != nil {
		return err
	} else if u != nil {
		return c.Redirect(safeNext(c.Query("next")), fiber.StatusSeeOther)
	}
	v := console.LoginView{CSRF: web.CSRFToken(c), Next: c.Query("next")}
	if text, _ := sess.Values[keyFlashText].(string); text != "" {
		v.Notice = text
		delete(sess.Values, keyFlashText)
		delete(sess.Values, keyFlashKind)
		if err := h.Sessions.Save(c, sess); err != nil {
			return err
		}
	}
	return web.Render(c, console.LoginPage(v), nil)
}

// consoleLogin checks a username and password. Five failures within 15
// minutes lock that username for the client's IP: while locked even the
// right password is refused (429), and attempts are not checked at all.
// A malformed username is refused (422) before any database work.
func (h *Handler) consoleLogin(c *fiber.Ctx) error {
	ctx := c.UserContext()
	v := console.LoginView{
		CSRF:     web.CSRFToken(c),
		Username: strings.TrimSpace(c.FormValue("username")),
		Next:     c.FormValue("next"),
	}
	password := c.FormValue("password")
	fail := func(status int, msg string) error {
		v.Error = msg
		c.Status(status)
		return web.Render(c, console.LoginPage(v), nil)
	}
	if v.Username == "" || password == "" {
		return fail(fiber.StatusUnprocessableEntity, "Enter your username and password.")
	}
	if _, err := db.CheckUsername(v.Username); err != nil {
		v.Username = "" // not echoed back: it may be huge or hold control characters
		return fail(fiber.StatusUnprocessableEntity, "Username "+fieldProblem(err)+".")
	}
	ip := h.Proxies.ClientIP(c.Context().RemoteIP().String(), c.Get(fiber.HeaderXForwardedFor))
	// The attempt is recorded as a failure before it is checked, then
	// counted: concurrent guesses each see the others, so at most
	// loginMaxFailures of them ever reach bcrypt.
	failures, err := h.Store.RecordLoginAttempt(ctx, v.Username, ip, h.Store.Now().Add(-loginWindow))
	if err != nil {
		return err
	}
	if failures > loginMaxFailures {
		h.Logger.Warn("staff sign-in refused: locked", "user", v.Username, "ip", ip)
		return fail(fiber.StatusTooManyRequests, lockedMessage)
	}
	u, err := h.Store.FindStaffUserByUsername(ctx, v.Username)
	if err != nil && db.ErrorCode(err) != db.ENotFound {
		return err
	}
	hash := dummyHash()
	if u != nil {
		hash = []byte(u.PasswordHash)
	}
	if bcrypt.CompareHashAndPassword(hash, []byte(password)) != nil || u == nil {
		if failures == loginMaxFailures {
			h.Logger.Warn("staff sign-in locked after repeated failures", "user", v.Username, "ip", ip)
			return fail(fiber.StatusUnauthorized, "Wrong username or password. "+lockingMessage)
		}
		return fail(fiber.StatusUnauthorized, "Wrong username or password.")
	}
	if err := h.Store.ClearLoginFailures(ctx, v.Username, ip); err != nil {
		return err
	}
	sess, err := h.consoleSession(c)
	if err != nil {
		return err
	}
	// Signing in again ends the sign-in this cookie held, so that no copy
	// of the old cookie outlives the next sign-out.
	if old, _ := sess.Values[keyStaffSession].(string); old != "" {
		if err := h.Store.EndStaffSession(ctx, old); err != nil {
			return err
		}
	}
	sid, err := h.Store.CreateStaffSession(ctx, u.ID, consoleSessionTTL)
	if err != nil {
		return err
	}
	sess.Values[keyStaffSession] = sid
	// A new CSRF token for the signed-in session (web.CSRF makes one on
	// the next request): a token seen before signing in is worth nothing.
	delete(sess.Values, csrfSessionKey)
	if err := h.Sessions.Save(c, sess); err != nil {
		return err
	}
	h.Logger.Info("staff signed in", "user", u.Username, "ip", ip)
	return c.Redirect(safeNext(v.Next), fiber.StatusSeeOther)
}

// Messages of the lockout: on the failure that locks, and while locked.
const (
	lockingMessage = "That was the fifth failure: sign-in with this username from your address is locked for 15 minutes."
	lockedMessage  = "Too many failed sign-ins for this username from your address. Try again in 15 minutes."
)

// fieldProblem is what a validation error says about its first field
// ("must be at most 100 characters").
func fieldProblem(err error) string {
	var coded *db.Error
	if errors.As(err, &coded) && len(coded.Details) > 0 {
		return coded.Details[0].Message
	}
	return "is not valid"
}

// consoleLogout ends the sign-in in the database, so a copy of the cookie
// signs no one in on any instance, and keeps the CSRF token, so the
// sign-in form that follows works.
func (h *Handler) consoleLogout(c *fiber.Ctx) error {
	sess, err := h.consoleSession(c)
	if err != nil {
		return err
	}
	if sid, _ := sess.Values[keyStaffSession].(string); sid != "" {
		if err := h.Store.EndStaffSession(c.UserContext(), sid); err != nil {
			return err
		}
	}
	delete(sess.Values, keyStaffSession)
	sess.Values[keyFlashKind], sess.Values[keyFlashText] = "ok", "You are signed out."
	if err := h.Sessions.Save(c, sess); err != nil {
		return err
	}
	return c.Redirect("/staff/login", fiber.StatusSeeOther)
}

// consoleFlash keeps a message for the next page the browser loads.
func (h *Handler) consoleFlash(c *fiber.Ctx, kind, text string) error {
	sess, err := h.consoleSession(c)
	if err != nil {
		return err
	}
	sess.Values[keyFlashKind], sess.Values[keyFlashText] = kind, text
	return h.Sessions.Save(c, sess)
}

// flashRedirect ends a console form post: the message for the next page,
// then 303 to it (Post/Redirect/Get).
func (h *Handler) flashRedirect(c *fiber.Ctx, kind, text, to string) error {
	if err := h.consoleFlash(c, kind, text); err != nil {
		return err
	}
	return c.Redirect(to, fiber.StatusSeeOther)
}

// consoleChrome builds the frame of a full page and takes the flash
// message out of the session.
func (h *Handler) consoleChrome(c *fiber.Ctx, title, nav string) (console.Chrome, error) {
	ch := console.Chrome{Title: title, Nav: nav, CSRF: web.CSRFToken(c)}
	if u := currentStaff(c); u != nil {
		ch.User = u.Username
	}
	ch.RedisDown = h.Shared != nil && !h.Shared.Healthy()
	sess, err := h.consoleSession(c)
	if err != nil {
		return ch, err
	}
	if text, _ := sess.Values[keyFlashText].(string); text != "" {
		kind, _ := sess.Values[keyFlashKind].(string)
		ch.Flash = console.Flash{Kind: kind, Text: text}
		delete(sess.Values, keyFlashText)
		delete(sess.Values, keyFlashKind)
		if err := h.Sessions.Save(c, sess); err != nil {
			return ch, err
		}
	}
	return ch, nil
}

// consoleDone answers a successful action: the fragment for htmx, else a
// redirect to back with a flash message (the forms work without JS too).
func (h *Handler) consoleDone(c *fiber.Ctx, back, msg string, fragment func() error) error {
	if web.IsHTMX(c) {
		return fragment()
	}
	return h.flashRedirect(c, "ok", msg, back)
}

// consoleRefused answers an action the store refused with a user-caused
// error (409 or 422): the fragment with that status for htmx, else a
// redirect to back with the message. Other errors go to the error handler.
func (h *Handler) consoleRefused(c *fiber.Ctx, err error, back string, fragment func(msg string) error) error {
	var coded *db.Error
	status := web.ProblemOf(err).Status
	if !errors.As(err, &coded) || (status != fiber.StatusConflict && status != fiber.StatusUnprocessableEntity) {
		return err
	}
	msg := coded.Message
	if len(coded.Details) > 0 {
		_, msg = console.FieldErrorsOf(coded)
	}
	if web.IsHTMX(c) && fragment != nil {
		c.Status(status)
		return fragment(msg)
	}
	return h.flashRedirect(c, "error", msg, back)
}
