package shop

import (
	"context"
	"slices"
	"strconv"
	"time"

	"github.com/a-h/templ"
	"github.com/gofiber/fiber/v2"

	"petstore/db"
	view "petstore/views/shop"
)

// maxShopOrders bounds "My orders": the newest this many are shown.
const maxShopOrders = 500

// Orders is "My orders": GET /orders, this browser's open and complete
// orders gathered by checkout, newest first, with their pets' names and
// totals.
func (h *Handler) Orders(c *fiber.Ctx) error {
	return showPage(h, c, view.NavOrders, h.ordersView, func(v view.OrdersView, ch view.Chrome) templ.Component {
		v.Chrome = ch
		return view.OrdersPage(v)
	})
}

// ordersView loads the shopper's newest orders and groups them.
func (h *Handler) ordersView(ctx context.Context, st *shopState) (view.OrdersView, error) {
	var v view.OrdersView
	if st.shopper == "" {
		return v, nil
	}
	owner := &db.Owner{ShopperID: st.shopper}
	var all []*db.Order
	page := db.Page{Limit: db.MaxLimit}
	for {
		os, more, err := h.Store.FindOrders(ctx, db.OrderFilter{Owner: owner, Page: page})
		if err != nil {
			return v, err
		}
		all = append(all, os...)
		if !more || len(os) == 0 {
			break
		}
		page.AfterID = os[len(os)-1].ID
	}
	if len(all) > maxShopOrders {
		all = all[len(all)-maxShopOrders:]
	}
	lines, err := h.orderLines(ctx, all)
	if err != nil {
		return v, err
	}
	v.Groups = h.groupByCheckout(lines)
	return v, nil
}

// orderLines names the orders' pets (a deleted pet keeps its name).
func (h *Handler) orderLines(ctx context.Context, orders []*db.Order) ([]view.OrderLine, error) {
	ids := make([]int64, 0, len(orders))
	for _, o := range orders {
		ids = append(ids, o.PetID)
	}
	slices.Sort(ids)
	pets, err := h.Store.FindPetSummaries(ctx, slices.Compact(ids))
	if err != nil {
		return nil, err
	}
	lines := make([]view.OrderLine, len(orders))
	for i, o := range orders {
		lines[i] = view.OrderLine{Order: o, PetName: "Pet #" + strconv.FormatInt(o.PetID, 10)}
		if p := pets[o.PetID]; p != nil {
			lines[i].PetName, lines[i].Category, lines[i].PetListed = p.Name, p.CategoryName, !p.Deleted
		}
	}
	return lines, nil
}

// groupByCheckout gathers order lines (oldest first) by checkout: the
// newest checkout first, each one's orders in the order of its cart, and
// last the orders placed before checkouts had numbers.
func (h *Handler) groupByCheckout(lines []view.OrderLine) []view.CheckoutGroup {
	var groups []view.CheckoutGroup
	var earlier []view.OrderLine
	at := map[int64]int{}
	for _, l := range lines {
		if l.Order.CheckoutID == nil {
			earlier = append(earlier, l)
			continue
		}
		n := *l.Order.CheckoutID
		i, ok := at[n]
		if !ok {
			i, at[n] = len(groups), len(groups)
			groups = append(groups, h.checkoutGroup(n, l.Order.CreatedAt, nil))
		}
		groups[i].Lines = append(groups[i].Lines, l)
	}
	for i := range groups {
		groups[i] = h.checkoutGroup(groups[i].Number, groups[i].PlacedAt, groups[i].Lines)
	}
	slices.Reverse(groups)
	if len(earlier) > 0 {
		slices.Reverse(earlier)
		groups = append(groups, h.checkoutGroup(0, earlier[0].Order.CreatedAt, earlier))
	}
	return groups
}

// checkoutGroup makes a checkout's group: its preferred date and currency
// are its orders' (all have the same).
func (h *Handler) checkoutGroup(number int64, placed time.Time, lines []view.OrderLine) view.CheckoutGroup {
	g := view.CheckoutGroup{Number: number, PlacedAt: placed, Lines: lines, Currency: h.Store.Currency}
	if len(lines) > 0 {
		g.ShipDate = lines[0].Order.ShipDate
		if cur := lines[0].Order.Currency; cur != "" {
			g.Currency = cur
		}
	}
	return g
}

// loadCheckoutGroup is a checkout as a group, its pets named.
func (h *Handler) loadCheckoutGroup(ctx context.Context, ck *db.Checkout) (view.CheckoutGroup, error) {
	lines, err := h.orderLines(ctx, ck.Orders)
	if err != nil {
		return view.CheckoutGroup{}, err
	}
	return h.checkoutGroup(ck.ID, ck.CreatedAt, lines), nil
}
