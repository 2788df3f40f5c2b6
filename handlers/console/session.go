package console

import (
	"errors"
	"slices"

	"github.com/gofiber/fiber/v2"
	"github.com/gorilla/sessions"

	"petstore/db"
	view "petstore/views/console"
	"petstore/web"
)

// SessionName names the console's cookie, separate from the shop's:
// signed and encrypted by web.Sessions, HttpOnly and SameSite=Lax, Secure
// behind TLS. It holds the sign-in's session id (the sign-in itself lives
// in the database, so signing out ends it on every instance), a flash
// message and the CSRF token (web.CSRF's own "csrf" key).
const SessionName = "petstore_staff"

// Session keys of the console's cookie.
const (
	keyStaffSession = "sid"
	keyFlashKind    = "flashKind"
	keyFlashText    = "flash"
)

// session is the request's console session.
func (h *Handler) session(c *fiber.Ctx) (*sessions.Session, error) {
	return h.Sessions.Get(c, SessionName)
}

// flash keeps a message for the next page the browser loads.
func (h *Handler) flash(c *fiber.Ctx, kind, text string) error {
	sess, err := h.session(c)
	if err != nil {
		return err
	}
	sess.Values[keyFlashKind], sess.Values[keyFlashText] = kind, text
	return h.Sessions.Save(c, sess)
}

// flashRedirect ends a console form post: the message for the next page,
// then 303 to it (Post/Redirect/Get).
func (h *Handler) flashRedirect(c *fiber.Ctx, kind, text, to string) error {
	if err := h.flash(c, kind, text); err != nil {
		return err
	}
	return c.Redirect(to, fiber.StatusSeeOther)
}

// chrome builds the frame of a full page and takes the flash
// message out of the session.
func (h *Handler) chrome(c *fiber.Ctx, title, nav string) (view.Chrome, error) {
	ch := view.Chrome{Title: title, Nav: nav, CSRF: web.CSRFToken(c)}
	if u := currentStaff(c); u != nil {
		ch.User = u.Username
	}
	ch.RedisDown = h.Shared != nil && !h.Shared.Healthy()
	sess, err := h.session(c)
	if err != nil {
		return ch, err
	}
	if text, _ := sess.Values[keyFlashText].(string); text != "" {
		kind, _ := sess.Values[keyFlashKind].(string)
		ch.Flash = view.Flash{Kind: kind, Text: text}
		delete(sess.Values, keyFlashText)
		delete(sess.Values, keyFlashKind)
		if err := h.Sessions.Save(c, sess); err != nil {
			return ch, err
		}
	}
	return ch, nil
}

// done answers a successful action: the fragment for htmx, else a
// redirect to back with a flash message (the forms work without JS too).
func (h *Handler) done(c *fiber.Ctx, back, msg string, fragment func() error) error {
	if web.IsHTMX(c) {
		return fragment()
	}
	return h.flashRedirect(c, "ok", msg, back)
}

// refused answers an action the store refused with a user-caused
// error (409 or 422): the fragment with that status for htmx, else a
// redirect to back with the message. Other errors go to the error handler.
func (h *Handler) refused(c *fiber.Ctx, err error, back string, fragment func(msg string) error) error {
	coded, status := refusalOf(err, fiber.StatusConflict, fiber.StatusUnprocessableEntity)
	if coded == nil {
		return err
	}
	msg := coded.Message
	if len(coded.Details) > 0 {
		_, msg = view.FieldErrorsOf(coded)
	}
	if web.IsHTMX(c) && fragment != nil {
		c.Status(status)
		return fragment(msg)
	}
	return h.flashRedirect(c, "error", msg, back)
}

// refusalOf is the store's refusal err, when it is one the page shows
// (a coded error whose status, 422 invalid values or 409 a conflict, is
// among statuses), with that status; nil for anything else, which goes to
// the error handler.
func refusalOf(err error, statuses ...int) (*db.Error, int) {
	var coded *db.Error
	status := web.ProblemOf(err).Status
	if !errors.As(err, &coded) || !slices.Contains(statuses, status) {
		return nil, status
	}
	return coded, status
}

// mergeFieldErrors adds the refusal's messages for fields to errs, where
// the form has none of its own, and returns the message for no field.
func mergeFieldErrors(errs view.FieldErrors, coded *db.Error, fields ...string) string {
	fe, problem := view.FieldErrorsOf(coded, fields...)
	for k, msg := range fe {
		if errs[k] == "" {
			errs[k] = msg
		}
	}
	return problem
}
