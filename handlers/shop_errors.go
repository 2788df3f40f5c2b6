package handlers

import (
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
	"petstore/views/shop"
	"petstore/web"
)

// shopErrors renders the shop's own answer for a request it refuses (4xx):
// a page in the shop's frame, or for htmx a message swapped into the
// flash region (HX-Retarget), so the shopper never sees a bare error.
// Server failures go on to web.ErrorHandler, which logs them.
func (h *Handler) shopErrors(c *fiber.Ctx) error {
	err := c.Next()
	if err == nil {
		return nil
	}
	p := web.ProblemOf(err)
	if p.Status >= 500 {
		return err
	}
	c.Response().ResetBody()
	c.Status(p.Status)
	v := shop.ErrorView{Status: p.Status, Message: shopMessage(p)}
	if isPartial(c) {
		c.Set("HX-Retarget", "#flash")
		c.Set("HX-Reswap", "innerHTML")
		return web.Render(c, nil, shop.ErrorFlash(v))
	}
	ch, cerr := h.pageChrome(c, "")
	if cerr != nil {
		return err
	}
	v.Chrome = ch
	return web.Render(c, shop.ErrorPage(v), nil)
}

// shopMessage words a refusal for a shopper: the coded message, with the
// first field problem when there is one.
func shopMessage(p web.Problem) string {
	msg := p.Message
	if len(p.Details) > 0 {
		msg = strings.TrimSuffix(msg, ".") + ": " + p.Details[0].Message + "."
	}
	return msg
}

// shopID reads a positive id from the path or a form field; what names
// the thing for the message ("pet", "order").
func shopID(raw, what string) (int64, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return 0, db.Errorf(db.EBadRequest, "No %s was given.", what)
	}
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || id < 1 {
		return 0, db.Errorf(db.EBadRequest, "That is not a %s number we know: %q.", what, truncate(raw, 20))
	}
	return id, nil
}

// quantityMessage is the advice for a quantity that is not a number from
// 1 to db.MaxOrderQuantity.
var quantityMessage = "Enter a whole number from 1 to " + strconv.Itoa(db.MaxOrderQuantity) + "."

// parseQuantity reads a form quantity: 1 to db.MaxOrderQuantity. The
// message says what is wrong, "" when nothing is.
func parseQuantity(raw string) (int64, string) {
	n, err := strconv.ParseInt(strings.TrimSpace(raw), 10, 64)
	if err != nil || n < 1 || n > db.MaxOrderQuantity {
		return 0, quantityMessage
	}
	return n, ""
}

// truncate cuts s to at most n runes.
func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// onlyLeft words a stock shortage.
func onlyLeft(stock int64) string {
	if stock == 1 {
		return "Only 1 left."
	}
	return "Only " + strconv.FormatInt(stock, 10) + " left."
}
