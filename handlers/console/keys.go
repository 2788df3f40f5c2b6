package console

import (
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
	view "petstore/views/console"
	"petstore/web"
	"petstore/web/browser"
)

// keyFormFields are the form's fields, named as in the API's NewApiKey.
var keyFormFields = []string{"name", "role", "plan", "perMinute", "perDay"}

// keyForm reads the issue or edit form into the store's input. The limits
// count only for the enterprise plan (the inputs stay in the form, hidden,
// for the other plans).
func keyForm(c *fiber.Ctx, withRole bool) (db.NewAPIKey, view.KeyForm) {
	f := view.KeyForm{
		Name: c.FormValue("name"), Role: c.FormValue("role"), Plan: c.FormValue("plan"),
		PerMinute: strings.TrimSpace(c.FormValue("perMinute")), PerDay: strings.TrimSpace(c.FormValue("perDay")),
		Errors: view.FieldErrors{},
	}
	in := db.NewAPIKey{Name: &f.Name, Plan: &f.Plan}
	if withRole {
		in.Role = &f.Role
	}
	if f.Plan == db.PlanEnterprise {
		for _, l := range []struct {
			field, raw string
			dst        **int64
		}{{"perMinute", f.PerMinute, &in.PerMinute}, {"perDay", f.PerDay, &in.PerDay}} {
			if l.raw == "" {
				continue
			}
			n, err := strconv.ParseInt(l.raw, 10, 64)
			if err != nil || n < 1 {
				// The store's own message, so that a form with an
				// unreadable number still reports both fields at once.
				f.Errors[l.field] = "must be a positive integer"
				continue
			}
			*l.dst = &n
		}
	}
	return in, f
}

// keyFormErrors merges the store's messages into the form.
func keyFormErrors(err error, f *view.KeyForm) (int, bool) {
	coded, status := refusalOf(err, fiber.StatusUnprocessableEntity)
	if coded == nil {
		return status, false
	}
	f.Problem = mergeFieldErrors(f.Errors, coded, keyFormFields...)
	return status, true
}

// Keys lists keys (live ones unless ?revoked=1) under the issue form.
func (h *Handler) Keys(c *fiber.Ctx) error {
	return h.renderKeys(c, fiber.StatusOK, view.KeyForm{Plan: db.PlanFree, Role: db.RoleCustomer}, nil)
}

func (h *Handler) renderKeys(c *fiber.Ctx, status int, form view.KeyForm, issued *view.IssuedKey) error {
	ctx := c.UserContext()
	after, err := web.FormQueryID(c, "after")
	if err != nil {
		return err
	}
	v := view.KeysView{CSRF: browser.CSRFToken(c), Now: h.Now(), Form: form, Issued: issued, ShowRevoked: c.Query("revoked") == "1"}
	// Revoked keys are skipped here rather than in SQL: a page may come back
	// short, and the next link still continues after its last key.
	keys, more, err := h.Store.FindAPIKeys(ctx, db.Page{AfterID: after, Limit: pageSize})
	if err != nil {
		return err
	}
	for _, k := range keys {
		if k.RevokedAt == nil || v.ShowRevoked {
			v.Rows = append(v.Rows, view.KeyRow{Key: k, CSRF: v.CSRF, Now: v.Now})
		}
	}
	if more {
		v.NextURL = "/staff/keys?after=" + strconv.FormatInt(keys[len(keys)-1].ID, 10)
		if v.ShowRevoked {
			v.NextURL += "&revoked=1"
		}
	}
	ch, err := h.chrome(c, "API keys", "keys")
	if err != nil {
		return err
	}
	c.Status(status)
	return web.Render(c, view.KeysPage(ch, v))
}

// IssueKey issues a key and shows its plain text this once; the
// page is never cached.
func (h *Handler) IssueKey(c *fiber.Ctx) error {
	in, f := keyForm(c, true)
	if len(f.Errors) > 0 {
		return h.renderKeys(c, fiber.StatusUnprocessableEntity, f, nil)
	}
	k, plain, err := h.Store.CreateAPIKey(c.UserContext(), in)
	if err != nil {
		status, ok := keyFormErrors(err, &f)
		if !ok {
			return err
		}
		return h.renderKeys(c, status, f, nil)
	}
	h.Logger.Info("API key issued in the console", "keyId", k.ID, "staff", currentStaff(c).Username)
	return h.renderKeys(c, fiber.StatusCreated, view.KeyForm{Plan: db.PlanFree, Role: db.RoleCustomer}, &view.IssuedKey{Key: k, Plain: plain})
}

func (h *Handler) renderKeyEdit(c *fiber.Ctx, status int, k *db.APIKey, f view.KeyForm) error {
	ch, err := h.chrome(c, "Edit key “"+k.Name+"”", "keys")
	if err != nil {
		return err
	}
	c.Status(status)
	return web.Render(c, view.KeyEditPage(ch, view.KeyEditView{CSRF: browser.CSRFToken(c), Key: k, Form: f}))
}

// EditKey shows the form that changes a key's name, plan and limits.
func (h *Handler) EditKey(c *fiber.Ctx) error {
	k, err := web.FindByPath(c, "keyId", h.Store.FindAPIKeyByID)
	if err != nil {
		return err
	}
	f := view.KeyForm{Name: k.Name, Plan: k.Plan, Errors: view.FieldErrors{}}
	if k.Plan == db.PlanEnterprise {
		f.PerMinute, f.PerDay = strconv.FormatInt(k.PerMinute, 10), strconv.FormatInt(k.PerDay, 10)
	}
	return h.renderKeyEdit(c, fiber.StatusOK, k, f)
}

// UpdateKey changes a key's name, plan or enterprise limits
// (Store.UpdateAPIKey, which refuses a revoked key); the limiter reads
// them from the key on its next request.
func (h *Handler) UpdateKey(c *fiber.Ctx) error {
	k, err := web.FindByPath(c, "keyId", h.Store.FindAPIKeyByID)
	if err != nil {
		return err
	}
	id := k.ID
	in, f := keyForm(c, false)
	if len(f.Errors) > 0 {
		return h.renderKeyEdit(c, fiber.StatusUnprocessableEntity, k, f)
	}
	up, err := h.Store.UpdateAPIKey(c.UserContext(), id, in)
	if err != nil {
		status, ok := keyFormErrors(err, &f)
		if !ok {
			return err
		}
		return h.renderKeyEdit(c, status, k, f)
	}
	msg := "Key “" + up.Name + "” is on the " + up.Plan + " plan: " + strconv.FormatInt(up.PerMinute, 10) + "/min, " +
		strconv.FormatInt(up.PerDay, 10) + "/day."
	return h.flashRedirect(c, msg, "/staff/keys")
}

// RevokeKey revokes a key for good and answers with its row.
func (h *Handler) RevokeKey(c *fiber.Ctx) error {
	ctx := c.UserContext()
	id, err := web.PathID(c, "keyId")
	if err != nil {
		return err
	}
	if err := h.Store.RevokeAPIKey(ctx, id); err != nil {
		return err
	}
	k, err := h.Store.FindAPIKeyByID(ctx, id)
	if err != nil {
		return err
	}
	h.Logger.Info("API key revoked in the console", "keyId", k.ID, "staff", currentStaff(c).Username)
	c.Set("HX-Trigger", "keys-changed")
	return h.done(c, "/staff/keys", "Key “"+k.Name+"” is revoked.", func() error {
		return web.Render(c, view.KeyLine(view.KeyRow{Key: k, CSRF: browser.CSRFToken(c), Now: h.Now()}))
	})
}

// LiftBan ends a key's ban (Limiter.LiftBan) and answers with its
// row; the usage page refetches itself on the HX-Trigger event.
func (h *Handler) LiftBan(c *fiber.Ctx) error {
	ctx := c.UserContext()
	k, err := web.FindByPath(c, "keyId", h.Store.FindAPIKeyByID)
	if err != nil {
		return err
	}
	if err := h.Limiter.LiftBan(ctx, k.Subject()); err != nil {
		return err
	}
	if err := h.Store.Audit(ctx, db.AuditBanLift, db.TargetID("key", k.ID), db.BanLifted(k)); err != nil {
		return err
	}
	if k, err = h.Store.FindAPIKeyByID(ctx, k.ID); err != nil {
		return err
	}
	h.Logger.Info("ban lifted in the console", "keyId", k.ID, "staff", currentStaff(c).Username)
	c.Set("HX-Trigger", "keys-changed")
	back := "/staff/keys"
	if strings.Contains(c.Get(fiber.HeaderReferer), "/staff/usage") {
		back = "/staff/usage"
	}
	return h.done(c, back, "The ban of key “"+k.Name+"” is lifted.", func() error {
		return web.Render(c, view.KeyLine(view.KeyRow{Key: k, CSRF: browser.CSRFToken(c), Now: h.Now()}))
	})
}
