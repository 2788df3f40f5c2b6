package console

import (
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
	view "petstore/views/console"
	"petstore/web"
	"petstore/web/browser"
)

// Inventory lists pets with their stock, filtered by status and
// category; htmx refetches the table body when pets come or go.
func (h *Handler) Inventory(c *fiber.Ctx) error {
	ctx := c.UserContext()
	f, err := inventoryQuery.parse(c)
	if err != nil {
		return err
	}
	pf := db.PetFilter{CategoryID: f.id, Query: f.search, Page: db.Page{AfterID: f.from, Limit: pageSize}}
	if f.word != "" {
		pf.Statuses = []string{f.word}
	}
	pets, more, err := h.Store.FindPets(ctx, pf)
	if err != nil {
		return err
	}
	csrf := browser.CSRFToken(c)
	v := view.InventoryView{CSRF: csrf, Status: f.word, CategoryID: f.id, Search: f.search, RowsURL: f.url(f.from)}
	for _, p := range pets {
		v.Rows = append(v.Rows, view.InventoryRow{Pet: p, CSRF: csrf, Value: strconv.FormatInt(p.Stock, 10)})
	}
	if more {
		v.NextURL = f.url(pets[len(pets)-1].ID)
	}
	if web.IsHTMX(c) {
		return web.Render(c, view.InventoryRows(v))
	}
	if v.Categories, _, err = h.Store.FindCategories(ctx, db.Page{Limit: db.MaxLimit}); err != nil {
		return err
	}
	ch, err := h.chrome(c, "Inventory", "inventory")
	if err != nil {
		return err
	}
	ch.Live = true
	return web.RenderPage(c, view.InventoryPage(ch, v), view.InventoryRows(v))
}

// InventoryRow is one row, for its live refresh. The row's address
// opened as a page (a new tab, a bookmark) redirects to the inventory page
// starting at that pet, scrolled to its row: a row alone is no page.
func (h *Handler) InventoryRow(c *fiber.Ctx) error {
	p, err := web.FindByPath(c, "petId", h.Store.FindPetByID)
	if err != nil {
		return err
	}
	id := p.ID
	if !web.IsHTMX(c) {
		return c.Redirect(inventoryQuery.url(id-1)+"#inv-"+strconv.FormatInt(id, 10), fiber.StatusSeeOther)
	}
	return web.Render(c, view.InventoryLine(view.InventoryRow{Pet: p, CSRF: browser.CSRFToken(c), Value: strconv.FormatInt(p.Stock, 10)}))
}

// SetInventory sets a pet's stock by the rules of SPEC §5
// (Store.SetInventory) and answers with the updated row, or the row with
// the API's message and 422.
func (h *Handler) SetInventory(c *fiber.Ctx) error {
	ctx := c.UserContext()
	id, err := web.PathID(c, "petId")
	if err != nil {
		return err
	}
	raw := strings.TrimSpace(c.FormValue("quantity"))
	var u db.InventoryUpdate
	var parseErr error
	if raw != "" {
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil {
			parseErr = db.Invalid("quantity", "must be a whole number from 0 to %d", db.MaxInventoryQuantity)
		} else {
			u.Quantity = &n
		}
	}
	var p *db.Pet
	if parseErr == nil {
		if _, err = h.Store.SetInventory(ctx, id, u); err == nil {
			p, err = h.Store.FindPetByID(ctx, id)
		}
	} else {
		err = parseErr
	}
	if err == nil {
		return h.done(c, "/staff/inventory", p.Name+": "+strconv.FormatInt(p.Stock, 10)+" in stock.", func() error {
			return web.Render(c, view.InventoryLine(view.InventoryRow{Pet: p, CSRF: browser.CSRFToken(c), Value: strconv.FormatInt(p.Stock, 10), Saved: true}))
		})
	}
	return h.refused(c, err, "/staff/inventory", func(msg string) error {
		cur, ferr := h.Store.FindPetByID(ctx, id)
		if ferr != nil {
			return ferr
		}
		return web.Render(c, view.InventoryLine(view.InventoryRow{Pet: cur, CSRF: browser.CSRFToken(c), Value: raw, Error: msg}))
	})
}
