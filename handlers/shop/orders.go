package shop

import (
	"context"
	"slices"
	"strconv"

	"github.com/a-h/templ"
	"github.com/gofiber/fiber/v2"

	"petstore/db"
	"petstore/views/components"
	view "petstore/views/shop"
)

// maxShopOrders bounds "My orders": the newest this many are shown.
const maxShopOrders = 500

// Orders is "My orders": GET /orders, this browser's open and
// complete orders, newest first, with their pets' names.
func (h *Handler) Orders(c *fiber.Ctx) error {
	return showPage(h, c, view.NavOrders, h.ordersView, func(v view.OrdersView, ch view.Chrome) templ.Component {
		v.Chrome = ch
		return view.OrdersPage(v)
	})
}

// ordersView loads the shopper's orders and names their pets.
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
	slices.Reverse(all)
	if len(all) > maxShopOrders {
		all = all[:maxShopOrders]
	}
	ids := make([]int64, 0, len(all))
	for _, o := range all {
		ids = append(ids, o.PetID)
	}
	slices.Sort(ids)
	pets, err := h.Store.FindPetSummaries(ctx, slices.Compact(ids))
	if err != nil {
		return v, err
	}
	for _, o := range all {
		line := view.OrderLine{Order: o, PetName: "Pet #" + strconv.FormatInt(o.PetID, 10)}
		if p := pets[o.PetID]; p != nil {
			line.PetName, line.Category, line.PetListed = p.Name, p.CategoryName, !p.Deleted
		}
		if o.Complete {
			v.Complete = append(v.Complete, line)
		} else {
			v.Open = append(v.Open, line)
		}
	}
	return v, nil
}

// CancelOrder cancels one of this browser's open orders and puts its
// quantity back in stock: POST /orders/{id}/cancel. Someone else's order
// is 404; a complete one is 409.
func (h *Handler) CancelOrder(c *fiber.Ctx) error {
	id, err := parseID(c.Params("id"), "order")
	if err != nil {
		return err
	}
	st, err := h.loadState(c)
	if err != nil {
		return err
	}
	ctx := c.UserContext()
	err = h.Store.CancelOrder(ctx, id, &db.Owner{ShopperID: st.shopper})
	switch db.ErrorCode(err) {
	case "":
	case db.ENotFound:
		return db.Errorf(db.ENotFound, "We could not find order #%d among your orders.", id)
	case db.EOrderComplete:
		return db.Errorf(db.EOrderComplete, "Order #%d is complete and can no longer be cancelled.", id)
	default:
		return err
	}
	f := components.Flash{Kind: components.FlashSuccess, Text: "Order #" + strconv.FormatInt(id, 10) + " is cancelled."}
	if !isPartial(c) {
		return h.afterPost(c, st, f, "/orders", nil)
	}
	v, err := h.ordersView(ctx, st)
	if err != nil {
		return err
	}
	return h.afterPost(c, st, f, "/orders", func(ch view.Chrome) templ.Component {
		v.Chrome = ch
		return view.OrdersPart(v)
	})
}
