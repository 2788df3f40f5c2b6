package main

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"petstore/db"
)

// The staff console on a phone, from the keyboard and in dark mode
// (issue 15).

// TestConsoleBrowserSpaceOnButtonLinks: Space presses the console's links
// styled as buttons, and opens a <summary role="button"> exactly once
// (natively; a second activation would close it again).
func TestConsoleBrowserSpaceOnButtonLinks(t *testing.T) {
	t.Parallel()
	ts := startServer(t)
	ctx := newBrowser(t, true)
	cb := &consoleBrowser{t: t, ctx: ctx, ts: ts}
	_, key := cb.issueKey("Space partner", db.RoleCustomer, db.PlanFree, 0, 0)
	cb.signIn()

	cb.navigate(chromedp.Navigate(ts.URL + "/staff/catalog"))
	cb.waitJS(`document.readyState === "complete" && !!window.htmx`)
	browse(t, ctx, chromedp.SendKeys(chromedp.CSS(`[data-testid="new-pet"]`), " "))
	cb.waitJS(`location.pathname === "/staff/pets/new"`)

	cb.navigate(chromedp.Navigate(ts.URL + "/staff/keys"))
	cb.waitJS(`document.readyState === "complete" && !!window.htmx`)
	summary := `#key-` + fmtID(key.ID) + ` summary[role="button"]`
	browse(t, ctx, chromedp.SendKeys(chromedp.CSS(summary), " "))
	cb.waitJS(`document.querySelector(` + q(summary) + `).parentElement.open === true`)
	cb.waitText(`#key-`+fmtID(key.ID)+` [data-testid="revoke-key-confirm"]`, "Revoke key")
}

// TestConsoleBrowserNarrow: every console page fits a 360 px wide screen
// without sideways scrolling of the page, and no control of it (link,
// button, field) starts or ends past the screen's edges, inside a
// scrolling table or not: tables become cards. The inventory's quantity
// field and Save button can be reached and used.
func TestConsoleBrowserNarrow(t *testing.T) {
	t.Parallel()
	ts := startServer(t)
	ctx := newBrowser(t, true)
	cb := &consoleBrowser{t: t, ctx: ctx, ts: ts}
	customer, key := cb.issueKey("Narrow partner with a long name", db.RoleCustomer, db.PlanEnterprise, 1000, 100000)
	pet := cb.pet("Bella")
	cb.api(http.MethodPost, "/api/store/orders", customer, `{"petId": `+fmtID(pet.ID)+`, "quantity": 1}`, 201)
	cb.signIn()

	browse(t, ctx, chromedp.EmulateViewport(360, 740))
	for _, path := range []string{
		"/staff", "/staff/inventory", "/staff/orders", "/staff/catalog", "/staff/keys", "/staff/usage",
		"/staff/keys/" + fmtID(key.ID), "/staff/pets/new", "/staff/pets/" + fmtID(pet.ID) + "/edit",
		"/staff/categories/new", "/staff/categories/" + fmtID(pet.CategoryID) + "/edit",
	} {
		cb.navigate(chromedp.Navigate(ts.URL + path))
		cb.wantFits(path, 360)
		cb.wantControlsOnScreen(path, 360)
		if got := read(t, ctx, chromedp.Evaluate[int](`[...document.querySelectorAll("main table")].filter(t => !t.closest(".table-wrap")).length`)); got != 0 {
			t.Errorf("%s: %d tables outside a .table-wrap (they would widen the page)", path, got)
		}
		name := strings.Trim(strings.NewReplacer("/staff", "", "/", "-").Replace(path), "-")
		if name == "" {
			name = "dashboard"
		}
		screenshot(t, ctx, name+"-360px")
		if name == "dashboard" || name == "inventory" || name == "orders" || name == "keys" {
			// The README's pictures of the console on a phone
			// (testdata/screenshots-readme/) are copies of these.
			viewScreenshot(t, ctx, name+"-360x740-view")
		}
	}

	// The inventory row's field and button scroll into view inside the
	// table's wrapper, without moving the page, and work there.
	cb.navigate(chromedp.Navigate(ts.URL + "/staff/inventory"))
	row := `#inv-` + fmtID(pet.ID)
	for _, css := range []string{row + ` [data-testid="quantity"]`, row + ` [data-testid="save-quantity"]`} {
		got := read(t, ctx, chromedp.Evaluate[string](`(() => {
			const el = document.querySelector(`+q(css)+`);
			el.scrollIntoView({block: "center", inline: "center"});
			const r = el.getBoundingClientRect(), wrap = el.closest(".table-wrap").getBoundingClientRect();
			const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
			const problems = [];
			if (r.left < wrap.left - 0.5 || r.right > wrap.right + 0.5) problems.push("outside its .table-wrap");
			if (r.left < 0 || r.right > 360) problems.push("outside the screen");
			if (r.width < 40) problems.push("only " + r.width + " px wide");
			if (!hit || !(hit === el || el.contains(hit))) problems.push("covered by " + (hit ? hit.outerHTML.slice(0, 80) : "nothing"));
			if (window.scrollX !== 0) problems.push("the page scrolled sideways");
			return problems.join("; ");
		})()`))
		if got != "" {
			t.Errorf("%s: %s", css, got)
		}
	}
	cb.setField(row+` [data-testid="quantity"]`, "5")
	browse(t, ctx, chromedp.Click(chromedp.CSS(row+` [data-testid="save-quantity"]`)))
	cb.waitJS(`!!document.querySelector(` + q(row+` [data-testid="row-saved"]`) + `)`)
	if got := cb.stock(pet.ID); got != 5 {
		t.Errorf("stock = %d after Save at 360 px, want 5", got)
	}
	screenshot(t, ctx, "inventory-saved-360px")
}

// TestConsoleBrowserSidebarContrast: every text of the console's sidebar
// (the top bar on narrow screens) reaches WCAG AA's 4.5:1 against its
// background, in the light and the dark colour scheme.
func TestConsoleBrowserSidebarContrast(t *testing.T) {
	t.Parallel()
	ts := startServer(t)
	ctx := newBrowser(t, true)
	cb := &consoleBrowser{t: t, ctx: ctx, ts: ts}
	cb.signIn()

	for _, scheme := range []string{"light", "dark"} {
		for _, width := range []int64{1280, 360} {
			browse(t, ctx, chromedp.EmulateViewport(width, 800), chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
				_, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
					Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
				})
				return err
			}))
			cb.navigate(chromedp.Navigate(ts.URL + "/staff/inventory"))
			// At 360 px the navigation folds behind the Menu button: open it.
			browse(t, ctx, chromedp.Evaluate[chromedp.Void](`document.querySelector(".side.folding:not(.open) [data-testid=menu-toggle]")?.click()`))
			texts := read(t, ctx, chromedp.Evaluate[[]sidebarText](sidebarTextsJS))
			if len(texts) < 8 {
				t.Fatalf("%s, %d px: only %d sidebar texts: %+v", scheme, width, len(texts), texts)
			}
			for _, x := range texts {
				ratio, err := contrast(x.Color, x.Background)
				if err != nil {
					t.Fatalf("%s, %d px, %q: %v", scheme, width, x.Text, err)
				}
				t.Logf("%s, %d px: %-22q %s on %s = %.2f:1", scheme, width, x.Text, x.Color, x.Background, ratio)
				if ratio < 4.5 {
					t.Errorf("%s, %d px: %q is %s on %s, %.2f:1, under 4.5:1", scheme, width, x.Text, x.Color, x.Background, ratio)
				}
			}
			screenshot(t, ctx, fmt.Sprintf("sidebar-%s-%dpx", scheme, width))
		}
	}
}

// signIn creates a staff user and signs in with the form.
func (cb *consoleBrowser) signIn() {
	cb.t.Helper()
	if _, err := createStaff(context.Background(), cb.ts.Store, "alice", "a long staff password"); err != nil {
		cb.t.Fatal(err)
	}
	cb.navigate(chromedp.Navigate(cb.ts.URL + "/staff/login"))
	cb.navigate(chromedp.SendKeys(chromedp.ID("username"), "alice"),
		chromedp.SendKeys(chromedp.ID("password"), "a long staff password"),
		chromedp.Click(chromedp.CSS(`[data-testid="login-submit"]`)))
	cb.waitJS(`location.pathname === "/staff"`)
}

// wantFits fails the test when the page is wider than width, naming the
// elements that stick out (outside a .table-wrap, which scrolls).
func (cb *consoleBrowser) wantFits(page string, width int) {
	cb.t.Helper()
	type fit struct {
		ScrollWidth int      `json:"scrollWidth"`
		Offenders   []string `json:"offenders"`
	}
	res := read(cb.t, cb.ctx, chromedp.Evaluate[fit](`(() => {
		const out = [];
		for (const el of document.querySelectorAll("body *")) {
			// A .table-wrap scrolls what it holds, but not what is
			// positioned against an ancestor outside it.
			if (el.parentElement && el.parentElement.closest(".table-wrap") && getComputedStyle(el).position !== "absolute") continue;
			const r = el.getBoundingClientRect();
			if (r.width > 0 && r.right > `+strconv.Itoa(width)+` + 0.5) {
				out.push(el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") +
					(typeof el.className === "string" && el.className.trim() ? "." + el.className.trim().split(/\s+/).join(".") : "") +
					" to " + Math.round(r.right) + " px");
			}
		}
		return {scrollWidth: document.documentElement.scrollWidth, offenders: out.slice(0, 8)};
	})()`))
	if res.ScrollWidth > width {
		cb.t.Errorf("%s: the page is %d px wide at %d px; sticking out: %s", page, res.ScrollWidth, width, strings.Join(res.Offenders, ", "))
	}
}

// wantControlsOnScreen fails the test when a visible control of the page
// (a link, button, field or summary) lies partly or wholly left of the
// screen or past its width, as the page loaded (scrolled to the top and
// to the left, every scroller too), naming the first few.
func (cb *consoleBrowser) wantControlsOnScreen(page string, width int) {
	cb.t.Helper()
	off := read(cb.t, cb.ctx, chromedp.Evaluate[[]string](`(() => {
		const out = [];
		for (const el of document.querySelectorAll("a[href], button, input:not([type=hidden]), select, textarea, summary")) {
			const r = el.getBoundingClientRect();
			if (!el.getClientRects().length || r.width === 0 || el.closest(".sr-only, .skip-link, [hidden]")) continue;
			if (r.left < -0.5 || r.right > `+strconv.Itoa(width)+` + 0.5) {
				out.push(el.tagName.toLowerCase() + (el.dataset.testid ? "[" + el.dataset.testid + "]" : "") + " “" +
					(el.textContent || el.value || "").trim().replace(/\s+/g, " ").slice(0, 30) + "” at " + Math.round(r.left) + "–" + Math.round(r.right) + " px");
			}
		}
		return out.slice(0, 6);
	})()`))
	if len(off) > 0 {
		cb.t.Errorf("%s at %d px: controls past the screen's edge: %s", page, width, strings.Join(off, ", "))
	}
}

// sidebarText is one element of the sidebar with text of its own.
type sidebarText struct {
	Text       string `json:"text"`
	Color      string `json:"color"`
	Background string `json:"background"`
}

// sidebarTextsJS lists the sidebar's visible texts with their colour and
// the background behind them: the nearest background colour up to .side,
// else the sidebar's own, which on wide screens .shell paints as a
// gradient (Pico's --pico-card-sectioning-background-color).
const sidebarTextsJS = `(() => {
	const side = document.querySelector(".side");
	const probe = document.createElement("span");
	probe.style.color = "var(--pico-card-sectioning-background-color)";
	side.appendChild(probe);
	const sideBg = getComputedStyle(probe).color;
	probe.remove();
	const transparent = c => c === "transparent" || /rgba\(.*,\s*0\)$/.test(c);
	const out = [];
	for (const el of side.querySelectorAll("*")) {
		const own = [...el.childNodes].filter(n => n.nodeType === Node.TEXT_NODE).map(n => n.textContent).join("").trim();
		if (!own || el.closest(".sr-only") || !el.getClientRects().length) continue;
		let bg = null;
		for (let e = el; e && !bg; e = e === side ? null : e.parentElement) {
			const c = getComputedStyle(e).backgroundColor;
			if (!transparent(c)) bg = c;
		}
		out.push({text: own, color: getComputedStyle(el).color, background: bg || sideBg});
	}
	return out;
})()`

// contrast is WCAG 2's contrast ratio of a CSS rgb()/rgba() text colour on
// an opaque background; a translucent text colour is blended onto it first.
func contrast(fg, bg string) (float64, error) {
	f, err := parseRGB(fg)
	if err != nil {
		return 0, err
	}
	b, err := parseRGB(bg)
	if err != nil {
		return 0, err
	}
	if b[3] != 1 {
		return 0, fmt.Errorf("background %s is not opaque", bg)
	}
	for i := range 3 {
		f[i] = f[i]*f[3] + b[i]*(1-f[3])
	}
	l1, l2 := luminance(f), luminance(b)
	return (math.Max(l1, l2) + 0.05) / (math.Min(l1, l2) + 0.05), nil
}

// parseRGB reads "rgb(r, g, b)" or "rgba(r, g, b, a)", as getComputedStyle
// gives colours.
func parseRGB(s string) ([4]float64, error) {
	c := [4]float64{0, 0, 0, 1}
	inner, ok := strings.CutPrefix(s, "rgba(")
	if !ok {
		inner, ok = strings.CutPrefix(s, "rgb(")
	}
	inner, ok2 := strings.CutSuffix(inner, ")")
	parts := strings.Split(inner, ",")
	if !ok || !ok2 || len(parts) < 3 || len(parts) > 4 {
		return c, fmt.Errorf("colour %q is not rgb()", s)
	}
	for i, p := range parts {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil {
			return c, fmt.Errorf("colour %q: %v", s, err)
		}
		c[i] = v
	}
	return c, nil
}

// luminance is WCAG 2's relative luminance of an sRGB colour (0-255).
func luminance(c [4]float64) float64 {
	var l [3]float64
	for i := range 3 {
		v := c[i] / 255
		if v <= 0.04045 {
			l[i] = v / 12.92
		} else {
			l[i] = math.Pow((v+0.055)/1.055, 2.4)
		}
	}
	return 0.2126*l[0] + 0.7152*l[1] + 0.0722*l[2]
}
