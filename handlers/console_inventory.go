package handlers

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
	"petstore/views/console"
	"petstore/web"
)

// consolePageSize is how many rows a console list shows at once.
const consolePageSize = 100

// inventoryFilter is the inventory page's query: ?status=&category=&after=.
type inventoryFilter struct {
	status     string
	categoryID int64
	afterID    int64
}

func parseInventoryFilter(c *fiber.Ctx) (inventoryFilter, error) {
	f := inventoryFilter{status: c.Query("status")}
	if f.status != "" && !db.ValidStatus(f.status) {
		return f, web.BadParam("status", "must be available, pending or sold")
	}
	var err error
	if f.categoryID, err = consoleQueryID(c, "category"); err != nil {
		return f, err
	}
	if f.afterID, err = consoleQueryID(c, "after"); err != nil {
		return f, err
	}
	return f, nil
}

// consoleQueryID reads an optional positive id; an empty value is none.
func consoleQueryID(c *fiber.Ctx, name string) (int64, error) {
	s := strings.TrimSpace(c.Query(name))
	if s == "" {
		return 0, nil
	}
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id < 1 {
		return 0, web.BadParam(name, "must be a positive integer")
	}
	return id, nil
}

// url is the inventory page with these filters, after a pet id.
func (f inventoryFilter) url(after int64) string {
	q := url.Values{}
	if f.status != "" {
		q.Set("status", f.status)
	}
	if f.categoryID > 0 {
		q.Set("category", strconv.FormatInt(f.categoryID, 10))
	}
	if after > 0 {
		q.Set("after", strconv.FormatInt(after, 10))
	}
	if len(q) == 0 {
		return "/staff/inventory"
	}
	return "/staff/inventory?" + q.Encode()
}

// consoleInventory lists pets with their stock, filtered by status and
// category; htmx refetches the table body when pets come or go.
func (h *Handler) consoleInventory(c *fiber.Ctx) error {
	ctx := c.UserContext()
	f, err := parseInventoryFilter(c)
	if err != nil {
		return err
	}
	pf := db.PetFilter{CategoryID: f.categoryID, Page: db.Page{AfterID: f.afterID, Limit: consolePageSize}}
	if f.status != "" {
		pf.Statuses = []string{f.status}
	}
	pets, more, err := h.Store.FindPets(ctx, pf)
	if err != nil {
		return err
	}
	csrf := web.CSRFToken(c)
	v := console.InventoryView{CSRF: csrf, Status: f.status, CategoryID: f.categoryID, RowsURL: f.url(f.afterID)}
	for _, p := range pets {
		v.Rows = append(v.Rows, console.InventoryRow{Pet: p, CSRF: csrf, Value: strconv.FormatInt(p.Stock, 10)})
	}
	if more {
		v.NextURL = f.url(pets[len(pets)-1].ID)
	}
	if web.IsHTMX(c) {
		return web.Render(c, nil, console.InventoryRows(v))
	}
	if v.Categories, _, err = h.Store.FindCategories(ctx, db.Page{Limit: db.MaxLimit}); err != nil {
		return err
	}
	ch, err := h.consoleChrome(c, "Inventory", "inventory")
	if err != nil {
		return err
	}
	ch.Live = true
	return web.Render(c, console.InventoryPage(ch, v), console.InventoryRows(v))
}

// consoleInventoryRow is one row, for its live refresh. The row's address
// opened as a page (a new tab, a bookmark) redirects to the inventory page
// starting at that pet, scrolled to its row: a row alone is no page.
func (h *Handler) consoleInventoryRow(c *fiber.Ctx) error {
	id, err := web.PathID(c, "petId")
	if err != nil {
		return err
	}
	p, err := h.Store.FindPetByID(c.UserContext(), id)
	if err != nil {
		return err
	}
	if !web.IsHTMX(c) {
		return c.Redirect(inventoryFilter{}.url(id-1)+"#inv-"+strconv.FormatInt(id, 10), fiber.StatusSeeOther)
	}
	return web.Render(c, nil, console.InventoryLine(console.InventoryRow{Pet: p, CSRF: web.CSRFToken(c), Value: strconv.FormatInt(p.Stock, 10)}))
}

// consoleSetInventory sets a pet's stock by the rules of SPEC §5
// (Store.SetInventory) and answers with the updated row, or the row with
// the API's message and 422.
func (h *Handler) consoleSetInventory(c *fiber.Ctx) error {
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
		return h.consoleDone(c, "/staff/inventory", p.Name+": "+strconv.FormatInt(p.Stock, 10)+" in stock.", func() error {
			return web.Render(c, nil, console.InventoryLine(console.InventoryRow{Pet: p, CSRF: web.CSRFToken(c), Value: strconv.FormatInt(p.Stock, 10), Saved: true}))
		})
	}
	return h.consoleRefused(c, err, "/staff/inventory", func(msg string) error {
		cur, ferr := h.Store.FindPetByID(ctx, id)
		if ferr != nil {
			return ferr
		}
		return web.Render(c, nil, console.InventoryLine(console.InventoryRow{Pet: cur, CSRF: web.CSRFToken(c), Value: raw, Error: msg}))
	})
}
