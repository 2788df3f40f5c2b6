package browsertest

import (
	"net/http"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"golang.org/x/net/html"
)

// Page is an answer with its HTML parsed.
type Page struct {
	T      testing.TB
	Status int
	Header http.Header
	Body   string
	Doc    *goquery.Document
}

// WantStatus fails the test unless the answer has that status.
func (p *Page) WantStatus(status int) *Page {
	p.T.Helper()
	if p.Status != status {
		p.T.Fatalf("status = %d, want %d; body:\n%s", p.Status, status, p.Body)
	}
	return p
}

// WantRedirect fails unless the answer redirects (303) to location (any
// location when it is "").
func (p *Page) WantRedirect(location string) *Page {
	p.T.Helper()
	p.WantStatus(http.StatusSeeOther)
	if got := p.Header.Get("Location"); location != "" && got != location {
		p.T.Fatalf("Location = %q, want %q", got, location)
	}
	return p
}

// Find selects by CSS.
func (p *Page) Find(sel string) *goquery.Selection { return p.Doc.Find(sel) }

// ID selects the elements with that data-testid.
func (p *Page) ID(testid string) *goquery.Selection {
	return p.Doc.Find(`[data-testid="` + testid + `"]`)
}

// Texts is the text of each element with that data-testid, spaces
// collapsed.
func (p *Page) Texts(testid string) []string {
	var out []string
	p.ID(testid).Each(func(_ int, s *goquery.Selection) {
		out = append(out, strings.Join(strings.Fields(s.Text()), " "))
	})
	return out
}

// Text is Texts joined by " | ": "" when there is no such element.
func (p *Page) Text(testid string) string { return strings.Join(p.Texts(testid), " | ") }

// WantText fails unless the data-testid element's text (Text of the
// package) contains want.
func (p *Page) WantText(testid, want string) {
	p.T.Helper()
	s := p.ID(testid)
	if s.Length() == 0 {
		p.T.Fatalf("no [data-testid=%q] in:\n%s", testid, p.Body)
	}
	if got := Text(s); !strings.Contains(got, want) {
		p.T.Fatalf("[data-testid=%q] = %q, want it to contain %q", testid, got, want)
	}
}

// IsFullPage reports whether the answer is a whole document.
func (p *Page) IsFullPage() bool {
	return strings.Contains(p.Body, "<!doctype html>") || strings.Contains(p.Body, "<!DOCTYPE html>")
}

// Text is the text of a selection, its text nodes joined by spaces (the
// generated HTML has no whitespace between cells) and spaces collapsed.
func Text(s *goquery.Selection) string {
	var parts []string
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			parts = append(parts, n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	for _, n := range s.Nodes {
		walk(n)
	}
	return strings.Join(strings.Fields(strings.Join(parts, " ")), " ")
}
