package console

import (
	"errors"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
	view "petstore/views/console"
	"petstore/web"
	"petstore/web/browser"
)

// webhookFormFields are the form's fields, named as in the API's NewWebhook.
var webhookFormFields = []string{"url", "events", "description"}

// webhookForm reads the add or edit form: the event checkboxes come as
// repeated "events" values.
func webhookForm(c *fiber.Ctx) (db.WebhookUpdate, view.WebhookForm) {
	f := view.WebhookForm{URL: strings.TrimSpace(c.FormValue("url")), Description: c.FormValue("description"), Errors: view.FieldErrors{}}
	for _, e := range c.Request().PostArgs().PeekMulti("events") {
		f.Events = append(f.Events, string(e))
	}
	events := slices.Clone(f.Events)
	if events == nil {
		events = []string{}
	}
	return db.WebhookUpdate{URL: &f.URL, Events: &events, Description: &f.Description}, f
}

// checkWebhookForm records, in the console's words, what the store would
// refuse in the API's, and refuses what only the console does: "All
// events" ticked beside specific events (it already means every one), no
// event ticked, and a URL another webhook (not self) already has, which
// would get every event twice (edit that one's events instead). It
// reports whether the form has problems, the store's own merged in.
func (h *Handler) checkWebhookForm(c *fiber.Ctx, in db.WebhookUpdate, f *view.WebhookForm, self int64) (bool, error) {
	switch {
	case len(f.Events) == 0:
		f.Errors["events"] = "Tick at least one event, or All events."
	case slices.Contains(f.Events, db.WebhookAnyEvent) && len(f.Events) > 1:
		f.Errors["events"] = "All events already includes every event: tick it alone, or only the events you want."
	}
	ws, err := h.Store.FindWebhooks(c.UserContext())
	if err != nil {
		return false, err
	}
	for _, w := range ws {
		if w.ID != self && w.URL == f.URL {
			f.Errors["url"] = "A webhook already sends to this URL: change that one's events rather than add another (each event would arrive twice)."
		}
	}
	if len(f.Errors) == 0 {
		return false, nil
	}
	var coded *db.Error
	if errors.As(db.CheckWebhook(in, self == 0), &coded) {
		f.Problem = mergeFieldErrors(f.Errors, coded, webhookFormFields...)
	}
	return true, nil
}

// webhookFormOf is the edit form filled from w.
func webhookFormOf(w *db.Webhook) view.WebhookForm {
	return view.WebhookForm{URL: w.URL, Description: w.Description, Events: w.Events, Errors: view.FieldErrors{}}
}

// webhookFormFailed merges a refusal into the form; other errors are
// returned for the error page.
func webhookFormFailed(err error, f *view.WebhookForm) (int, error) {
	coded, status := refusalOf(err, fiber.StatusConflict, fiber.StatusUnprocessableEntity)
	if coded == nil {
		return status, err
	}
	f.Problem = mergeFieldErrors(f.Errors, coded, webhookFormFields...)
	return status, nil
}

// Webhooks lists the webhooks under the form that adds one.
func (h *Handler) Webhooks(c *fiber.Ctx) error {
	return h.renderWebhooks(c, fiber.StatusOK, view.WebhookForm{}, nil)
}

func (h *Handler) renderWebhooks(c *fiber.Ctx, status int, f view.WebhookForm, secret *view.WebhookSecret) error {
	ws, err := h.Store.FindWebhooks(c.UserContext())
	if err != nil {
		return err
	}
	ch, err := h.chrome(c, "Webhooks", "webhooks")
	if err != nil {
		return err
	}
	c.Status(status)
	return web.Render(c, view.WebhooksPage(ch, view.WebhooksView{CSRF: browser.CSRFToken(c), Form: f, Secret: secret, Rows: ws}))
}

// CreateWebhook adds a webhook and shows its secret this once; the page
// is never cached (NoStore).
func (h *Handler) CreateWebhook(c *fiber.Ctx) error {
	in, f := webhookForm(c)
	if refused, err := h.checkWebhookForm(c, in, &f, 0); err != nil || refused {
		if err != nil {
			return err
		}
		return h.renderWebhooks(c, fiber.StatusUnprocessableEntity, f, nil)
	}
	w, err := h.Store.CreateWebhook(c.UserContext(), db.NewWebhook{URL: in.URL, Events: in.Events, Description: in.Description})
	if err != nil {
		status, err := webhookFormFailed(err, &f)
		if err != nil {
			return err
		}
		return h.renderWebhooks(c, status, f, nil)
	}
	h.Logger.Info("webhook added in the console", "webhookId", w.ID, "staff", currentStaff(c).Username)
	return h.renderWebhooks(c, fiber.StatusCreated, view.WebhookForm{}, &view.WebhookSecret{Webhook: w, Secret: w.Secret})
}

// Webhook is one webhook's page with its deliveries, newest first
// (?status= filters, ?before= pages).
func (h *Handler) Webhook(c *fiber.Ctx) error {
	w, err := web.FindByPath(c, "webhookId", h.Store.FindWebhookByID)
	if err != nil {
		return err
	}
	return h.renderWebhook(c, fiber.StatusOK, w, webhookFormOf(w), nil)
}

func (h *Handler) renderWebhook(c *fiber.Ctx, status int, w *db.Webhook, f view.WebhookForm, secret *view.WebhookSecret) error {
	before, err := web.FormQueryID(c, "before")
	if err != nil {
		return err
	}
	v := view.WebhookView{CSRF: browser.CSRFToken(c), Webhook: w, Form: f, Secret: secret, Status: c.Query("status")}
	if v.Status != "" && !slices.Contains(db.DeliveryStatuses, v.Status) {
		v.Status = ""
	}
	ds, more, err := h.Store.FindWebhookDeliveries(c.UserContext(), db.DeliveryFilter{WebhookID: w.ID, Status: v.Status,
		Page: db.Page{AfterID: before, Limit: pageSize}})
	if err != nil {
		return err
	}
	v.Deliveries = ds
	v.RowsURL = deliveriesPage(w.ID, v.Status, before)
	if more {
		v.NextURL = deliveriesPage(w.ID, v.Status, ds[len(ds)-1].ID)
	}
	if web.IsHTMX(c) {
		return web.Render(c, view.DeliveryRows(v))
	}
	ch, err := h.chrome(c, "Webhook "+w.URL, "webhooks")
	if err != nil {
		return err
	}
	c.Status(status)
	return web.Render(c, view.WebhookPage(ch, v))
}

// UpdateWebhook changes a webhook's URL, events and description.
func (h *Handler) UpdateWebhook(c *fiber.Ctx) error {
	w, err := web.FindByPath(c, "webhookId", h.Store.FindWebhookByID)
	if err != nil {
		return err
	}
	in, f := webhookForm(c)
	if refused, err := h.checkWebhookForm(c, in, &f, w.ID); err != nil || refused {
		if err != nil {
			return err
		}
		return h.renderWebhook(c, fiber.StatusUnprocessableEntity, w, f, nil)
	}
	up, err := h.Store.UpdateWebhook(c.UserContext(), w.ID, in)
	if err != nil {
		status, err := webhookFormFailed(err, &f)
		if err != nil {
			return err
		}
		return h.renderWebhook(c, status, w, f, nil)
	}
	return h.flashRedirect(c, "Webhook "+up.URL+" is saved.", webhookBack(up.ID))
}

// ToggleWebhook enables a disabled webhook (clearing why the store
// disabled it) or disables an enabled one.
func (h *Handler) ToggleWebhook(c *fiber.Ctx) error {
	w, err := web.FindByPath(c, "webhookId", h.Store.FindWebhookByID)
	if err != nil {
		return err
	}
	enabled := !w.Enabled
	if _, err := h.Store.UpdateWebhook(c.UserContext(), w.ID, db.WebhookUpdate{Enabled: &enabled}); err != nil {
		return err
	}
	msg := "Webhook " + w.URL + " is disabled: nothing is sent to it."
	if enabled {
		msg = "Webhook " + w.URL + " is enabled."
	}
	return h.flashRedirect(c, msg, webhookBack(w.ID))
}

// RotateWebhookSecret gives a webhook a new secret and shows it this once.
func (h *Handler) RotateWebhookSecret(c *fiber.Ctx) error {
	w, err := web.FindByPath(c, "webhookId", h.Store.RotateWebhookSecret)
	if err != nil {
		return err
	}
	h.Logger.Info("webhook secret rotated in the console", "webhookId", w.ID, "staff", currentStaff(c).Username)
	return h.renderWebhook(c, fiber.StatusOK, w, webhookFormOf(w), &view.WebhookSecret{Webhook: w, Secret: w.Secret, Rotated: true})
}

// TestWebhook queues a webhook.test event to the webhook.
func (h *Handler) TestWebhook(c *fiber.Ctx) error {
	id, err := web.PathID(c, "webhookId")
	if err != nil {
		return err
	}
	d, err := h.Deliveries.Test(c.UserContext(), id)
	if err != nil {
		return h.refused(c, err, webhookBack(id), nil)
	}
	return h.flashRedirect(c, "Test event queued as delivery "+strconv.FormatInt(d.ID, 10)+".", webhookBack(id))
}

// DeleteWebhook deletes a webhook with its deliveries.
func (h *Handler) DeleteWebhook(c *fiber.Ctx) error {
	w, err := web.FindByPath(c, "webhookId", h.Store.FindWebhookByID)
	if err != nil {
		return err
	}
	if err := h.Store.DeleteWebhook(c.UserContext(), w.ID); err != nil {
		return err
	}
	h.Logger.Info("webhook deleted in the console", "webhookId", w.ID, "staff", currentStaff(c).Username)
	return h.flashRedirect(c, "Webhook "+w.URL+" is deleted.", "/staff/webhooks")
}

// RetryDelivery makes one more attempt of a delivery now.
func (h *Handler) RetryDelivery(c *fiber.Ctx) error {
	id, err := web.PathID(c, "webhookId")
	if err != nil {
		return err
	}
	deliveryID, err := web.PathID(c, "deliveryId")
	if err != nil {
		return err
	}
	if _, err := h.Deliveries.Retry(c.UserContext(), id, deliveryID); err != nil {
		return h.refused(c, err, webhookBack(id), nil)
	}
	return h.flashRedirect(c, "Delivery "+strconv.FormatInt(deliveryID, 10)+" is queued for an attempt now.", webhookBack(id))
}

// deliveriesPage is the address of a webhook's page of deliveries: those
// in status ("" for all) older than before (0 for the newest).
func deliveriesPage(id int64, status string, before int64) string {
	q := url.Values{}
	if before > 0 {
		q.Set("before", strconv.FormatInt(before, 10))
	}
	if status != "" {
		q.Set("status", status)
	}
	if len(q) == 0 {
		return webhookBack(id)
	}
	return webhookBack(id) + "?" + q.Encode()
}

func webhookBack(id int64) string { return "/staff/webhooks/" + strconv.FormatInt(id, 10) }
