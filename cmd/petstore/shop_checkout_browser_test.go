package main

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestShopCheckoutBrowser is SPEC §14's selling journey with JavaScript
// on (htmx): prices and totals, a checkout refused field by field, then
// placed with a preferred date, the confirmation, and in a second browser
// (fresh cookies) Find an order and a cancel.
func TestShopCheckoutBrowser(t *testing.T) {
	t.Parallel()
	checkoutJourney(t, true)
}

// TestShopCheckoutBrowserNoJS is the same journey with JavaScript off:
// plain forms, 422 pages and redirects.
func TestShopCheckoutBrowserNoJS(t *testing.T) {
	t.Parallel()
	checkoutJourney(t, false)
}

func checkoutJourney(t *testing.T, js bool) {
	ts := startServer(t)
	ctx := newBrowser(t, js)
	sb := &shopBrowser{t: t, ctx: ctx, ts: ts}
	// post submits a form: with htmx it swaps in place (or redirects by
	// HX-Redirect, which the next wait catches), without it a page loads.
	post := func(b *shopBrowser, css string) {
		t.Helper()
		if js {
			browse(t, b.ctx, chromedp.Click(chromedp.CSS(css)))
		} else {
			b.navigate(chromedp.Click(chromedp.CSS(css)))
		}
	}
	bella, max := sb.pet("Bella"), sb.pet("Max")

	// The pet page: price, breed, age and description.
	sb.navigate(chromedp.Navigate(ts.URL + "/pets/" + fmtID(max.ID)))
	sb.waitText(`[data-testid="price"]`, "€560.00")
	sb.waitText(`[data-testid="breed"]`, "Beagle")
	sb.waitText(`[data-testid="age"]`, "2 years")
	sb.waitText(`[data-testid="pet-description"]`, "Curious nose, happy tail.")
	screenshot(t, ctx, "pet-details")

	// Two pets in the cart: prices, line totals, the cart's total.
	browse(t, ctx, chromedp.SetValue(chromedp.CSS(`#quantity`), "2"))
	post(sb, `[data-testid="add-to-cart"]`)
	sb.waitText(`#cart-count`, "2")
	sb.navigate(chromedp.Navigate(ts.URL + "/pets/" + fmtID(bella.ID)))
	browse(t, ctx, chromedp.SetValue(chromedp.CSS(`#quantity`), "1"))
	post(sb, `[data-testid="add-to-cart"]`)
	sb.waitText(`#cart-count`, "3")
	sb.navigate(chromedp.Navigate(ts.URL + "/cart"))
	if got := sb.texts(`[data-testid="line-unit"]`); !slices.Equal(got, []string{"€560.00", "€790.00"}) {
		t.Errorf("unit prices = %q", got)
	}
	if got := sb.texts(`[data-testid="line-total"]`); !slices.Equal(got, []string{"€1,120.00", "€790.00"}) {
		t.Errorf("line totals = %q", got)
	}
	sb.waitText(`[data-testid="cart-total"]`, "€1,910.00")
	screenshot(t, ctx, "cart-totals")

	// Refused details: each field says why, the cart stays.
	sb.fillDetails("", "ada(at)example.com", "call me", "")
	post(sb, `[data-testid="checkout"]`)
	sb.waitText(`[data-testid="error-summary"]`, "There are 3 problems")
	sb.waitText(`[data-testid="error-name"]`, "Name is required.")
	sb.waitText(`[data-testid="error-email"]`, "Email must be an email address, like name@example.com.")
	sb.waitText(`[data-testid="error-phone"]`, "Phone may hold only digits")
	sb.waitJS(`document.querySelector("#checkout-email").getAttribute("aria-invalid") === "true"`)
	sb.waitJS(`document.querySelector("#checkout-email").value === "ada(at)example.com"`)
	if got := sb.texts(`[data-testid="line-name"]`); !slices.Equal(got, []string{"Max", "Bella"}) {
		t.Errorf("cart after the refusal = %q", got)
	}
	screenshot(t, ctx, "checkout-errors")
	if got := sb.stock(max.ID); got != 3 {
		t.Errorf("Max's stock = %d after a refused checkout, want 3", got)
	}

	// Placed, with a preferred date a week on by the server's clock.
	date := ts.Clock.Now().UTC().AddDate(0, 0, 7)
	sb.fillDetails("Ada Lovelace", "ada@example.com", "+44 20 7946 0000", date.Format(time.DateOnly))
	post(sb, `[data-testid="checkout"]`)
	sb.waitLocation("/orders/confirmation/")
	sb.waitText(`[data-testid="confirmation-heading"]`, "Thank you, Ada Lovelace!")
	sb.waitText(`[data-testid="checkout-total"]`, "€1,910.00")
	sb.waitText(`[data-testid="confirmation-date"]`, date.Format("2 Jan 2006"))
	if got := sb.texts(`[data-testid="receipt-line"] [data-testid="order-total"]`); !slices.Equal(got, []string{"€1,120.00", "€790.00"}) {
		t.Errorf("order totals = %q", got)
	}
	number := sb.texts(`[data-testid="order-number"]`)[0]
	confirmation := read(t, ctx, chromedp.Location())
	sb.waitText(`#cart-count`, "0")
	screenshot(t, ctx, "confirmation")
	if js { // phones: the receipt fits 360 px without sideways scrolling
		browse(t, ctx, chromedp.EmulateViewport(360, 740), chromedp.Reload())
		sb.waitJS(`document.documentElement.scrollWidth <= 360`)
		sb.waitJS(`(w => w.scrollWidth <= w.clientWidth)(document.querySelector(".table-wrap"))`)
		screenshot(t, ctx, "confirmation-360px")
		browse(t, ctx, chromedp.EmulateViewport(1280, 900))
	}

	// A second browser (fresh cookies) cannot see the confirmation, and
	// finds the order by number and email instead.
	ctx2, cancel := chromedp.NewContext(ctx, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	other := &shopBrowser{t: t, ctx: ctx2, ts: ts}
	resp, err := chromedp.Run(ctx2, chromedp.NavigateResponse(confirmation))
	if err != nil || resp.Status != http.StatusNotFound {
		t.Fatalf("the confirmation in another browser: %v, %v; want 404", resp, err)
	}
	other.navigate(chromedp.Navigate(ts.URL + "/orders"))
	other.waitText(`[data-testid="orders-empty"]`, "No orders yet.")
	other.navigate(chromedp.Click(chromedp.CSS(`[data-testid="footer-find-order"]`)))
	other.waitLocation("/orders/lookup")
	browse(t, ctx2, chromedp.SetValue(chromedp.CSS(`#lookup-number`), number),
		chromedp.SetValue(chromedp.CSS(`#lookup-email`), "someone@example.com"))
	post(other, `[data-testid="lookup-submit"]`)
	other.waitText(`[data-testid="lookup-not-found"]`, "No order matches that order number and email address.")
	screenshot(t, ctx2, "lookup-not-found")
	browse(t, ctx2, chromedp.SetValue(chromedp.CSS(`#lookup-email`), "ADA@example.com"))
	post(other, `[data-testid="lookup-submit"]`)
	other.waitLocation("/orders/lookup/" + number)
	other.waitText(`[data-testid="checkout-number"]`, number)
	other.waitText(`[data-testid="checkout-total"]`, "€1,910.00")
	screenshot(t, ctx2, "lookup-result")

	// Cancel Max's order from there: it leaves the list, the total drops,
	// the stock comes back.
	post(other, sb.cancelOf(max.ID))
	other.waitText(`#flash`, "Your order of Max × 2 is cancelled.")
	other.waitJS(`document.querySelectorAll('[data-testid="order"]').length === 1`)
	if got := other.texts(`[data-testid="order-pet"]`); !slices.Equal(got, []string{"Bella"}) {
		t.Errorf("orders after the cancel = %q", got)
	}
	other.waitText(`[data-testid="checkout-total"]`, "€790.00")
	screenshot(t, ctx2, "lookup-cancelled")
	if got := sb.stock(max.ID); got != 3 {
		t.Errorf("Max's stock = %d after the cancel, want 3", got)
	}

	// The buyer's own browser sees the same.
	sb.navigate(chromedp.Navigate(ts.URL + "/orders"))
	if got := sb.texts(`[data-testid="order-pet"]`); !slices.Equal(got, []string{"Bella"}) {
		t.Errorf("My orders = %q", got)
	}
	sb.waitText(`[data-testid="checkout-total"]`, "€790.00")
	if !strings.Contains(read(t, ctx, chromedp.Location()), "/orders") {
		t.Error("not on My orders")
	}

	// Staff, in a browser of their own, see who bought Bella and for how
	// much: the buyer's name, email and phone, and the order's total.
	ctx3, cancel3 := chromedp.NewContext(ctx, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel3)
	staff := &consoleBrowser{t: t, ctx: ctx3, ts: ts}
	staff.signIn()
	staff.navigate(chromedp.Navigate(ts.URL + "/staff/orders"))
	staff.waitText(`[data-testid="buyer-name"]`, "Ada Lovelace")
	staff.waitText(`[data-testid="buyer-email"]`, "ada@example.com")
	staff.waitText(`[data-testid="buyer-phone"]`, "+44 20 7946 0000")
	staff.waitText(`[data-testid="order-total"]`, "€790.00")
	screenshot(t, ctx3, "staff-orders")
}
