package console

import (
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
	"petstore/views/components"
	view "petstore/views/console"
	"petstore/web"
	"petstore/web/browser"
)

// The second step of a two-factor sign-in (SPEC §16). Once the password
// is right, the session holds a pending sign-in: the user's id and until
// when the code may come, in the signed and encrypted cookie, and no
// staff_sessions row. Nothing but the code page accepts it; the code's
// guesses count toward the sign-in lockout like passwords.

// Session keys of a pending sign-in and the page it goes on to.
const (
	keyPendingSignIn = "signin_pending"
	keyPendingNext   = "signin_next"
)

// pendingTTL is how long the code may take to come after the password.
const pendingTTL = 5 * time.Minute

// awaitCode keeps u's sign-in pending and asks for the code.
func (h *Handler) awaitCode(c *fiber.Ctx, u *db.StaffUser, next string) error {
	sess, err := h.session(c)
	if err != nil {
		return err
	}
	until := h.Now().Add(pendingTTL).Unix()
	sess.Set(keyPendingSignIn, strconv.FormatInt(u.ID, 10)+"|"+strconv.FormatInt(until, 10)+"|"+passwordTag(u))
	sess.Set(keyPendingNext, next)
	if err := sess.Save(); err != nil {
		return err
	}
	return c.Redirect("/staff/login/code", fiber.StatusSeeOther)
}

// pendingUser is the user whose sign-in waits for a code, nil when there
// is none (or it expired, or the user is gone).
func (h *Handler) pendingUser(c *fiber.Ctx) (*db.StaffUser, *browser.Session, error) {
	sess, err := h.session(c)
	if err != nil {
		return nil, nil, err
	}
	parts := strings.Split(sess.Value(keyPendingSignIn), "|")
	if len(parts) != 3 {
		return nil, sess, nil
	}
	uid, err1 := strconv.ParseInt(parts[0], 10, 64)
	end, err2 := strconv.ParseInt(parts[1], 10, 64)
	if err1 != nil || err2 != nil || h.Now().Unix() > end {
		return nil, sess, nil
	}
	u, err := h.Store.FindStaffUserByID(c.UserContext(), uid)
	if db.ErrorCode(err) == db.ENotFound {
		return nil, sess, nil
	}
	if err != nil {
		return nil, sess, err
	}
	// A password changed or reset since it was checked: start again.
	if parts[2] != passwordTag(u) {
		return nil, sess, nil
	}
	return u, sess, nil
}

// passwordTag names the password a pending sign-in checked, so that a
// change or a reset in the meantime ends it (a short hash of the hash:
// the cookie carries nothing that helps a guesser).
func passwordTag(u *db.StaffUser) string { return db.HashKey(u.PasswordHash)[:16] }

// startAgain sends a browser without a pending sign-in back to the form.
func (h *Handler) startAgain(c *fiber.Ctx, sess *browser.Session) error {
	sess.Delete(keyPendingSignIn)
	sess.Delete(keyPendingNext)
	return browser.Reply{
		To: "/staff/login", Flashes: pageFlash,
		Flash: components.Flash{Kind: components.FlashError, Text: "Your sign-in timed out. Enter your username and password again."},
	}.Send(c, sess)
}

// CodePage asks for the code: GET /staff/login/code.
func (h *Handler) CodePage(c *fiber.Ctx) error {
	u, sess, err := h.pendingUser(c)
	if err != nil {
		return err
	}
	if u == nil {
		return h.startAgain(c, sess)
	}
	return web.Render(c, view.SignInCodePage(view.SignInCodeView{CSRF: browser.CSRFToken(c), Username: u.Username}))
}

// CheckCode takes the code (or a recovery code) of a pending sign-in:
// POST /staff/login/code. Every try is recorded as a failure of the
// username from the client's address before it is checked, as a password
// is, so the lockout holds across both steps.
func (h *Handler) CheckCode(c *fiber.Ctx) error {
	ctx := c.UserContext()
	u, sess, err := h.pendingUser(c)
	if err != nil {
		return err
	}
	if u == nil {
		return h.startAgain(c, sess)
	}
	v := view.SignInCodeView{CSRF: browser.CSRFToken(c), Username: u.Username}
	fail := func(status int, msg string) error {
		v.Error = msg
		c.Status(status)
		return web.Render(c, view.SignInCodePage(v))
	}
	code := c.FormValue("code")
	if strings.TrimSpace(code) == "" {
		return fail(fiber.StatusUnprocessableEntity, "Enter the code from your app.")
	}
	if len(code) > 64 {
		return fail(fiber.StatusUnprocessableEntity, "That is not a code: codes are 6 digits, recovery codes 10 letters and digits.")
	}
	ip := web.ClientBucket(c, h.Proxies)
	failures, err := h.Store.RecordLoginAttempt(ctx, u.Username, ip, h.Store.Now().Add(-loginWindow))
	if err != nil {
		return err
	}
	if failures > loginMaxFailures {
		h.Logger.Warn("staff sign-in code refused: locked", "user", u.Username, "ip", ip)
		if err := h.Store.AuditSignInFailure(ctx, h.origin(c, db.Actor{}), u.Username, u, "locked"); err != nil {
			return err
		}
		sess.Delete(keyPendingSignIn)
		if err := sess.Save(); err != nil {
			return err
		}
		return fail(fiber.StatusTooManyRequests, lockedMessage)
	}
	ok, err := h.Store.UseStaffCode(ctx, u.ID, code)
	if err != nil {
		return err
	}
	if !ok {
		if err := h.Store.AuditSignInFailure(ctx, h.origin(c, db.Actor{}), u.Username, u, "code"); err != nil {
			return err
		}
		msg := "That code is not right, or was used already. Wait for the next one."
		if failures == loginMaxFailures {
			h.Logger.Warn("staff sign-in locked after repeated failures", "user", u.Username, "ip", ip)
			msg += " " + lockingMessage
		}
		return fail(fiber.StatusUnauthorized, msg)
	}
	if u.Disabled() {
		if err := h.Store.AuditSignInFailure(ctx, h.origin(c, db.Actor{}), u.Username, u, "disabled"); err != nil {
			return err
		}
		sess.Delete(keyPendingSignIn)
		if err := sess.Save(); err != nil {
			return err
		}
		return fail(fiber.StatusForbidden, db.ErrStaffDisabled.Message)
	}
	next := sess.Value(keyPendingNext)
	sess.Delete(keyPendingNext)
	return h.startSession(c, u, ip, next)
}
