package console

import (
	"errors"
	"slices"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
	"petstore/views/components"
	view "petstore/views/console"
	"petstore/web"
	"petstore/web/browser"
)

// SessionName names the console's cookie, separate from the shop's:
// signed and encrypted by browser.Sessions, HttpOnly and SameSite=Lax,
// Secure behind TLS. It holds the sign-in's session id (the sign-in itself
// lives in the database, so signing out ends it on every instance), the
// flash messages and the CSRF token (browser.CSRF's own "csrf" key).
const SessionName = "petstore_staff"

// keyStaffSession is the session key of the sign-in's id.
const keyStaffSession = "sid"

// pageFlash is the message at the top of the next page (the newest only),
// photosFlash a photo action's outcome, shown in the photos section of the
// edit page the action goes back to (#photos) rather than at the top.
var (
	pageFlash   = browser.Flashes{Keep: 1}
	photosFlash = browser.Flashes{Key: "photos", Keep: 1}
)

// session is the request's console session.
func (h *Handler) session(c *fiber.Ctx) (*browser.Session, error) {
	return h.Sessions.Get(c, SessionName)
}

// flashRedirect ends a console form post that worked: the message for the
// next page, then 303 to it (Post/Redirect/Get), htmx's request too.
func (h *Handler) flashRedirect(c *fiber.Ctx, text, to string) error {
	return h.reply(c, browser.Reply{To: to, Flash: components.Flash{Kind: components.FlashSuccess, Text: text}})
}

// reply ends a console form post as r says (browser.Reply), its message
// for the top of the next page unless r says otherwise.
func (h *Handler) reply(c *fiber.Ctx, r browser.Reply) error {
	sess, err := h.session(c)
	if err != nil {
		return err
	}
	if r.Flashes == (browser.Flashes{}) {
		r.Flashes = pageFlash
	}
	return r.Send(c, sess)
}

// chrome builds the frame of a full page and takes the flash
// message out of the session.
func (h *Handler) chrome(c *fiber.Ctx, title, nav string) (view.Chrome, error) {
	ch := view.Chrome{Title: title, Nav: nav, CSRF: browser.CSRFToken(c)}
	if u := currentStaff(c); u != nil {
		ch.User = u.Username
		ch.Admin = u.IsAdmin()
	}
	ch.RedisDown = h.Shared != nil && !h.Shared.Healthy()
	f, err := h.takeFlash(c, pageFlash)
	ch.Flash = f
	return ch, err
}

// takeFlash takes the message waiting in q, if any.
func (h *Handler) takeFlash(c *fiber.Ctx, q browser.Flashes) (components.Flash, error) {
	sess, err := h.session(c)
	if err != nil {
		return components.Flash{}, err
	}
	list, err := q.Take(sess)
	if err != nil || len(list) == 0 {
		return components.Flash{}, err
	}
	return list[len(list)-1], nil
}

// done answers a successful action: the fragment for htmx, else a
// redirect to back with a flash message (the forms work without JS too).
func (h *Handler) done(c *fiber.Ctx, back, msg string, fragment func() error) error {
	return h.reply(c, browser.Reply{To: back, Flash: components.Flash{Kind: components.FlashSuccess, Text: msg}, Fragment: fragment})
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
	r := browser.Reply{To: back, Flash: components.Flash{Kind: components.FlashError, Text: msg}, Status: status}
	if fragment != nil {
		r.Fragment = func() error { return fragment(msg) }
	}
	return h.reply(c, r)
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
