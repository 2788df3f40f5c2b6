package shop

import (
	"strconv"
	"strings"

	"github.com/a-h/templ"
	"github.com/gofiber/fiber/v2"

	"petstore/db"
	"petstore/views/components"
	view "petstore/views/shop"
	"petstore/web"
	"petstore/web/browser"
)

// errNotProven answers a lookup page or cancel for a checkout this
// session has not proven (by number and email) lately: 404, whether or
// not the checkout exists.
var errNotProven = db.Errorf(db.ENotFound,
	"To see this order, find it again with its order number and email (Find an order).")

// Lookup is the "Find an order" form: GET /orders/lookup.
func (h *Handler) Lookup(c *fiber.Ctx) error {
	ch, err := h.pageChrome(c, view.NavOrders)
	if err != nil {
		return err
	}
	return web.Render(c, view.LookupPage(view.LookupView{Chrome: ch}))
}

// FindOrder looks a checkout up by its number and email: POST
// /orders/lookup (number, email). A match is remembered in the session
// (it may then be seen and its open orders cancelled) and the shopper
// goes to it; a pair that matches nothing gets the form again with one
// answer, 404 and the same words, whether or not the number exists. An
// empty field, or a number that is not one, is 422 with what to fix.
func (h *Handler) FindOrder(c *fiber.Ctx) error {
	st, err := h.loadState(c)
	if err != nil {
		return err
	}
	rawNumber, rawEmail := c.FormValue(view.FieldNumber), c.FormValue(view.FieldEmail)
	v := view.LookupView{Form: view.LookupForm{Number: shown(rawNumber), Email: shown(rawEmail), Errors: map[string]string{}}}
	n, numberProblem := parseOrderNumber(rawNumber)
	if numberProblem != "" {
		v.Form.Errors[view.FieldNumber] = numberProblem
	}
	email := strings.TrimSpace(rawEmail)
	if email == "" {
		v.Form.Errors[view.FieldEmail] = "Enter the email address you gave at checkout."
	}
	if len(v.Form.Errors) > 0 {
		return h.renderLookup(c, st, v, fiber.StatusUnprocessableEntity)
	}
	ck, err := h.Store.FindCheckout(c.UserContext(), n, email)
	if db.ErrorCode(err) == db.ENotFound {
		v.Form.NotFound = web.ProblemOf(err).Message + " Check both and try again."
		return h.renderLookup(c, st, v, fiber.StatusNotFound)
	}
	if err != nil {
		return err
	}
	prove(st, ck.ID)
	return goTo(c, st, view.LookupResultURL(ck.ID))
}

// parseOrderNumber reads an order number as people type it ("42", "#42",
// " 42 "). The message says what is wrong, "" when nothing is.
func parseOrderNumber(raw string) (int64, string) {
	s := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(raw), "#"))
	if s == "" {
		return 0, "Enter your order number."
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 1 || strings.ContainsAny(s, "+-") {
		return 0, "Order number must be a number, like 42."
	}
	return n, ""
}

// renderLookup answers a refused lookup with the form, as typed, and why:
// the form's fragment for htmx, else the whole page, with status.
func (h *Handler) renderLookup(c *fiber.Ctx, st *shopState, v view.LookupView, status int) error {
	c.Status(status)
	if browser.Partial(c) {
		v.Chrome = partialChrome(c, st)
		return web.Render(c, templ.Join(view.LookupFormPart(v), view.Chromed(v.Chrome)))
	}
	var err error
	if v.Chrome, err = h.pageChrome(c, view.NavOrders); err != nil {
		return err
	}
	return web.Render(c, view.LookupPage(v))
}

// provenCheckout reads the path's checkoutId and returns that checkout
// when this session proved it. Errors: bad_request, not_found.
func (h *Handler) provenCheckout(c *fiber.Ctx, st *shopState) (*db.Checkout, error) {
	n, err := parseID(c.Params("checkoutId"), "order")
	if err != nil {
		return nil, err
	}
	if !isProven(st, n) {
		return nil, errNotProven
	}
	ck, err := h.Store.FindCheckoutByID(c.UserContext(), n)
	if db.ErrorCode(err) == db.ENotFound {
		return nil, errNotProven
	}
	return ck, err
}

// lookupResultView is a proven checkout as the lookup shows it.
func (h *Handler) lookupResultView(c *fiber.Ctx, ck *db.Checkout) (view.LookupResultView, error) {
	g, err := h.loadCheckoutGroup(c.UserContext(), ck)
	return view.LookupResultView{Group: g, Name: ck.Name}, err
}

// LookupResult shows a checkout this session found by number and email:
// GET /orders/lookup/{checkoutId}, with cancel for its open orders. Any
// other checkout is 404.
func (h *Handler) LookupResult(c *fiber.Ctx) error {
	st, err := h.loadState(c)
	if err != nil {
		return err
	}
	ck, err := h.provenCheckout(c, st)
	if err != nil {
		return err
	}
	v, err := h.lookupResultView(c, ck)
	if err != nil {
		return err
	}
	if v.Chrome, err = h.pageChrome(c, view.NavOrders); err != nil {
		return err
	}
	return web.Render(c, view.LookupResultPage(v))
}

// LookupCancel cancels an open order of a checkout this session proved:
// POST /orders/lookup/{checkoutId}/orders/{id}/cancel. It acts for that
// checkout only (db.Owner.CheckoutID): an order of another checkout, or a
// checkout not proven in this session, is 404; a complete order is 409.
func (h *Handler) LookupCancel(c *fiber.Ctx) error {
	st, err := h.loadState(c)
	if err != nil {
		return err
	}
	id, err := parseID(c.Params("id"), "order")
	if err != nil {
		return err
	}
	ck, err := h.provenCheckout(c, st)
	if err != nil {
		return err
	}
	ctx := c.UserContext()
	notFound := db.Errorf(db.ENotFound, "Order number %d has no open order #%d.", ck.ID, id)
	text, err := h.cancelFor(ctx, id, &db.Owner{CheckoutID: ck.ID}, notFound)
	if err != nil {
		return err
	}
	f := components.Flash{Kind: components.FlashSuccess, Text: text}
	to := view.LookupResultURL(ck.ID)
	if !browser.Partial(c) {
		return h.afterPost(c, st, f, to, nil)
	}
	if ck, err = h.Store.FindCheckoutByID(ctx, ck.ID); err != nil {
		return err
	}
	v, err := h.lookupResultView(c, ck)
	if err != nil {
		return err
	}
	return h.afterPost(c, st, f, to, func(ch view.Chrome) templ.Component {
		v.Chrome = ch
		return view.LookupResultPart(v)
	})
}
