package console

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
	view "petstore/views/console"
	"petstore/web"
)

// EmailList is the Emails page (SPEC §19, admins): newest first, a page of
// pageSize, filtered by status, kind and the address's start. Bad filters
// come back with what is wrong, and a 422.
func (h *Handler) EmailList(c *fiber.Ctx) error {
	v := view.EmailsView{Status: strings.TrimSpace(c.Query("status")), Kind: strings.TrimSpace(c.Query("kind")),
		To: strings.TrimSpace(c.Query("to")), Keeping: h.Mail != nil && h.Mail.Keeping()}
	before, err := web.FormQueryID(c, "before")
	if err != nil {
		return err
	}
	es, more, err := h.Store.FindEmails(c.UserContext(), db.EmailFilter{Status: v.Status, Kind: v.Kind, To: v.To, Page: db.Page{AfterID: before, Limit: pageSize}})
	if msg, ok := problemsText(err); ok {
		v = view.EmailsView{Error: msg, Keeping: v.Keeping}
		c.Status(fiber.StatusUnprocessableEntity)
	} else if err != nil {
		return err
	} else {
		v.Emails = es
		if more {
			u := url.Values{}
			for k, val := range map[string]string{"status": v.Status, "kind": v.Kind, "to": v.To} {
				if val != "" {
					u.Set(k, val)
				}
			}
			u.Set("before", strconv.FormatInt(es[len(es)-1].ID, 10))
			v.NextURL = "/staff/emails?" + u.Encode()
		}
	}
	ch, err := h.chrome(c, "Emails", "emails")
	if err != nil {
		return err
	}
	return web.Render(c, view.EmailsPage(ch, v))
}

// Email is one email's page: headers, attempts, the message.
func (h *Handler) Email(c *fiber.Ctx) error {
	id, err := web.PathID(c, "emailId")
	if err != nil {
		return err
	}
	e, err := h.Store.FindEmailByID(c.UserContext(), id)
	if err != nil {
		return err
	}
	ch, err := h.chrome(c, "Email "+strconv.FormatInt(id, 10), "emails")
	if err != nil {
		return err
	}
	return web.Render(c, view.EmailPage(ch, view.EmailView{CSRF: ch.CSRF, Email: e, Keeping: h.Mail != nil && h.Mail.Keeping()}))
}

// emailFramePolicy is the CSP of an email's HTML part, shown in the
// console's frame: a sandbox (no script, no form, its own origin), no
// loads but inline styles and data: images, framed by the console only.
const emailFramePolicy = "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'self'; base-uri 'none'; form-action 'none'"

// EmailHTML serves an email's HTML part for the frame on its page, as the
// buyer's mail reader shows it.
func (h *Handler) EmailHTML(c *fiber.Ctx) error {
	id, err := web.PathID(c, "emailId")
	if err != nil {
		return err
	}
	e, err := h.Store.FindEmailByID(c.UserContext(), id)
	if err != nil {
		return err
	}
	c.Set("Content-Security-Policy", emailFramePolicy)
	c.Set("X-Frame-Options", "SAMEORIGIN")
	c.Type("html", "utf-8")
	return c.SendString(e.HTML)
}

// ResendEmail sends an email again (a new Message-ID), or keeps it again
// without SMTP; audited as email.resend.
func (h *Handler) ResendEmail(c *fiber.Ctx) error {
	id, err := web.PathID(c, "emailId")
	if err != nil {
		return err
	}
	back := "/staff/emails/" + strconv.FormatInt(id, 10)
	if _, err := h.Mail.Resend(c.UserContext(), id); err != nil {
		return h.refused(c, err, back, nil)
	}
	msg := "Email " + strconv.FormatInt(id, 10) + " is queued to be sent again."
	if h.Mail.Keeping() {
		msg = "Email " + strconv.FormatInt(id, 10) + " is kept again in the local outbox."
	}
	return h.flashRedirect(c, msg, back)
}

// settingsFields are the Settings form's fields.
var settingsFields = []string{"name", "pickupAddress", "replyTo"}

// Settings is the shop's Settings page (admins).
func (h *Handler) Settings(c *fiber.Ctx) error {
	st, err := h.Store.FindShopSettings(c.UserContext())
	if err != nil {
		return err
	}
	return h.renderSettings(c, fiber.StatusOK, view.SettingsView{Settings: st})
}

func (h *Handler) renderSettings(c *fiber.Ctx, status int, v view.SettingsView) error {
	ch, err := h.chrome(c, "Settings", "settings")
	if err != nil {
		return err
	}
	v.CSRF = ch.CSRF
	if v.Errors == nil {
		v.Errors = view.FieldErrors{}
	}
	c.Status(status)
	return web.Render(c, view.SettingsPage(ch, v))
}

// UpdateSettings saves the shop's settings, audited as settings.update; a
// refused form comes back as typed with its problems.
func (h *Handler) UpdateSettings(c *fiber.Ctx) error {
	in := db.ShopSettings{Name: c.FormValue("name"), PickupAddress: c.FormValue("pickupAddress"), ReplyTo: c.FormValue("replyTo")}
	if _, err := h.Store.UpdateShopSettings(c.UserContext(), in); err != nil {
		coded, status := refusalOf(err, fiber.StatusConflict, fiber.StatusUnprocessableEntity)
		if coded == nil {
			return err
		}
		fe, problem := view.FieldErrorsOf(coded, settingsFields...)
		return h.renderSettings(c, status, view.SettingsView{Settings: printableSettings(in), Errors: fe, Problem: problem})
	}
	return h.flashRedirect(c, "The shop's settings are saved.", "/staff/settings")
}

// printableSettings is what a refused form shows again: text a page can
// hold (invalid UTF-8 dropped).
func printableSettings(s db.ShopSettings) db.ShopSettings {
	return db.ShopSettings{Name: strings.ToValidUTF8(s.Name, ""), PickupAddress: strings.ToValidUTF8(s.PickupAddress, ""), ReplyTo: strings.ToValidUTF8(s.ReplyTo, "")}
}

// SetEmailPrefs saves the user's own email address and whether they want
// an email per new storefront checkout.
func (h *Handler) SetEmailPrefs(c *fiber.Ctx) error {
	u := currentStaff(c)
	in := db.StaffEmailPrefs{Email: c.FormValue("email"), NotifyOrders: c.FormValue("notifyOrders") == "on"}
	if _, err := h.Store.SetStaffEmailPrefs(c.UserContext(), u.ID, in); err != nil {
		coded, status := refusalOf(err, fiber.StatusConflict, fiber.StatusUnprocessableEntity)
		if coded == nil {
			return err
		}
		fe, problem := view.FieldErrorsOf(coded, "email")
		if problem != "" && fe["email"] == "" {
			fe["email"] = problem
		}
		in.Email = strings.ToValidUTF8(in.Email, "")
		return h.renderAccountWith(c, status, view.PasswordForm{}, "", &in, fe)
	}
	return h.flashRedirect(c, "Your email preferences are saved.", "/staff/account")
}
