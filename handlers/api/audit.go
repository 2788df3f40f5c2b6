package api

import (
	"errors"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
	"petstore/web"
)

// ListAudit is GET /api/audit (SPEC §16): the audit log newest first,
// cursor paged, filtered by actor, action, target and dates.
func (h *Handler) ListAudit(c *fiber.Ctx) error {
	page, err := web.ParsePage(c)
	if err != nil {
		return err
	}
	q := map[string]string{}
	for _, name := range []string{"actorType", "actorId", "action", "targetType", "targetId", "from", "to"} {
		if q[name], err = web.QueryParam(c, name); err != nil {
			return err
		}
	}
	dates, err := db.ParseDateRange(q["from"], q["to"], false, 0)
	if err != nil {
		return badQuery(err)
	}
	f := db.AuditFilter{ActorType: q["actorType"], ActorID: q["actorId"], Action: q["action"],
		TargetType: q["targetType"], TargetID: q["targetId"], Dates: dates}
	if err := f.Validate(); err != nil {
		return badQuery(err)
	}
	entries, more, err := h.Store.FindAudit(c.UserContext(), f, page)
	if err != nil {
		return err
	}
	if len(entries) > 0 {
		web.SetNextLink(c, more, entries[len(entries)-1].ID)
	}
	return c.JSON(nonNil(entries))
}

// badQuery is a validation_failed of query parameters as SPEC §2 answers
// a bad query parameter: 400 bad_request, its details naming them.
func badQuery(err error) error {
	var coded *db.Error
	if !errors.As(err, &coded) || coded.Code != db.EValidationFailed {
		return err
	}
	e := db.Errorf(db.EBadRequest, "Some query parameters are invalid.")
	e.Details = coded.Details
	return e
}
