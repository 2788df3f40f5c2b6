package shop

import (
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
	view "petstore/views/shop"
	"petstore/web"
	"petstore/web/browser"
)

// Words of the 503 page (SPEC §2: the database is unavailable) for
// shoppers; web.ErrorHandler has set Retry-After.
const unavailable = "The shop cannot reach its database just now. Nothing was changed; please try again in a few seconds."

// RenderError is the storefront's error renderer (web.ErrorRenderer). A
// request it refuses (4xx) gets a page in the shop's frame, or for htmx a
// message swapped into the flash region (HX-Retarget), so the shopper
// never sees a bare error. A server failure gets the plain error page.
func (h *Handler) RenderError(c *fiber.Ctx, p web.Problem) error {
	if p.Status >= 500 {
		return RenderPlainError(c, p)
	}
	c.Response().ResetBody()
	v := view.ErrorView{Status: p.Status, Message: refusalMessage(p)}
	if browser.Partial(c) {
		c.Set("HX-Retarget", "#flash")
		c.Set("HX-Reswap", "innerHTML")
		return web.Render(c, view.ErrorFlash(v))
	}
	ch, err := h.pageChrome(c, "")
	if err != nil {
		return RenderPlainError(c, p) // the cookie cannot be read: no frame
	}
	v.Chrome = ch
	return web.Render(c, view.ErrorPage(v))
}

// RenderPlainError is the plain error page in the shop's words, without
// its frame: for server failures, and for paths no route serves.
func RenderPlainError(c *fiber.Ctx, p web.Problem) error {
	return web.ErrorPage(c, p, false, unavailable)
}

// refusalMessage words a refusal for a shopper: the coded message, with the
// first field problem when there is one.
func refusalMessage(p web.Problem) string {
	msg := p.Message
	if len(p.Details) > 0 {
		msg = strings.TrimSuffix(msg, ".") + ": " + p.Details[0].Message + "."
	}
	return msg
}

// parseID reads a positive id from the path or a form field; what names
// the thing for the message ("pet", "order").
func parseID(raw, what string) (int64, error) {
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

// truncate cuts what a visitor typed to at most n runes, to show it again
// (in its field, or quoted in a message) without echoing a page's worth.
func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n])
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
