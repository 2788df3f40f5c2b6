package console

import (
	"errors"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
	view "petstore/views/console"
	"petstore/web"
	"petstore/web/browser"
)

// Login throttling (SPEC §10, §13): this many failures within the window
// lock the username for the client (its IP, an IPv6 client's /64), even
// for the right password.
const (
	loginMaxFailures = 5
	loginWindow      = 15 * time.Minute
)

// sessionTTL is how long a sign-in lasts (the database's
// staff_sessions row expires then).
const sessionTTL = 12 * time.Hour

type staffLocal struct{}

// dummyHash is compared against when the username is unknown, so a wrong
// username takes as long as a wrong password.
var dummyHash = sync.OnceValue(func() string {
	h, _ := db.HashPassword("petstore: no such user")
	return h
})

// signedIn returns the staff user the request's console session signs in,
// nil when it signs in no one: no session id, or one that was signed out,
// ended (the user disabled, reset, demoted) or expired, on any instance.
// One query.
func (h *Handler) signedIn(c *fiber.Ctx) (*db.StaffUser, error) {
	sess, err := h.session(c)
	if err != nil {
		return nil, err
	}
	sid := sess.Value(keyStaffSession)
	if sid == "" {
		return nil, nil
	}
	u, err := h.Store.FindStaffUserBySession(c.UserContext(), sid)
	if db.ErrorCode(err) == db.ENotFound {
		return nil, nil
	}
	return u, err
}

// RequireStaff is the sign-in check of a route that serves users in the
// middle of steps (Setup): it lets signed-in staff through, sends everyone
// else to the sign-in page (htmx requests by HX-Redirect, as a redirect
// would be swapped into the page), and a user who must first take a step
// to that step's page.
func (h *Handler) RequireStaff(steps ...Step) fiber.Handler {
	return func(c *fiber.Ctx) error {
		u, err := h.signedIn(c)
		if err != nil {
			return err
		}
		if u == nil {
			target := "/staff/login"
			if c.Method() == fiber.MethodGet && !web.IsHTMX(c) && c.Path() != "/staff" {
				target += "?next=" + url.QueryEscape(c.OriginalURL())
			}
			return sendTo(c, target, fiber.StatusUnauthorized)
		}
		c.Locals(staffLocal{}, u)
		c.SetUserContext(db.WithOrigin(c.UserContext(), h.origin(c, db.StaffActor(u.ID, u.Username))))
		if step := h.stepOf(u); step != StepNone && !slices.Contains(steps, step) {
			return sendTo(c, step.page(), fiber.StatusForbidden)
		}
		return c.Next()
	}
}

// sendTo sends the browser to target: a 303, or for htmx an HX-Redirect;
// an event stream, which follows nothing, gets status.
func sendTo(c *fiber.Ctx, target string, status int) error {
	if web.IsHTMX(c) {
		c.Set("HX-Redirect", target)
		return c.SendStatus(status)
	}
	if web.IsStreaming(c) {
		return c.SendStatus(status)
	}
	return c.Redirect(target, fiber.StatusSeeOther)
}

// origin is where the request's changes come from, for the audit log.
func (h *Handler) origin(c *fiber.Ctx, a db.Actor) db.Origin {
	return db.Origin{Actor: a, RequestID: web.RequestID(c), IP: web.ClientIP(c, h.Proxies)}
}

// currentStaff is the signed-in user (after RequireStaff).
func currentStaff(c *fiber.Ctx) *db.StaffUser {
	u, _ := c.Locals(staffLocal{}).(*db.StaffUser)
	return u
}

// safeNext keeps a post-login redirect inside the console.
func safeNext(next string) string {
	if next == "/staff" || (strings.HasPrefix(next, "/staff/") && !strings.HasPrefix(next, "//") && !strings.ContainsAny(next, "\\\r\n")) {
		return next
	}
	return "/staff"
}

// LoginPage is the sign-in form: GET /staff/login (a signed-in visitor
// goes on to next).
func (h *Handler) LoginPage(c *fiber.Ctx) error {
	if u, err := h.signedIn(c); err != nil {
		return err
	} else if u != nil {
		return c.Redirect(safeNext(c.Query("next")), fiber.StatusSeeOther)
	}
	v := view.LoginView{CSRF: browser.CSRFToken(c), Next: c.Query("next")}
	notice, err := h.takeFlash(c, pageFlash)
	if err != nil {
		return err
	}
	v.Notice = notice.Text
	return web.Render(c, view.LoginPage(v))
}

// Login checks a username and password. Five failures within 15 minutes
// lock that username for the client's address (web.ClientBucket): while
// locked even the right password is refused (429), and attempts are not
// checked at all.
// A malformed username is refused (422) before any database work.
func (h *Handler) Login(c *fiber.Ctx) error {
	ctx := c.UserContext()
	v := view.LoginView{
		CSRF:     browser.CSRFToken(c),
		Username: strings.TrimSpace(c.FormValue("username")),
		Next:     c.FormValue("next"),
	}
	password := c.FormValue("password")
	fail := func(status int, msg string) error {
		v.Error = msg
		c.Status(status)
		return web.Render(c, view.LoginPage(v))
	}
	if v.Username == "" || password == "" {
		return fail(fiber.StatusUnprocessableEntity, "Enter your username and password.")
	}
	if _, err := db.CheckUsername(v.Username); err != nil {
		v.Username = "" // not echoed back: it may be huge or hold control characters
		return fail(fiber.StatusUnprocessableEntity, "Username "+fieldProblem(err)+".")
	}
	// The client's bucket: its address, an IPv6 client's /64, so that a
	// guesser cannot step through its block for fresh attempts.
	ip := web.ClientBucket(c, h.Proxies)
	// The attempt is recorded as a failure before it is checked, then
	// counted: concurrent guesses each see the others, so at most
	// loginMaxFailures of them ever reach bcrypt.
	failures, err := h.Store.RecordLoginAttempt(ctx, v.Username, ip, h.Store.Now().Add(-loginWindow))
	if err != nil {
		return err
	}
	if failures > loginMaxFailures {
		h.Logger.Warn("staff sign-in refused: locked", "user", v.Username, "ip", ip)
		if err := h.Store.AuditSignInFailure(ctx, h.origin(c, db.Actor{}), v.Username, nil, "locked"); err != nil {
			return err
		}
		return fail(fiber.StatusTooManyRequests, lockedMessage)
	}
	u, err := h.Store.FindStaffUserByUsername(ctx, v.Username)
	if err != nil && db.ErrorCode(err) != db.ENotFound {
		return err
	}
	hash := dummyHash()
	if u != nil {
		hash = u.PasswordHash
	}
	if !db.PasswordMatches(hash, password) || u == nil {
		if err := h.Store.AuditSignInFailure(ctx, h.origin(c, db.Actor{}), v.Username, u, "password"); err != nil {
			return err
		}
		if failures == loginMaxFailures {
			h.Logger.Warn("staff sign-in locked after repeated failures", "user", v.Username, "ip", ip)
			return fail(fiber.StatusUnauthorized, "Wrong username or password. "+lockingMessage)
		}
		return fail(fiber.StatusUnauthorized, "Wrong username or password.")
	}
	if u.Disabled() {
		if err := h.Store.AuditSignInFailure(ctx, h.origin(c, db.Actor{}), v.Username, u, "disabled"); err != nil {
			return err
		}
		return fail(fiber.StatusForbidden, db.ErrStaffDisabled.Message)
	}
	if u.TwoFactor() {
		// The password was right; the sign-in waits for the code. The
		// attempt stays counted as a failure until the code is right too,
		// so that password and code guesses share the lockout.
		return h.awaitCode(c, u, v.Next)
	}
	return h.startSession(c, u, ip, v.Next)
}

// startSession signs u in (db.Store.StartStaffSession: the session, the
// last sign-in, the failures forgotten, the audit entry) and goes on to
// next.
func (h *Handler) startSession(c *fiber.Ctx, u *db.StaffUser, ip, next string) error {
	sess, err := h.session(c)
	if err != nil {
		return err
	}
	// Signing in again ends the sign-in this cookie held, so that no copy
	// of the old cookie outlives the next sign-out.
	sid, err := h.Store.StartStaffSession(c.UserContext(), db.SignIn{
		User: u, TTL: sessionTTL, Bucket: ip, Replace: sess.Value(keyStaffSession), Origin: h.origin(c, db.Actor{}),
	})
	if err != nil {
		return err
	}
	sess.Set(keyStaffSession, sid)
	sess.Delete(keyPendingSignIn)
	// A new CSRF token for the signed-in session (browser.CSRF makes one
	// on the next request): a token seen before signing in is worth nothing.
	sess.RenewCSRF()
	if err := sess.Save(); err != nil {
		return err
	}
	h.Logger.Info("staff signed in", "user", u.Username, "ip", ip)
	return c.Redirect(safeNext(next), fiber.StatusSeeOther)
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

// Logout ends the sign-in in the database, so a copy of the cookie
// signs no one in on any instance, and keeps the CSRF token, so the
// sign-in form that follows works.
func (h *Handler) Logout(c *fiber.Ctx) error {
	sess, err := h.session(c)
	if err != nil {
		return err
	}
	if sid := sess.Value(keyStaffSession); sid != "" {
		if err := h.Store.EndStaffSession(c.UserContext(), sid); err != nil {
			return err
		}
	}
	sess.Delete(keyStaffSession)
	return h.flashRedirect(c, "You are signed out.", "/staff/login")
}
