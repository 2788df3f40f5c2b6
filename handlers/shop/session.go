package shop

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"strings"

	"github.com/a-h/templ"
	"github.com/gofiber/fiber/v2"
	"github.com/gorilla/sessions"

	"petstore/views/components"
	view "petstore/views/shop"
	"petstore/web"
)

// SessionName names the storefront's cookie: signed and encrypted by
// web.Sessions, it holds the shopper id, the cart, the flash messages and
// the CSRF token. Nothing of the shopper's is kept on the server but their
// orders, so any instance serves any shopper.
const SessionName = "petstore_shop"

// Session keys of the shop's cookie (web.CSRF keeps its own "csrf").
const (
	keyShopper = "shopper"
	keyCart    = "cart"
)

// maxFlashes bounds the messages waiting for the next page.
const maxFlashes = 3

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

// Session loads the shop's session and gives a new browser its stable
// random shopper id (db.Owner.ShopperID). It runs after web.CSRF, which
// loaded the same session.
func (h *Handler) Session(c *fiber.Ctx) error {
	c.Set(fiber.HeaderCacheControl, web.PrivateCache)
	c.Vary("HX-Request")
	sess, err := h.Sessions.Get(c, SessionName)
	if err != nil {
		return err
	}
	if id, _ := sess.Values[keyShopper].(string); id == "" {
		b := make([]byte, 16)
		if _, err := rand.Read(b); err != nil {
			return err
		}
		sess.Values[keyShopper] = hex.EncodeToString(b)
		if err := h.saveShop(c, sess); err != nil {
			return err
		}
	}
	return c.Next()
}

// shopState is the request's session with its cart decoded.
type shopState struct {
	sess    *sessions.Session
	cart    cart
	shopper string
}

// loadState returns the request's session (loaded by shopSession).
func (h *Handler) loadState(c *fiber.Ctx) (*shopState, error) {
	sess, err := h.Sessions.Get(c, SessionName)
	if err != nil {
		return nil, err
	}
	raw, _ := sess.Values[keyCart].(string)
	shopper, _ := sess.Values[keyShopper].(string)
	return &shopState{sess: sess, cart: parseCart(raw), shopper: shopper}, nil
}

// saveState writes the cart back into the session and saves the cookie.
func (h *Handler) saveState(c *fiber.Ctx, st *shopState) error {
	if len(st.cart) == 0 {
		delete(st.sess.Values, keyCart)
	} else {
		st.sess.Values[keyCart] = st.cart.String()
	}
	return h.saveShop(c, st.sess)
}

// saveShop saves the session, replacing a Set-Cookie an earlier step of
// this request wrote (web.CSRF on a first visit), so the response carries
// one cookie with everything in it.
func (h *Handler) saveShop(c *fiber.Ctx, sess *sessions.Session) error {
	c.Response().Header.DelCookie(SessionName)
	return h.Sessions.Save(c, sess)
}

// flash queues a message for the next page the shopper sees (after a
// redirect). Flashes are "kind|text" strings.
func flash(st *shopState, kind, text string) {
	// Only the newest few wait: a script posting again and again without
	// loading a page would otherwise grow the cookie past what a browser
	// keeps (4 KiB) and the session could no longer be saved.
	if queued := st.sess.Flashes(); len(queued) > 0 {
		for _, f := range queued[max(0, len(queued)-maxFlashes+1):] {
			st.sess.AddFlash(f)
		}
	}
	st.sess.AddFlash(kind + "|" + text)
}

// pageChrome is the frame of a full page: it takes the queued flash
// messages out of the session (saving it when there were any).
func (h *Handler) pageChrome(c *fiber.Ctx, active string) (view.Chrome, error) {
	st, err := h.loadState(c)
	if err != nil {
		return view.Chrome{}, err
	}
	ch := view.Chrome{CSRF: web.CSRFToken(c), CartCount: st.cart.count(), Active: active}
	if raw := st.sess.Flashes(); len(raw) > 0 {
		for _, f := range raw {
			s, _ := f.(string)
			kind, text, ok := strings.Cut(s, "|")
			if !ok {
				kind, text = components.FlashInfo, s
			}
			ch.Flashes = append(ch.Flashes, components.Flash{Kind: kind, Text: text})
		}
		if err := h.saveShop(c, st.sess); err != nil {
			return view.Chrome{}, err
		}
	}
	return ch, nil
}

// partialChrome is the frame an htmx partial updates out of band: the
// cart count and the messages of this request.
func partialChrome(c *fiber.Ctx, st *shopState, flashes ...components.Flash) view.Chrome {
	return view.Chrome{CSRF: web.CSRFToken(c), CartCount: st.cart.count(), Flashes: flashes}
}

// isPartial reports whether to answer with a fragment: an htmx request
// that is not a history restore (which needs the whole page).
func isPartial(c *fiber.Ctx) bool {
	return web.IsHTMX(c) && c.Get("HX-History-Restore-Request") != "true"
}

// afterPost ends a successful form post: htmx gets the fragment with the
// message out of band; a plain form gets the message as a flash and a
// 303 to the page to show (Post/Redirect/Get).
func (h *Handler) afterPost(c *fiber.Ctx, st *shopState, f components.Flash, redirect string, fragment func(view.Chrome) templ.Component) error {
	if isPartial(c) {
		if err := h.saveState(c, st); err != nil {
			return err
		}
		ch := partialChrome(c, st, f)
		return web.Render(c, nil, templ.Join(fragment(ch), view.Chromed(ch)))
	}
	flash(st, f.Kind, f.Text)
	if err := h.saveState(c, st); err != nil {
		return err
	}
	return c.Redirect(redirect, fiber.StatusSeeOther)
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
	return web.Render(c, page(v, ch), nil)
}
