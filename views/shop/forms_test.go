package shop

import (
	"testing"

	"github.com/PuerkitoBio/goquery"

	"petstore/db"
	"petstore/static"
	"petstore/views/viewstest"
)

// TestCartFormsSkipValidation: every form of the cart that sends fields
// of another form along (hx-include: the checkout's details, required
// but empty until checkout) is novalidate. htmx validates each field a
// request sends unless the triggering form is novalidate, and a refused
// validation stops the request without a word: Remove did nothing.
func TestCartFormsSkipValidation(t *testing.T) {
	v := CartView{
		Chrome:   Chrome{CSRF: "token", CartCount: 3},
		Currency: "EUR",
		Lines: []CartLine{
			{PetID: 1, Quantity: 2, Pet: &db.Pet{ID: 1, Name: "Rex", CategoryName: "Dogs", Status: db.StatusAvailable, Stock: 5}},
			{PetID: 2, Quantity: 1},
		},
	}
	doc := viewstest.Parse(t, CartPage(v))
	including := doc.Find("form[hx-include]")
	if including.Length() != 4 {
		t.Fatalf("%d forms include other fields, want Update and Remove of both lines", including.Length())
	}
	including.Each(func(_ int, f *goquery.Selection) {
		if _, ok := f.Attr("novalidate"); !ok {
			t.Errorf("form %s includes %s without novalidate", f.AttrOr("hx-post", "?"), f.AttrOr("hx-include", ""))
		}
	})
	if doc.Find("#checkout-details input[required]").Length() == 0 {
		t.Error("the details have no required field: the test checks nothing")
	}
	if doc.Find(`[data-testid="line-remove"]`).Length() != 2 || doc.Find("#cart-status").Length() != 1 {
		t.Error("no Remove buttons, or no #cart-status for focus to go to after one")
	}
	links := doc.Find(`link[rel="stylesheet"]`)
	if links.Length() != 1 || links.AttrOr("href", "") != static.URL(static.ShopCSS) {
		t.Errorf("the shop links %d stylesheets, want its one bundle", links.Length())
	}
}
