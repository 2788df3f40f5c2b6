package shop

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"strings"

	"github.com/a-h/templ"
	"github.com/gofiber/fiber/v2"

	"petstore/views/components"
	view "petstore/views/shop"
	"petstore/web"
	"petstore/web/browser"
)

// SessionName names the storefront's cookie: signed and encrypted by
// browser.Sessions, it holds the shopper id, the cart, the flash messages and
// the CSRF token. Nothing of the shopper's is kept on the server but their
// orders, so any instance serves any shopper.
const SessionName = "petstore_shop"

// Session keys of the shop's cookie (browser.CSRF keeps its own "csrf").
const (
	keyShopper = "shopper"
	keyCart    = "cart"
)

// shopFlashes are the messages waiting for the shopper's next page: the
// newest 3.
var shopFlashes = browser.Flashes{Keep: 3}

// maxCartLines bounds the cart, so the cookie stays well under 4 KiB.
const maxCartLines = 25

// cartLine is one pet in the cart.
type cartLine struct {
	PetID int64
	Qty   int64
}

// cart is the shopper's cart, in the order lines were added. In the
// cookie it is the string "id:qty,id:qty": plain values need no gob
// registration and stay small.
type cart []cartLine

// parseCart reads the cookie form, dropping anything malformed.
func parseCart(s string) cart {
	var c cart
	for _, part := range strings.Split(s, ",") {
		id, qty, ok := strings.Cut(part, ":")
		if !ok {
			continue
		}
		l := cartLine{}
		var err1, err2 error
		l.PetID, err1 = strconv.ParseInt(id, 10, 64)
		l.Qty, err2 = strconv.ParseInt(qty, 10, 64)
		if err1 != nil || err2 != nil || l.PetID < 1 || l.Qty < 1 || c.index(l.PetID) >= 0 || len(c) == maxCartLines {
			continue
		}
		c = append(c, l)
	}
	return c
}

func (c cart) String() string {
	parts := make([]string, len(c))
	for i, l := range c {
		parts[i] = strconv.FormatInt(l.PetID, 10) + ":" + strconv.FormatInt(l.Qty, 10)
	}
	return strings.Join(parts, ",")
}

// index is the line of petID, -1 when absent.
func (c cart) index(petID int64) int {
	for i, l := range c {
		if l.PetID == petID {
			return i
		}
	}
	return -1
}

// qty is how many of petID the cart holds.
func (c cart) qty(petID int64) int64 {
	if i := c.index(petID); i >= 0 {
		return c[i].Qty
	}
	return 0
}

// count is the number of items, for the nav.
func (c cart) count() int64 {
	var n int64
	for _, l := range c {
		n += l.Qty
	}
	return n
}

// Session loads the shop's session. It runs after browser.CSRF, which
// loaded the same session. A new browser gets its shopper id
// (db.Owner.ShopperID) with its first cart (keepCart), not on its first
// page: browsing sets no cookie (browser.CSRF).
func (h *Handler) Session(c *fiber.Ctx) error {
	c.Set(fiber.HeaderCacheControl, web.PrivateCache)
	c.Vary("HX-Request")
	if _, err := h.Sessions.Get(c, SessionName); err != nil {
		return err
	}
	return c.Next()
}

// shopState is the request's session with its cart decoded.
type shopState struct {
	sess    *browser.Session
	cart    cart
	shopper string
}

// loadState returns the request's session (loaded by Session).
func (h *Handler) loadState(c *fiber.Ctx) (*shopState, error) {
	sess, err := h.Sessions.Get(c, SessionName)
	if err != nil {
		return nil, err
	}
	return &shopState{sess: sess, cart: parseCart(sess.Value(keyCart)), shopper: sess.Value(keyShopper)}, nil
}

// ensureShopper gives a browser without one its stable random shopper
// id, for the answer to save.
func (st *shopState) ensureShopper() {
	if st.shopper != "" {
		return
	}
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand does not fail (Go 1.24+)
	st.shopper = hex.EncodeToString(b)
	st.sess.Set(keyShopper, st.shopper)
}

// keepCart writes the cart back into the session, for the answer to save
// (browser.Reply), with the shopper id its orders will be placed under.
func (st *shopState) keepCart() {
	st.ensureShopper()
	if len(st.cart) == 0 {
		st.sess.Delete(keyCart)
	} else {
		st.sess.Set(keyCart, st.cart.String())
	}
}

// pageChrome is the frame of a full page: it takes the queued flash
// messages out of the session (saving it when there were any).
func (h *Handler) pageChrome(c *fiber.Ctx, active string) (view.Chrome, error) {
	st, err := h.loadState(c)
	if err != nil {
		return view.Chrome{}, err
	}
	flashes, err := shopFlashes.Take(st.sess)
	if err != nil {
		return view.Chrome{}, err
	}
	return view.Chrome{CSRF: browser.CSRFToken(c), CartCount: st.cart.count(), Active: active, Flashes: flashes}, nil
}

// partialChrome is the frame an htmx partial updates out of band: the
// cart count and the messages of this request.
func partialChrome(c *fiber.Ctx, st *shopState, flashes ...components.Flash) view.Chrome {
	return view.Chrome{CSRF: browser.CSRFToken(c), CartCount: st.cart.count(), Flashes: flashes}
}

// afterPost ends a successful form post that changed the shopper's state
// (browser.Reply): htmx gets the fragment with the message out of band; a
// plain form gets the message as a flash and a 303 to the page to show.
// fragment may be nil when the request is not htmx's (browser.Partial).
func (h *Handler) afterPost(c *fiber.Ctx, st *shopState, f components.Flash, redirect string, fragment func(view.Chrome) templ.Component) error {
	st.keepCart()
	r := browser.Reply{To: redirect, Flash: f, Flashes: shopFlashes}
	if fragment != nil {
		r.Fragment = func() error {
			ch := partialChrome(c, st, f)
			return web.Render(c, templ.Join(fragment(ch), view.Chromed(ch)))
		}
	}
	return r.Send(c, st.sess)
}

// goTo ends a post that sends the shopper to another page (a checkout's
// confirmation, a found order): htmx by HX-Redirect, a plain form by 303;
// the session saved with the cart (browser.Reply).
func goTo(c *fiber.Ctx, st *shopState, to string) error {
	st.keepCart()
	return browser.Reply{To: to, HXRedirect: true}.Send(c, st.sess)
}

// showPage renders a full page whose view load makes from the shopper's
// state, in the shop's frame with nav active.
func showPage[V any](h *Handler, c *fiber.Ctx, nav string, load func(context.Context, *shopState) (V, error), page func(V, view.Chrome) templ.Component) error {
	st, err := h.loadState(c)
	if err != nil {
		return err
	}
	v, err := load(c.UserContext(), st)
	if err != nil {
		return err
	}
	ch, err := h.pageChrome(c, nav)
	if err != nil {
		return err
	}
	return web.Render(c, page(v, ch))
}
