package views

import (
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/a-h/templ"

	"petstore/static"
	"petstore/views/viewstest"
)

// TestErrorPageIsNoAlert: a full error page is a page, not an alert (a
// screen reader would read all of it as one interruption); the fragment
// htmx swaps into a page the user is reading is an alert. Each links its
// area's one stylesheet.
func TestErrorPageIsNoAlert(t *testing.T) {
	parse := func(c templ.Component) *goquery.Document { return viewstest.Parse(t, c) }
	for _, console := range []bool{false, true} {
		v := ErrorView{Status: 404, Message: "There is no page at this address.", Console: console}
		page := parse(ErrorPage(v))
		if n := page.Find(`[role="alert"]`).Length(); n != 0 {
			t.Errorf("console %v: the page has %d alerts, want none", console, n)
		}
		if page.Find("h1").Text() != "Not found" || page.Find(`[data-testid="error"]`).Length() != 1 {
			t.Errorf("console %v: heading %q", console, page.Find("h1").Text())
		}
		want := static.URL(static.ShopCSS)
		if console {
			want = static.URL(static.ConsoleCSS)
		}
		if links := page.Find(`link[rel="stylesheet"]`); links.Length() != 1 || links.AttrOr("href", "") != want {
			t.Errorf("console %v: stylesheets %d (%s), want %s", console, links.Length(), links.AttrOr("href", ""), want)
		}
		if frag := parse(ErrorFragment(v)); frag.Find(`[data-testid="error"][role="alert"]`).Length() != 1 {
			t.Errorf("console %v: the fragment is not an alert", console)
		}
	}
}
