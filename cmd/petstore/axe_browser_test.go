package main

import (
	"context"
	_ "embed"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// axe-core, the accessibility engine these tests run inside each page
// (testdata/axe/vendor.sh pins and fetches it). It is embedded here, in a
// test file, so it reaches the test binary only: the product never serves it.
//
//go:embed testdata/axe/axe.min.js
var axeSource string

// axeTags are the rules axe checks: WCAG 2.0 and 2.1, levels A and AA.
const axeTags = `["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]`

// axeView is one way a page is looked at: a viewport width and a colour
// scheme.
type axeView struct {
	Width  int64
	Scheme string
}

// axeViews are the four ways every page is checked: desktop and phone, in
// the light and the dark colour scheme.
var axeViews = []axeView{{1280, "light"}, {1280, "dark"}, {360, "light"}, {360, "dark"}}

// axeFinding is one axe rule a page breaks (a violation), or a contrast
// axe could not compute because the text sits on a gradient (an
// "incomplete" color-contrast result: nobody can then vouch for it).
// Other incomplete results (a select's arrow icon, an empty field) are
// left to axe's own "needs review".
type axeFinding struct {
	Rule    string   `json:"rule"`
	Impact  string   `json:"impact"`
	Help    string   `json:"help"`
	Targets []string `json:"targets"`
	Summary string   `json:"summary"`
}

// axeRunJS runs axe on the document and lists what it found.
const axeRunJS = `axe.run(document, {runOnly: {type: "tag", values: ` + axeTags + `}, resultTypes: ["violations", "incomplete"]})
	.then(r => {
		const gradient = n => n.any.some(c => c.data && c.data.messageKey === "bgGradient");
		const found = r.violations.map(v => ({rule: v.id, v, nodes: v.nodes}));
		for (const v of r.incomplete.filter(i => i.id === "color-contrast")) {
			const nodes = v.nodes.filter(gradient);
			if (nodes.length) found.push({rule: v.id + " (cannot be computed over a gradient)", v, nodes});
		}
		return found.map(f => ({
			rule: f.rule,
			impact: f.v.impact || "",
			help: f.v.help,
			targets: f.nodes.slice(0, 6).map(n => n.target.join(" ")),
			summary: (f.nodes[0].failureSummary || "").replace(/\s+/g, " ").slice(0, 300),
		}));
	})`

// axeSettledJS waits until no CSS transition or animation runs (a colour
// scheme change fades links from one colour to the other, and axe would
// read the colours halfway), at most two seconds.
const axeSettledJS = `new Promise(done => {
	const start = performance.now();
	const check = () => {
		const running = document.getAnimations().some(a => a.playState === "running" && a.effect && a.effect.getComputedTiming().endTime !== Infinity);
		if (!running || performance.now() - start > 2000) done(true); else requestAnimationFrame(check);
	};
	requestAnimationFrame(check);
})`

// wantAxeClean checks the page in the tab in every axeView, 800 px tall
// (the viewport and the colour scheme change in place: the page is not loaded again, so
// a state a form post reached is checked as it is) and reports every
// finding as an error naming the page. It leaves the tab at 1280×900 in
// the light scheme.
func wantAxeClean(t *testing.T, ctx context.Context, page string) {
	t.Helper()
	if !read(t, ctx, chromedp.Evaluate[bool](`typeof window.axe === "object"`)) {
		browse(t, ctx, chromedp.Evaluate[chromedp.Void](axeSource))
	}
	for _, v := range axeViews {
		browse(t, ctx, chromedp.EmulateViewport(v.Width, 800), emulateMedia(v.Scheme, "reduce"),
			chromedp.Evaluate[chromedp.Void](axeSettledJS, chromedp.EvalAwaitPromise))
		found := read(t, ctx, chromedp.Evaluate[[]axeFinding](axeRunJS, chromedp.EvalAwaitPromise))
		for _, f := range found {
			t.Errorf("%s at %d px, %s: %s (%s): %s\n\ton %s\n\t%s", page, v.Width, v.Scheme, f.Rule, f.Impact, f.Help,
				strings.Join(f.Targets, " | "), f.Summary)
		}
		if len(found) > 0 {
			screenshot(t, ctx, fmt.Sprintf("axe-%s-%dpx-%s", strings.NewReplacer("/", "-", " ", "-").Replace(page), v.Width, v.Scheme))
		}
	}
	browse(t, ctx, chromedp.EmulateViewport(1280, 900), emulateMedia("light", ""))
}

// emulateMedia makes the tab prefer the light or the dark colour scheme,
// and reduced motion ("reduce") or what the browser says by default ("").
// axe looks at pages with reduced motion: a scheme change then reaches
// the same colours at once, where with motion every view waited out the
// fades (0.15–0.2 s each), two thirds of an axe walk's time
// (TestAxeBrowserShop alone: 15.6 s, now 5.4 s).
func emulateMedia(scheme, motion string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}, {Name: "prefers-reduced-motion", Value: motion}},
		})
		return err
	})
}
