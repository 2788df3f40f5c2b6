package main

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"petstore/db"
)

// TestConsoleSellingBrowser drives the console's side of SPEC §14 in
// chromium: staff edit a pet's price, description, breed and birth date
// (a bad price first, which comes back with its message), see them saved;
// a storefront checkout arrives live on the orders page with its buyer
// and totals, next to an API order that shows its key, and orders placed
// moments apart all arrive; the dashboard shows today's revenue and the
// open orders' value, and follows a cancellation live; on a 360 px screen
// the tables scroll inside their frames.
func TestConsoleSellingBrowser(t *testing.T) {
	t.Parallel()
	ts := startServer(t)
	ctx := newBrowser(t, true)
	cb := &consoleBrowser{t: t, ctx: ctx, ts: ts}
	cb.watchConsole()
	bg := context.Background()
	if _, err := createStaff(bg, ts.Store, "alice", "a long staff password"); err != nil {
		t.Fatal(err)
	}
	cb.navigate(chromedp.Navigate(ts.URL + "/staff/catalog"))
	cb.waitJS(`location.pathname === "/staff/login"`)
	cb.navigate(chromedp.SendKeys(chromedp.ID("username"), "alice"),
		chromedp.SendKeys(chromedp.ID("password"), "a long staff password"),
		chromedp.Click(chromedp.CSS(`[data-testid="login-submit"]`)))
	cb.waitJS(`location.pathname === "/staff/catalog"`)

	// The pet form: the demo profile, and no birth date after the store's today.
	pet := cb.pet("Charlie")
	id := strconv.FormatInt(pet.ID, 10)
	row := `[data-testid="pet-row"][data-pet-id="` + id + `"]`
	cb.navigate(chromedp.Click(chromedp.CSS(row + ` [data-testid="edit-pet"]`)))
	cb.waitText(`h1`, "Edit pet #"+id)
	today := ts.Clock.Now().UTC().Format(time.DateOnly)
	if got := cb.value(`#birthDate`, "max"); got != today {
		t.Errorf("birth date max = %q, want the store's today %q", got, today)
	}
	if got := cb.value(`#price`, "value"); got != "950.00" {
		t.Errorf("price shows %q, want the demo's 950.00", got)
	}
	// A price with three decimals comes back beside the field, what was typed kept.
	cb.setField(`#price`, "349.999")
	cb.setField(`#breed`, "Cavalier")
	cb.navigate(chromedp.Click(chromedp.CSS(`[data-testid="save-pet"]`)))
	cb.waitText(`#price-error`, `must be an amount like "129.00"`)
	if got := cb.value(`#breed`, "value"); got != "Cavalier" {
		t.Errorf("after the refusal the breed shows %q", got)
	}
	screenshot(t, ctx, "pet-form-invalid")
	born := ts.Clock.Now().UTC().AddDate(-3, -2, 0).Format(time.DateOnly)
	cb.setField(`#price`, "349.99")
	cb.setField(`#description`, "Gentle and calm.\nLoves a lap.")
	cb.setField(`#birthDate`, born)
	screenshot(t, ctx, "pet-form")
	cb.navigate(chromedp.Click(chromedp.CSS(`[data-testid="save-pet"]`)))
	cb.waitText(`[data-testid="flash"]`, "Pet “Charlie” saved.")
	cb.waitText(row+` [data-testid="pet-price"]`, "€349.99")
	cb.waitText(row+` [data-testid="pet-breed"]`, "Cavalier")
	saved, err := ts.Store.FindPetByID(bg, pet.ID)
	if err != nil {
		t.Fatal(err)
	}
	// The browser sends the textarea's break as CRLF; the store keeps LF.
	if saved.Price != 34999 || deref(saved.Description) != "Gentle and calm.\nLoves a lap." || deref(saved.Breed) != "Cavalier" || deref(saved.BirthDate) != born {
		t.Fatalf("saved pet = %s %q %q %q", saved.Price, deref(saved.Description), deref(saved.Breed), deref(saved.BirthDate))
	}
	screenshot(t, ctx, "catalog")
	cb.navigate(chromedp.Click(chromedp.CSS(row + ` [data-testid="edit-pet"]`)))
	if got := cb.value(`#description`, "value"); got != "Gentle and calm.\nLoves a lap." {
		t.Errorf("description shows %q", got)
	}
	screenshot(t, ctx, "pet-form-saved")

	// Orders: a storefront checkout arrives live with its buyer and totals.
	stock := int64(5)
	if _, err := ts.Store.SetInventory(bg, pet.ID, db.InventoryUpdate{Quantity: &stock}); err != nil {
		t.Fatal(err)
	}
	cb.navigate(chromedp.Click(chromedp.CSS(`[data-testid="nav-orders"]`)))
	cb.waitLive()
	cb.markPage()
	checkout, err := ts.Store.PlaceCheckout(bg, "browser-shopper", 10,
		db.NewCheckout{Name: "Grace Hopper", Email: "grace@example.com", Phone: "+1 555 0100"},
		[]db.NewOrder{{PetID: &pet.ID, Quantity: &[]int64{2}[0]}})
	if err != nil {
		t.Fatal(err)
	}
	shopRow := `#order-` + strconv.FormatInt(checkout.Orders[0].ID, 10)
	cb.waitText(shopRow+` [data-testid="order-total"]`, "€699.98")
	cb.wantSamePage()
	cb.waitText(shopRow+` [data-testid="order-unit-price"]`, "349.99")
	cb.waitText(shopRow+` [data-testid="buyer-name"]`, "Grace Hopper")
	if got := cb.value(shopRow+` [data-testid="buyer-email"]`, "href"); got != "mailto:grace@example.com" {
		t.Errorf("email link = %q", got)
	}
	if got := cb.value(shopRow+` [data-testid="buyer-phone"]`, "href"); got != "tel:+15550100" {
		t.Errorf("phone link = %q", got)
	}
	// An API order names its key and no buyer.
	partner, _ := cb.issueKey("partner", db.RoleCustomer, db.PlanEnterprise, 1000, 100000)
	var apiOrder db.Order
	cb.apiJSON(http.MethodPost, "/api/store/orders", partner, `{"petId": `+strconv.FormatInt(cb.pet("Max").ID, 10)+`, "quantity": 1}`, 201, &apiOrder)
	apiRow := `#order-` + strconv.FormatInt(apiOrder.ID, 10)
	cb.waitText(apiRow+` [data-testid="order-buyer"]`, "API · partner")
	cb.waitText(apiRow+` [data-testid="order-total"]`, "€560.00")
	if n := read(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll(`+q(apiRow+` a[href^="mailto:"]`)+`).length`)); n != 0 {
		t.Errorf("the API order has %d email links", n)
	}
	screenshot(t, ctx, "orders")
	// Orders placed moments apart all arrive: an event that comes while the
	// table swaps in the last refresh is not lost.
	luna, plenty := cb.pet("Luna"), int64(20)
	if _, err := ts.Store.SetInventory(bg, luna.ID, db.InventoryUpdate{Quantity: &plenty}); err != nil {
		t.Fatal(err)
	}
	var burst []int64
	for i := 0; i < 6; i++ {
		var o db.Order
		cb.apiJSON(http.MethodPost, "/api/store/orders", partner, `{"petId": `+strconv.FormatInt(luna.ID, 10)+`, "quantity": 1}`, 201, &o)
		burst = append(burst, o.ID)
		time.Sleep(time.Duration(5+3*i) * time.Millisecond)
	}
	for _, id := range burst {
		cb.waitJS(`!!document.querySelector(` + q(`#order-`+strconv.FormatInt(id, 10)) + `)`)
	}
	cb.wantSamePage()
	for _, id := range burst {
		cb.api(http.MethodDelete, "/api/store/orders/"+strconv.FormatInt(id, 10), partner, "", http.StatusNoContent)
	}
	// Dashboard: today's revenue and the open value; a cancellation
	// elsewhere (the API) updates both without a reload.
	cb.navigate(chromedp.Navigate(ts.URL + "/staff"))
	cb.waitLive()
	cb.waitText(`[data-testid="revenue-today"] .value`, "€1,259.98")
	cb.waitText(`[data-testid="open-value"] .value`, "€1,259.98")
	screenshot(t, ctx, "dashboard")
	cb.markPage()
	cb.api(http.MethodDelete, "/api/store/orders/"+strconv.FormatInt(apiOrder.ID, 10), partner, "", http.StatusNoContent)
	cb.waitText(`[data-testid="revenue-today"] .value`, "€699.98")
	cb.waitText(`[data-testid="open-value"] .value`, "€699.98")
	cb.wantSamePage()
	screenshot(t, ctx, "dashboard-after-cancel")

	// On a 360 px screen the tables are cards that fit their frames
	// (.table-wrap, issue 29: they scrolled sideways inside them before);
	// the pages themselves do not scroll sideways.
	browse(t, ctx, chromedp.EmulateViewport(360, 800))
	cb.navigate(chromedp.Reload())
	cb.waitText(`[data-testid="revenue-today"] .value`, "€699.98")
	cb.wantNoSidewaysScroll()
	screenshot(t, ctx, "dashboard-narrow")
	browse(t, ctx, chromedp.Click(chromedp.CSS(`[data-testid="menu-toggle"]`))) // the navigation folds at 360 px
	cb.navigate(chromedp.Click(chromedp.CSS(`[data-testid="nav-orders"]`)))
	cb.waitText(shopRow+` [data-testid="buyer-name"]`, "Grace Hopper")
	if !read(t, ctx, chromedp.Evaluate[bool](`(() => { const w = document.querySelector('[data-testid="orders"]').closest(".table-wrap");
		return !!w && w.scrollWidth <= w.clientWidth && w.getBoundingClientRect().right <= window.innerWidth; })()`)) {
		t.Errorf("on a 360 px screen the orders table is wider than its .table-wrap")
	}
	cb.wantNoSidewaysScroll()
	screenshot(t, ctx, "orders-narrow")
	browse(t, ctx, chromedp.ResetViewport())
	cb.wantQuietConsole()
}

// wantNoSidewaysScroll fails when the page is wider than the window.
func (cb *consoleBrowser) wantNoSidewaysScroll() {
	cb.t.Helper()
	if w := read(cb.t, cb.ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth - window.innerWidth`)); w > 0 {
		cb.t.Errorf("the page is %d px wider than the window", w)
	}
}

// value is an attribute or property (value, href, max) of the first
// element matching css.
func (cb *consoleBrowser) value(css, prop string) string {
	cb.t.Helper()
	return read(cb.t, cb.ctx, chromedp.Evaluate[string](`(() => { const e = document.querySelector(`+q(css)+`);
		return e ? String(`+q(prop)+` in e && `+q(prop)+` !== "href" ? e[`+q(prop)+`] : e.getAttribute(`+q(prop)+`) ?? "") : "<none>"; })()`))
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}
