package shop

import (
	"bytes"
	"context"
	"net/url"
	"strconv"
	"strings"
	"unicode"

	"github.com/a-h/templ"
	"github.com/gofiber/fiber/v2"

	"petstore/db"
	view "petstore/views/shop"
	"petstore/web"
	"petstore/web/browser"
)

// pageSize is how many pets a catalog page (and each "load more") shows.
const pageSize = 12

// Catalog is the catalog: GET /?q=&category=&status=&cursor=. htmx
// gets #results and the result count (out of band) for a filter change,
// or the next cards for "load more" (a request with a cursor); browsers
// without JavaScript get whole pages. The catalog's part of each answer is
// the same for every shopper and is rendered once per catalog version
// (catalogContent); only the frame (cart count, CSRF token, messages) is
// rendered per request.
func (h *Handler) Catalog(c *fiber.Ctx) error {
	f, err := catalogFilter(c)
	if err != nil {
		return err
	}
	page, err := web.ParsePage(c)
	if err != nil {
		return db.Errorf(db.EBadRequest, "This “load more” link is broken. Start again from the catalog.")
	}
	page.Limit = pageSize
	part := catalogWhole
	if browser.Partial(c) {
		part = catalogResults
		if page.AfterID > 0 {
			part = catalogMore
		}
	}
	content, version, err := h.catalogContent(c.UserContext(), part, f, page)
	if err != nil {
		return err
	}
	if part != catalogWhole {
		return web.Render(c, content)
	}
	st, err := h.loadState(c)
	if err != nil {
		return err
	}
	if st.sess.Fresh() {
		return h.newVisitorPage(c, catalogURL(f, page.AfterID), version, content)
	}
	ch, err := h.catalogChrome(st)
	if err != nil {
		return err
	}
	return web.Render(c, view.CatalogPage(ch, content))
}

// catalogChrome is the catalog's frame: the cart count and messages. It
// carries no CSRF token: the catalog has no form to post (its search and
// "load more" are GETs), so browsing writes no token and sets no cookie
// (browser.CSRF).
func (h *Handler) catalogChrome(st *shopState) (view.Chrome, error) {
	flashes, err := shopFlashes.Take(st.sess)
	if err != nil {
		return view.Chrome{}, err
	}
	return view.Chrome{CartCount: st.cart.count(), Active: view.NavCatalog, Flashes: flashes}, nil
}

// taggedPage is a whole page kept with its strong ETag.
type taggedPage struct {
	html []byte
	etag string
}

// newVisitorPage answers a catalog page to a browser with no session (a
// first visit, a crawler, a shopper who never filled a cart): its frame
// holds nothing of the browser's (no cart, no messages, no token), so the
// whole page is the same for every such visitor at one catalog version. It
// is rendered once per version and URL, tagged (a revalidation gets 304),
// and, being tagged, compressed once per coding (web.Compress), which makes
// a first visit about as cheap as a remembered API page (issue 44).
func (h *Handler) newVisitorPage(c *fiber.Ctx, url string, version int64, content templ.Component) error {
	page, ok := h.pages.get(url, version)
	if !ok {
		var buf bytes.Buffer
		if err := view.CatalogPage(view.Chrome{Active: view.NavCatalog}, content).Render(c.UserContext(), &buf); err != nil {
			return err
		}
		page = taggedPage{html: buf.Bytes(), etag: web.BodyTag(buf.Bytes())}
		h.pages.add(url, version, page)
	}
	if web.IfNoneMatch(c, page.etag) {
		return web.NotModified(c, page.etag)
	}
	c.Type("html", "utf-8")
	c.Set(fiber.HeaderETag, page.etag)
	c.Response().SetBody(page.html) // a copy: the kept page is shared
	return nil
}

// The parts of the catalog an answer carries: the whole page's content,
// the results a filter change swaps in (with the count out of band), or
// the cards "load more" appends.
const (
	catalogWhole   = "whole"
	catalogResults = "results"
	catalogMore    = "more"
)

// catalogContent is the catalog's part of an answer, rendered anew only
// when the catalog changed since it was last rendered for the same part
// and filters. The catalog's change counter is read before the query, so
// what is kept may be newer than its version, never older: a change that
// races the render costs one more render, never a stale page.
func (h *Handler) catalogContent(ctx context.Context, part string, f view.CatalogFilter, page db.Page) (templ.Component, int64, error) {
	version, err := h.Store.CatalogVersion(ctx)
	if err != nil {
		return nil, 0, err
	}
	key := part + " " + catalogURL(f, page.AfterID)
	if html, ok := h.catalog.get(key, version); ok {
		return html, version, nil
	}
	pf := db.PetFilter{Query: f.Query, CategoryID: f.CategoryID, Page: page}
	if f.Status != "" {
		pf.Statuses = []string{f.Status}
	}
	// A search no name can match (control characters, bytes that are not
	// UTF-8: a crafted link, not typing) finds nothing (Store.FindPets), and
	// the search box shows each such character as U+FFFD.
	pets, more, err := h.Store.FindPets(ctx, pf)
	if err != nil {
		return nil, 0, err
	}
	v := view.Catalog{Filter: f, Pets: pets, Continued: page.AfterID > 0, FirstURL: catalogURL(f, 0)}
	v.Filter.Query = browser.Printable(f.Query, false)
	if more && len(pets) > 0 {
		v.NextURL = catalogURL(f, pets[len(pets)-1].ID)
	}
	var comp templ.Component
	switch part {
	case catalogMore:
		comp = view.CatalogMore(v)
	case catalogResults:
		comp = templ.Join(view.CatalogResults(v), view.ResultsCountOOB(v))
	default:
		if v.Categories, _, err = h.Store.FindCategories(ctx, db.Page{Limit: db.MaxLimit}); err != nil {
			return nil, 0, err
		}
		comp = view.CatalogContent(v)
	}
	var buf bytes.Buffer
	if err := comp.Render(ctx, &buf); err != nil {
		return nil, 0, err
	}
	html := renderedHTML(buf.Bytes())
	h.catalog.add(key, version, html)
	return html, version, nil
}

// catalogFilter reads the catalog's query. An over-long search is cut to
// the longest name; a category or status that cannot be is a 400. Only
// spaces are trimmed, not control characters (a tab, U+0085), which keep
// a search from matching anything, as in a name.
func catalogFilter(c *fiber.Ctx) (view.CatalogFilter, error) {
	q := strings.TrimFunc(c.Query("q"), func(r rune) bool { return unicode.IsSpace(r) && !unicode.IsControl(r) })
	f := view.CatalogFilter{Query: truncate(q, db.MaxNameLen)}
	if s := c.Query("category"); s != "" {
		id, err := strconv.ParseInt(s, 10, 64)
		if err != nil || id < 1 {
			return f, db.Errorf(db.EBadRequest, "There is no such category. Pick one from the list.")
		}
		f.CategoryID = id
	}
	if s := c.Query("status"); s != "" {
		if !db.ValidStatus(s) {
			return f, db.Errorf(db.EBadRequest, "There is no such availability. Pick one from the list.")
		}
		f.Status = s
	}
	return f, nil
}

// catalogURL is the shareable address of a filtered catalog page, after
// the pet afterID (0: the first page). Empty filters are left out.
func catalogURL(f view.CatalogFilter, afterID int64) string {
	q := url.Values{}
	if f.Query != "" {
		q.Set("q", f.Query)
	}
	if f.CategoryID > 0 {
		q.Set("category", strconv.FormatInt(f.CategoryID, 10))
	}
	if f.Status != "" {
		q.Set("status", f.Status)
	}
	if afterID > 0 {
		q.Set("cursor", web.EncodeCursor(afterID))
	}
	if len(q) == 0 {
		return "/"
	}
	return "/?" + q.Encode()
}
