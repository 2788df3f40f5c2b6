package shop

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
	view "petstore/views/shop"
	"petstore/web"
	"petstore/web/browser"
)

// Checkout places every cart line in one transaction with the buyer's
// details (Store.PlaceCheckout, all or nothing): POST /checkout with name,
// email, phone and date (SPEC §14). On success the cart empties, the
// details are remembered for next time and the shopper lands on the
// confirmation. On failure the cart stays as it was and comes back with
// what to fix and the details as typed: the fields at fault (422), the
// line at fault (422), or, past the cap on open units, the cart (409).
func (h *Handler) Checkout(c *fiber.Ctx) error {
	st, err := h.loadState(c)
	if err != nil {
		return err
	}
	ctx := c.UserContext()
	if len(st.cart) == 0 {
		v := view.CartView{Error: "Your cart is empty: add a pet first.", Currency: h.Store.Currency, Form: h.detailsForm(c, st)}
		return h.renderCart(c, st, v, fiber.StatusUnprocessableEntity)
	}
	lines := make([]db.NewOrder, len(st.cart))
	for i, l := range st.cart {
		lines[i] = db.NewOrder{PetID: &l.PetID, Quantity: &l.Qty}
	}
	buyer := db.NewCheckout{
		Name: c.FormValue(view.FieldName), Email: c.FormValue(view.FieldEmail),
		Phone: c.FormValue(view.FieldPhone), PreferredDate: c.FormValue(view.FieldDate),
	}
	st.ensureShopper() // a cart has one (keepCart); this keeps it so
	checkout, err := h.Store.PlaceCheckout(ctx, st.shopper, h.MaxOpenUnits, buyer, lines)
	if err != nil {
		return h.checkoutRefused(c, st, err)
	}
	if h.Metrics != nil {
		h.Metrics.OrdersPlaced(len(checkout.Orders))
	}
	st.cart = nil
	rememberBuyer(st, checkout)
	return goTo(c, st, view.ConfirmationURL(checkout.ID))
}

// checkoutRefused answers a checkout PlaceCheckout refused with the cart,
// the details as typed and why: the cap on open units (409), a line
// (422), the buyer's details (422, a message by each field). Any other
// error is returned as it is.
func (h *Handler) checkoutRefused(c *fiber.Ctx, st *shopState, err error) error {
	v, verr := h.cartView(c, st)
	if verr != nil {
		return verr
	}
	if db.ErrorCode(err) == db.ETooManyOpenUnits {
		v.Error = web.ProblemOf(err).Message
		return h.renderCart(c, st, v, fiber.StatusConflict)
	}
	var le *db.LineError
	if errors.As(err, &le) && le.Line >= 0 && le.Line < len(v.Lines) {
		line := &v.Lines[le.Line]
		line.Error = h.lineProblem(c, line, le.Err)
		v.Error = "Nothing was ordered. " + lineName(line) + ": " + line.Error + " Change or remove that line and try again."
		return h.renderCart(c, st, v, fiber.StatusUnprocessableEntity)
	}
	if problems, ok := detailsProblems(err); ok {
		v.Form.Errors = problems
		return h.renderCart(c, st, v, fiber.StatusUnprocessableEntity)
	}
	return err
}

// detailsLabels name the checkout form's fields in its messages.
var detailsLabels = map[string]string{
	view.FieldName: "Name", view.FieldEmail: "Email", view.FieldPhone: "Phone", view.FieldDate: "Preferred date",
}

// detailsProblems words a refusal of the buyer's details, one message by
// field ("Email must be an email address, like name@example.com."); ok is
// false when err is not about them.
func detailsProblems(err error) (map[string]string, bool) {
	var coded *db.Error
	if !errors.As(err, &coded) || coded.Code != db.EValidationFailed || len(coded.Details) == 0 {
		return nil, false
	}
	out := map[string]string{}
	for _, d := range coded.Details {
		label, ok := detailsLabels[d.Field]
		if !ok {
			return nil, false
		}
		if out[d.Field] == "" {
			out[d.Field] = label + " " + strings.TrimSuffix(d.Message, ".") + "."
		}
	}
	return out, true
}

// detailsForm is the checkout form the cart shows: the details this
// request posted (a refused checkout, or a cart line's htmx form that
// sent them along so they are not lost), else those of this browser's
// last checkout; the preferred date between today and 90 days on, by the
// store's clock (UTC).
func (h *Handler) detailsForm(c *fiber.Ctx, st *shopState) view.CheckoutForm {
	today := h.Store.Now().UTC()
	f := view.CheckoutForm{
		Today:   today.Format(time.DateOnly),
		LastDay: today.AddDate(0, 0, db.MaxShipAheadDays).Format(time.DateOnly),
	}
	if c.Method() == fiber.MethodPost {
		f.Name, f.Email = shown(c.FormValue(view.FieldName)), shown(c.FormValue(view.FieldEmail))
		f.Phone, f.Date = shown(c.FormValue(view.FieldPhone)), shown(c.FormValue(view.FieldDate))
		if f.Name+f.Email+f.Phone+f.Date != "" || c.Path() == "/checkout" {
			return f
		}
	}
	f.Name, f.Email, f.Phone = rememberedBuyer(st)
	return f
}

// shown is a typed value as a form shows it back: at most 300 characters,
// with control characters and bytes that are not UTF-8 as U+FFFD.
func shown(s string) string { return browser.Printable(truncate(s, 300), false) }

// lineProblem words why a checkout line failed: out of stock ("Only N
// left", from the stock now), no longer available, or gone from the
// catalog. It refreshes the line's pet so the page shows the stock now.
func (h *Handler) lineProblem(c *fiber.Ctx, line *view.CartLine, err error) string {
	p, ferr := h.Store.FindPetByID(c.UserContext(), line.PetID)
	if ferr == nil {
		line.Pet = p
	} else {
		line.Pet = nil
	}
	switch db.ErrorCode(err) {
	case db.EInsufficientStock:
		if line.Pet != nil && line.Pet.Stock > 0 {
			return onlyLeft(line.Pet.Stock)
		}
		return "None left."
	case db.EPetNotAvailable:
		return "No longer available."
	case db.EValidationFailed:
		var coded *db.Error
		if errors.As(err, &coded) && len(coded.Details) > 0 && coded.Details[0].Field == "quantity" {
			return quantityMessage
		}
		return "This pet is no longer in the catalog."
	}
	return "This line cannot be ordered."
}

// lineName names a cart line's pet in a sentence.
func lineName(l *view.CartLine) string {
	if l.Pet != nil {
		return l.Pet.Name
	}
	return "Pet #" + strconv.FormatInt(l.PetID, 10)
}
