package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"petstore/db"
)

// TestConsoleBrowser drives the staff console in chromium: sign in, edit a
// quantity (and see the 422 in the row), watch an order placed through
// the API appear without a reload and complete it, issue a key, watch its
// usage move and its ban come and go, lift the ban, revoke the key. Every
// page gets a screenshot, and the page may log no error (a CSP violation
// included).
func TestConsoleBrowser(t *testing.T) {
	t.Parallel()
	ts := startServer(t)
	ctx := newBrowser(t, true)
	cb := &consoleBrowser{t: t, ctx: ctx, ts: ts}
	cb.watchConsole()
	bg := context.Background()
	if _, err := createStaff(bg, ts.Store, "alice", "a long staff password"); err != nil {
		t.Fatal(err)
	}
	customer, customerKey := cb.issueKey("browser test", db.RoleCustomer, db.PlanEnterprise, 1000, 100000)

	// Sign in: the console sends us to the form and back.
	cb.navigate(chromedp.Navigate(ts.URL + "/staff/inventory"))
	cb.waitJS(`location.pathname === "/staff/login"`)
	screenshot(t, ctx, "login")
	cb.navigate(chromedp.SendKeys(chromedp.ID("username"), "alice"),
		chromedp.SendKeys(chromedp.ID("password"), "a long staff password"),
		chromedp.Click(chromedp.CSS(`[data-testid="login-submit"]`)))
	cb.waitJS(`location.pathname === "/staff/inventory"`)

	// Inventory: edit a quantity inline (htmx swaps the row).
	cb.waitLive()
	pet := cb.pet("Bella")
	row := `#inv-` + strconv.FormatInt(pet.ID, 10)
	cb.setField(row+` [data-testid="quantity"]`, "7")
	browse(t, ctx, chromedp.Click(chromedp.CSS(row+` [data-testid="save-quantity"]`)))
	cb.waitJS(`!!document.querySelector(` + q(row+` [data-testid="row-saved"]`) + `)`)
	if got := cb.stock(pet.ID); got != 7 {
		t.Fatalf("stock = %d, want 7", got)
	}
	// An invalid quantity comes back as the row with the API's message.
	cb.setField(row+` [data-testid="quantity"]`, "-3")
	browse(t, ctx, chromedp.Click(chromedp.CSS(row+` [data-testid="save-quantity"]`)))
	cb.waitText(row+` .field-error`, "quantity must be between 0 and 1000000")
	screenshot(t, ctx, "inventory-error")
	if got := cb.stock(pet.ID); got != 7 {
		t.Fatalf("stock = %d after an invalid edit, want 7", got)
	}
	// A change made elsewhere (the API) updates the row live.
	cb.markPage()
	cb.api(http.MethodPut, "/api/store/inventory/"+strconv.FormatInt(cb.pet("Max").ID, 10), customerOrStaff(cb), `{"quantity": 42}`, 200)
	cb.waitJS(`document.querySelector(` + q(`#inv-`+strconv.FormatInt(cb.pet("Max").ID, 10)) + `)?.dataset.quantity === "42"`)
	cb.wantSamePage()
	screenshot(t, ctx, "inventory")

	// Filters apply on change.
	cb.navigate(chromedp.Evaluate[chromedp.Void](`(() => { const s = document.querySelector("#f-status");
		s.value = "sold"; s.dispatchEvent(new Event("change", {bubbles: true})); })()`))
	cb.waitJS(`location.search.includes("status=sold") && document.querySelectorAll('[data-testid="inventory-row"]').length === 3`)

	// Dashboard.
	cb.navigate(chromedp.Click(chromedp.CSS(`[data-testid="nav-dashboard"]`)))
	cb.waitJS(`!!document.querySelector('[data-testid="count-available"]')`)
	cb.waitLive()
	screenshot(t, ctx, "dashboard")
	// The counts follow the event stream: an order placed through the API
	// shows up as an open order without a reload.
	cb.markPage()
	openBefore, _ := strconv.Atoi(cb.text(`[data-testid="count-open-orders"] .value`))
	cb.api(http.MethodPost, "/api/store/orders", customer, `{"petId": `+strconv.FormatInt(cb.pet("Luna").ID, 10)+`, "quantity": 1}`, 201)
	cb.waitText(`[data-testid="count-open-orders"] .value`, strconv.Itoa(openBefore+1))
	cb.waitText(`[data-testid="recent-orders"]`, "Luna")
	cb.wantSamePage()

	// Orders: an order placed through the API appears without a reload…
	cb.navigate(chromedp.Click(chromedp.CSS(`[data-testid="nav-orders"]`)))
	cb.waitLive()
	cb.markPage()
	var order db.Order
	cb.apiJSON(http.MethodPost, "/api/store/orders", customer, `{"petId": `+strconv.FormatInt(pet.ID, 10)+`, "quantity": 2}`, 201, &order)
	orderRow := `#order-` + strconv.FormatInt(order.ID, 10)
	cb.waitJS(`!!document.querySelector(` + q(orderRow) + `)`)
	cb.wantSamePage()
	screenshot(t, ctx, "orders-live")
	// …and completes with its button.
	browse(t, ctx, chromedp.Click(chromedp.CSS(orderRow+` [data-testid="complete-order"]`)))
	cb.waitText(orderRow+` [data-testid="order-state"]`, "Complete")
	if o, err := ts.Store.FindOrderByID(bg, order.ID, nil); err != nil || !o.Complete {
		t.Fatalf("order = %+v, %v; want complete", o, err)
	}
	screenshot(t, ctx, "orders")

	// API keys: issue one on a tiny enterprise limit; the plain key shows once.
	cb.navigate(chromedp.Click(chromedp.CSS(`[data-testid="nav-keys"]`)))
	browse(t, ctx, chromedp.Click(chromedp.CSS(`[data-testid="issue-toggle"]`)),
		chromedp.SendKeys(chromedp.CSS(`#key-name`), "Tiny partner"))
	cb.setField(`#key-plan`, "enterprise")
	browse(t, ctx, chromedp.WaitVisible(chromedp.CSS(`#key-per-minute`)))
	cb.setField(`#key-per-minute`, "2")
	cb.setField(`#key-per-day`, "500")
	screenshot(t, ctx, "keys-issue-form")
	cb.navigate(chromedp.Click(chromedp.CSS(`[data-testid="issue-key"]`)))
	plain := read(t, ctx, chromedp.Value(chromedp.CSS(`[data-testid="plain-key"]`)))
	if !strings.HasPrefix(plain, db.KeyPrefix) {
		t.Fatalf("plain key = %q", plain)
	}
	k, err := ts.Store.Authenticate(bg, plain)
	if err != nil || k.PerMinute != 2 || k.PerDay != 500 {
		t.Fatalf("issued key = %+v, %v", k, err)
	}
	browse(t, ctx, chromedp.Click(chromedp.CSS(`[data-testid="copy-key"]`)))
	cb.waitText(`[data-testid="copy-key"]`, "Copied")
	screenshot(t, ctx, "keys-issued")

	// Usage: the key's minute moves after API calls (the panel polls).
	cb.navigate(chromedp.Click(chromedp.CSS(`[data-testid="nav-usage"]`)))
	usageRow := `[data-testid="usage-row"][data-key-id="` + strconv.FormatInt(k.ID, 10) + `"]`
	cb.waitText(usageRow+` [data-testid="minute-use"]`, "0 / 2")
	cb.markPage() // the server's clock is pinned: these calls share a minute
	cb.api(http.MethodGet, "/api/pets", plain, "", 200)
	cb.api(http.MethodGet, "/api/pets", plain, "", 200)
	cb.waitText(usageRow+` [data-testid="minute-use"]`, "2 / 2")
	cb.wantSamePage()
	screenshot(t, ctx, "usage")
	// A 429 and 20 more requests in the same minute (PETSTORE_BAN_STRIKES,
	// default 20) start a ban; the page shows it, with the time left.
	cb.api(http.MethodGet, "/api/pets", plain, "", 429)
	for i := 1; i < ts.Config.BanStrikes; i++ {
		cb.api(http.MethodGet, "/api/pets", plain, "", 429)
	}
	cb.api(http.MethodGet, "/api/pets", plain, "", 403)
	cb.waitText(usageRow+` [data-testid="ban-state"]`, "banned")
	cb.waitText(usageRow+` [data-testid="ban-left"]`, "min left")
	cb.waitText(usageRow+` [data-testid="limited-429"]`, strconv.Itoa(ts.Config.BanStrikes))
	screenshot(t, ctx, "usage-banned")
	// Lift it.
	browse(t, ctx, chromedp.Click(chromedp.CSS(usageRow+` [data-testid="lift-ban"]`)))
	cb.waitText(usageRow+` [data-testid="ban-state"]`, "none")
	if ban, _, _ := ts.Store.ActiveBan(bg, k.Subject(), ts.Clock.Now()); !ban.IsZero() {
		t.Fatalf("ban still stored until %v", ban)
	}
	cb.api(http.MethodGet, "/api/rate-limit", plain, "", 200)

	// Revoke the key: the row says so and the API refuses it.
	cb.navigate(chromedp.Click(chromedp.CSS(`[data-testid="nav-keys"]`)))
	keyRow := `#key-` + strconv.FormatInt(k.ID, 10)
	browse(t, ctx, chromedp.Click(chromedp.CSS(keyRow+` [data-testid="revoke-key"]`)),
		chromedp.Click(chromedp.CSS(keyRow+` [data-testid="revoke-key-confirm"]`)))
	cb.waitText(keyRow+` [data-testid="key-state"]`, "revoked")
	cb.api(http.MethodGet, "/api/pets", plain, "", 401)
	screenshot(t, ctx, "keys")

	// A key's edit page.
	cb.navigate(chromedp.Navigate(ts.URL + "/staff/keys/" + strconv.FormatInt(customerKey.ID, 10)))
	cb.waitText(`h1`, "Edit key")
	screenshot(t, ctx, "key-edit")

	// Catalog, the forms with their validation messages, and a narrow screen.
	cb.navigate(chromedp.Click(chromedp.CSS(`[data-testid="nav-catalog"]`)))
	screenshot(t, ctx, "catalog")
	cb.navigate(chromedp.Click(chromedp.CSS(`[data-testid="new-pet"]`)))
	cb.navigate(chromedp.Click(chromedp.CSS(`[data-testid="save-pet"]`)))
	cb.waitText(`#name-error`, "is required")
	screenshot(t, ctx, "pet-form-invalid")
	cb.navigate(chromedp.Navigate(ts.URL + "/staff/categories/new"))
	screenshot(t, ctx, "category-form")
	browse(t, ctx, chromedp.EmulateViewport(390, 844))
	cb.navigate(chromedp.Navigate(ts.URL + "/staff"))
	cb.waitLive()
	screenshot(t, ctx, "dashboard-narrow")
	cb.navigate(chromedp.Navigate(ts.URL + "/staff/usage"))
	screenshot(t, ctx, "usage-narrow")

	// Sign out.
	browse(t, ctx, chromedp.EmulateViewport(1280, 900)) // a desktop again: at the headless default (800 px) the navigation folds behind its menu button
	cb.navigate(chromedp.Navigate(ts.URL + "/staff"))
	cb.navigate(chromedp.Click(chromedp.CSS(`[data-testid="logout"]`)))
	cb.waitText(`[data-testid="flash"]`, "You are signed out.")
	cb.wantQuietConsole()
}

// customerOrStaff is a staff key for the API calls only staff may make.
func customerOrStaff(cb *consoleBrowser) string {
	cb.t.Helper()
	if cb.staffKey == "" {
		cb.staffKey, _ = cb.issueKey("browser staff", db.RoleStaff, db.PlanEnterprise, 1000, 100000)
	}
	return cb.staffKey
}

// consoleBrowser is the console test's tab and its helpers.
type consoleBrowser struct {
	t        *testing.T
	ctx      context.Context
	ts       *testServer
	staffKey string

	mu     sync.Mutex
	errors []string
}

// q quotes a string for JavaScript.
func q(s string) string { return strconv.Quote(s) }

// watchConsole collects the page's errors: exceptions, CSP violations and
// every error but failed requests (a 422 is an expected answer).
func (cb *consoleBrowser) watchConsole() {
	msgs := chromedp.Console(cb.ctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			bad := m.Type == chromedp.ConsoleException || strings.Contains(m.Text, "Content Security Policy") ||
				(m.Type == chromedp.ConsoleError && m.Source != "network")
			if bad {
				cb.mu.Lock()
				cb.errors = append(cb.errors, string(m.Type)+": "+m.Text+" ("+m.URL+")")
				cb.mu.Unlock()
			}
		}
	}()
}

func (cb *consoleBrowser) wantQuietConsole() {
	cb.t.Helper()
	cb.mu.Lock()
	defer cb.mu.Unlock()
	for _, e := range cb.errors {
		cb.t.Errorf("page logged %s", e)
	}
}

// navigate runs steps that load a new page and waits for it.
func (cb *consoleBrowser) navigate(steps ...chromedp.Action[chromedp.Void]) {
	cb.t.Helper()
	if _, err := chromedp.RunResponse(cb.ctx, steps...); err != nil {
		screenshot(cb.t, cb.ctx, "failure")
		cb.t.Fatalf("navigate: %v", err)
	}
}

// waitJS polls the page until the expression is true (ten seconds).
func (cb *consoleBrowser) waitJS(expr string) {
	cb.t.Helper()
	cb.waitJSWithin(expr, 10*time.Second)
}

// waitJSWithin is waitJS for what the server takes longer to do than to
// draw a page (a queued job's work).
func (cb *consoleBrowser) waitJSWithin(expr string, d time.Duration) {
	cb.t.Helper()
	cb.waitUntil(expr, d, "")
}

// waitUntil is waitJSWithin that, failing, also says what the element
// matching css (if any) shows.
func (cb *consoleBrowser) waitUntil(expr string, d time.Duration, css string) {
	cb.t.Helper()
	deadline := time.Now().Add(d)
	for {
		ok, err := chromedp.Run(cb.ctx, chromedp.Evaluate[bool](expr))
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			screenshot(cb.t, cb.ctx, "failure")
			if css != "" {
				cb.t.Fatalf("waiting for %s: %v; it shows %q", expr, err, cb.text(css))
			}
			cb.t.Fatalf("waiting for %s: %v", expr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitText waits until the first element matching css contains text.
func (cb *consoleBrowser) waitText(css, text string) {
	cb.t.Helper()
	cb.waitUntil(textIncludes(css, text), 10*time.Second, css)
}

// textIncludes is the script that says whether the first element matching
// css contains text.
func textIncludes(css, text string) string {
	return `(document.querySelector(` + q(css) + `)?.textContent || "").replace(/\s+/g, " ").includes(` + q(text) + `)`
}

// text is the trimmed text of the first element matching css.
func (cb *consoleBrowser) text(css string) string {
	cb.t.Helper()
	return read(cb.t, cb.ctx, chromedp.Evaluate[string](`(document.querySelector(`+q(css)+`)?.textContent || "").trim()`))
}

// waitLive waits until the page's event stream is open.
func (cb *consoleBrowser) waitLive() {
	cb.t.Helper()
	cb.waitJS(`document.querySelector('[data-testid="live-status"]')?.dataset.state === "open"`)
}

// markPage tags the document; wantSamePage fails if it was reloaded since.
func (cb *consoleBrowser) markPage() {
	cb.t.Helper()
	browse(cb.t, cb.ctx, chromedp.Evaluate[chromedp.Void](`window.__consoleTestMark = true`))
}

func (cb *consoleBrowser) wantSamePage() {
	cb.t.Helper()
	if !read(cb.t, cb.ctx, chromedp.Evaluate[bool](`window.__consoleTestMark === true`)) {
		cb.t.Fatal("the page was reloaded; the update should have come live")
	}
}

// setField sets an input or select as a user does (input and change events).
func (cb *consoleBrowser) setField(css, value string) {
	cb.t.Helper()
	browse(cb.t, cb.ctx, chromedp.Evaluate[chromedp.Void](`(() => { const f = document.querySelector(`+q(css)+`);
		f.focus(); f.value = `+q(value)+`; f.dispatchEvent(new Event("input", {bubbles: true}));
		f.dispatchEvent(new Event("change", {bubbles: true})); })()`))
}

// pet finds a demo pet by name.
func (cb *consoleBrowser) pet(name string) *db.Pet {
	cb.t.Helper()
	pets, _, err := cb.ts.Store.FindPets(context.Background(), db.PetFilter{Query: name, Page: db.Page{Limit: db.MaxLimit}})
	if err != nil {
		cb.t.Fatal(err)
	}
	for _, p := range pets {
		if p.Name == name {
			return p
		}
	}
	cb.t.Fatalf("no demo pet %q", name)
	return nil
}

func (cb *consoleBrowser) stock(petID int64) int64 {
	cb.t.Helper()
	p, err := cb.ts.Store.FindPetByID(context.Background(), petID)
	if err != nil {
		cb.t.Fatal(err)
	}
	return p.Stock
}

// issueKey makes an API key in the store.
func (cb *consoleBrowser) issueKey(name, role, plan string, perMinute, perDay int64) (string, *db.APIKey) {
	cb.t.Helper()
	in := db.NewAPIKey{Name: &name, Role: &role, Plan: &plan}
	if plan == db.PlanEnterprise {
		in.PerMinute, in.PerDay = &perMinute, &perDay
	}
	k, plain, err := cb.ts.Store.CreateAPIKey(context.Background(), in)
	if err != nil {
		cb.t.Fatal(err)
	}
	return plain, k
}

// api calls the JSON API and checks the status.
func (cb *consoleBrowser) api(method, path, key, body string, want int) {
	cb.t.Helper()
	cb.apiJSON(method, path, key, body, want, nil)
}

func (cb *consoleBrowser) apiJSON(method, path, key, body string, want int, out any) {
	cb.t.Helper()
	req, err := http.NewRequest(method, cb.ts.URL+path, bytes.NewBufferString(body))
	if err != nil {
		cb.t.Fatal(err)
	}
	req.Header.Set("X-API-Key", key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		cb.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	var raw bytes.Buffer
	_, _ = raw.ReadFrom(res.Body)
	if res.StatusCode != want {
		cb.t.Fatalf("%s %s = %d, want %d: %s", method, path, res.StatusCode, want, raw.String())
	}
	if out != nil {
		if err := json.Unmarshal(raw.Bytes(), out); err != nil {
			cb.t.Fatalf("decode %s: %v", raw.String(), err)
		}
	}
}
