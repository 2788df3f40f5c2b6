package console

import (
	"errors"
	"net/url"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
	view "petstore/views/console"
	"petstore/web"
	"petstore/web/browser"
)

// auditParams are the audit page's filters, by their query names.
var auditParams = []string{"actorType", "actorId", "actor", "action", "targetType", "targetId", "from", "to"}

// Audit is the audit log (SPEC §16, admins only): newest first, a page of
// pageSize, filtered by actor, action, target and dates (UTC days). Bad
// filters come back on the form with what is wrong, and a 422.
func (h *Handler) Audit(c *fiber.Ctx) error {
	q := map[string]string{}
	for _, name := range auditParams {
		q[name] = strings.TrimSpace(c.Query(name))
	}
	v := auditViewOf(q)
	before, err := web.FormQueryID(c, "before")
	if err != nil {
		return err
	}
	dates, err := db.ParseDateRange(q["from"], q["to"], false, 0)
	// The action is a prefix here ("webhook" finds every webhook change),
	// the actor a staff user's name or its start (SPEC §10).
	f := db.AuditFilter{ActorType: v.ActorType, ActorID: v.ActorID, ActorName: v.Actor, ActionPrefix: strings.ToLower(v.Action),
		TargetType: v.TargetType, TargetID: v.TargetID, Dates: dates}
	if err == nil {
		err = f.Validate()
	}
	var coded *db.Error
	if errors.As(err, &coded) && coded.Code == db.EValidationFailed {
		// The filters as typed, as text a page can hold, with their
		// problems in the form's error summary (SPEC §10).
		for _, name := range auditParams {
			q[name] = browser.Printable(q[name], false)
		}
		v = auditViewOf(q)
		v.Errors, v.Problem = view.FieldErrorsOf(coded, auditParams...)
		c.Status(fiber.StatusUnprocessableEntity)
	} else if err != nil {
		return err
	} else {
		entries, more, err := h.Store.FindAudit(c.UserContext(), f, db.Page{AfterID: before, Limit: pageSize})
		if err != nil {
			return err
		}
		v.Entries = entries
		if more {
			v.NextURL = auditURL(q, entries[len(entries)-1].ID)
		}
	}
	ch, err := h.chrome(c, "Audit log", "audit")
	if err != nil {
		return err
	}
	return web.Render(c, view.AuditPage(ch, v))
}

// auditViewOf is the audit page with the filters of q in its form.
func auditViewOf(q map[string]string) view.AuditView {
	return view.AuditView{ActorType: q["actorType"], ActorID: q["actorId"], Actor: q["actor"], Action: q["action"],
		TargetType: q["targetType"], TargetID: q["targetId"], From: q["from"], To: q["to"]}
}

// auditURL is the audit page with the filters of q, from the entry
// before the id before.
func auditURL(q map[string]string, before int64) string {
	u := url.Values{}
	for _, name := range auditParams {
		if q[name] != "" {
			u.Set(name, q[name])
		}
	}
	u.Set("before", strconv.FormatInt(before, 10))
	return "/staff/audit?" + u.Encode()
}

// problemsText says what a validation_failed error found wrong, one
// "field: message" after another, for a page; ok is false for any other
// error.
func problemsText(err error) (string, bool) {
	var coded *db.Error
	if !errors.As(err, &coded) || coded.Code != db.EValidationFailed {
		return "", false
	}
	parts := make([]string, 0, len(coded.Details))
	for _, d := range coded.Details {
		parts = append(parts, d.Field+": "+d.Message)
	}
	if len(parts) == 0 {
		return coded.Message, true
	}
	return strings.Join(parts, "; ") + ".", true
}
