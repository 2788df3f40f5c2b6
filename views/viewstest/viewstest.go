// Package viewstest renders templ components for the views' tests and
// parses them for goquery, as the templ docs' testing guide does.
package viewstest

import (
	"bytes"
	"context"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/a-h/templ"
)

// Parse renders c and parses the HTML, failing the test on an error.
func Parse(t testing.TB, c templ.Component) *goquery.Document {
	t.Helper()
	var buf bytes.Buffer
	if err := c.Render(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	doc, err := goquery.NewDocumentFromReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}
