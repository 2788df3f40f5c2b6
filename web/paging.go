package web

import (
	"encoding/base64"
	"net/url"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
)

// cursorPrefix versions the opaque cursor so its shape can change later.
const cursorPrefix = "v1:"

// EncodeCursor makes the opaque cursor that continues after id.
func EncodeCursor(id int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + strconv.FormatInt(id, 10)))
}

// ParsePage reads `limit` (1–100, default 20) and `cursor`. Errors: bad_request.
func ParsePage(c *fiber.Ctx) (db.Page, error) {
	p := db.Page{Limit: db.DefaultLimit}
	s, err := QueryParam(c, "limit")
	if err != nil {
		return p, err
	}
	if s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > db.MaxLimit {
			return p, BadParam("limit", "must be an integer from 1 to %d", db.MaxLimit)
		}
		p.Limit = n
	}
	if s, err = QueryParam(c, "cursor"); err != nil {
		return p, err
	}
	if s != "" {
		raw, err := base64.RawURLEncoding.DecodeString(s)
		id, perr := strconv.ParseInt(strings.TrimPrefix(string(raw), cursorPrefix), 10, 64)
		if err != nil || !strings.HasPrefix(string(raw), cursorPrefix) || perr != nil || id < 1 {
			return p, BadParam("cursor", "is not a cursor this API issued")
		}
		p.AfterID = id
	}
	return p, nil
}

// SetNextLink adds `Link: <…>; rel="next"` when more rows follow lastID,
// keeping the request's other query parameters.
func SetNextLink(c *fiber.Ctx, more bool, lastID int64) {
	if !more {
		return
	}
	q, err := url.ParseQuery(string(c.Request().URI().QueryString()))
	if err != nil {
		q = url.Values{}
	}
	q.Set("cursor", EncodeCursor(lastID))
	c.Append(fiber.HeaderLink, "<"+c.Path()+"?"+q.Encode()+`>; rel="next"`)
}

// PathID reads a positive int64 path parameter. Errors: bad_request.
func PathID(c *fiber.Ctx, name string) (int64, error) {
	id, err := strconv.ParseInt(c.Params(name), 10, 64)
	if err != nil || id < 1 {
		e := db.Errorf(db.EBadRequest, "The %s in the path must be a positive integer.", name)
		e.Details = []db.FieldError{{Field: name, Message: "must be a positive 64-bit integer"}}
		return 0, e
	}
	return id, nil
}

// QueryParam reads an optional query parameter that has no empty value
// ("" when absent): a number, a boolean, a cursor or a list. One sent empty
// (`?limit=`) is a bad_request rather than absent, as the document says.
// (The search text `q` may be empty: it is read with c.Query.) Errors:
// bad_request.
func QueryParam(c *fiber.Ctx, name string) (string, error) {
	args := c.Context().QueryArgs()
	if !args.Has(name) {
		return "", nil
	}
	s := string(args.Peek(name))
	if s == "" {
		return "", BadParam(name, "must not be empty; leave the parameter out instead")
	}
	return s, nil
}

// QueryID reads an optional positive int64 query parameter (0 when
// absent); present and empty is refused, as every API parameter is.
func QueryID(c *fiber.Ctx, name string) (int64, error) {
	s, err := QueryParam(c, name)
	if s == "" || err != nil {
		return 0, err
	}
	return parseID(name, s)
}

// FormQueryID reads an optional positive int64 field of a form sent by
// GET (a browser's filters): an empty or blank field is none, since
// browsers send every field of a form.
func FormQueryID(c *fiber.Ctx, name string) (int64, error) {
	s := strings.TrimSpace(c.Query(name))
	if s == "" {
		return 0, nil
	}
	return parseID(name, s)
}

// parseID reads s, parameter name's value, as a positive int64.
func parseID(name, s string) (int64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id < 1 {
		return 0, BadParam(name, "must be a positive 64-bit integer")
	}
	return id, nil
}

// QueryStatuses reads the repeatable `status` parameter (also accepting a
// comma list). Errors: bad_request on an unknown status.
func QueryStatuses(c *fiber.Ctx) ([]string, error) {
	var out []string
	for _, raw := range c.Context().QueryArgs().PeekMulti("status") {
		for _, s := range strings.Split(string(raw), ",") {
			if !db.ValidStatus(s) {
				return nil, BadParam("status", "must be available, pending or sold")
			}
			out = append(out, s)
		}
	}
	return out, nil
}

// QueryBool reads an optional true/false parameter.
func QueryBool(c *fiber.Ctx, name string) (*bool, error) {
	s, err := QueryParam(c, name)
	if err != nil {
		return nil, err
	}
	switch s {
	case "":
		return nil, nil
	case "true":
		t := true
		return &t, nil
	case "false":
		f := false
		return &f, nil
	}
	return nil, BadParam(name, "must be true or false")
}
