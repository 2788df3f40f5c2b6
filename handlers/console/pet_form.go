package console

import (
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/gofiber/fiber/v2"

	"petstore/db"
	view "petstore/views/console"
	"petstore/web/browser"
)

// petFormFields are the pet form's fields, named as the API's JSON
// fields so the store's messages land beside them.
var petFormFields = []string{"name", "categoryId", "status", "price", "description", "breed", "birthDate"}

// petForm reads the pet form into the store's input, noting values that
// are not even numbers (the API would refuse their JSON with 400). The
// shop's fields follow the API's PUT: a field the form does not send keeps
// its value; an empty price is refused (0.00 is no fee, typed on purpose),
// and an empty description, breed or birth date clears it.
func petForm(c *fiber.Ctx, withStatus bool) (db.NewPet, view.PetFormView) {
	v := view.PetFormView{CSRF: browser.CSRFToken(c), Name: c.FormValue("name"), Status: c.FormValue("status"), Errors: view.FieldErrors{}}
	in := db.NewPet{Name: &v.Name}
	if raw := strings.TrimSpace(c.FormValue("categoryId")); raw != "" {
		id, err := strconv.ParseInt(raw, 10, 64)
		if err != nil {
			v.Errors["categoryId"] = "must be a positive integer"
		} else {
			in.CategoryID, v.CategoryID = &id, id
		}
	}
	if withStatus && v.Status != "" {
		in.Status = &v.Status
	}
	if formHas(c, "price") {
		v.Price = strings.TrimSpace(c.FormValue("price"))
		if v.Price == "" {
			v.Errors["price"] = "is required: 0.00 for no fee"
		}
		in.Price = &v.Price
	}
	// A textarea sends line breaks as CRLF; the description keeps LF, so
	// 2,000 characters typed are 2,000 characters stored.
	in.Description = clearable(c, "description", &v.Description, func(s string) string { return strings.ReplaceAll(s, "\r\n", "\n") })
	in.Breed = clearable(c, "breed", &v.Breed, nil)
	in.BirthDate = clearable(c, "birthDate", &v.BirthDate, strings.TrimSpace)
	return in, v
}

// clearable reads an optional text field of the pet form into shown (as
// typed, after clean) and returns the store's input: absent when the form
// does not send it, cleared when it is blank, else the text.
func clearable(c *fiber.Ctx, name string, shown *string, clean func(string) string) db.Nullable[string] {
	if !formHas(c, name) {
		return db.Nullable[string]{}
	}
	*shown = c.FormValue(name)
	if clean != nil {
		*shown = clean(*shown)
	}
	if strings.TrimSpace(*shown) == "" {
		return db.Clear[string]()
	}
	return db.Set(*shown)
}

// formHas reports whether the posted form carries the field, empty or not.
func formHas(c *fiber.Ctx, name string) bool {
	if c.Request().PostArgs().Has(name) {
		return true
	}
	if f, err := c.MultipartForm(); err == nil {
		_, ok := f.Value[name]
		return ok
	}
	return false
}

// petFormOf is the edit form filled with the pet's stored values.
func petFormOf(c *fiber.Ctx, p *db.Pet) view.PetFormView {
	return view.PetFormView{
		CSRF: browser.CSRFToken(c), ID: p.ID, Name: p.Name, CategoryID: p.CategoryID, Status: p.Status, Current: p.Status,
		Price: p.Price.String(), Description: deref(p.Description), Breed: deref(p.Breed), BirthDate: deref(p.BirthDate),
		Errors: view.FieldErrors{},
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// petFormInvalid re-renders the form the handler refused before the store
// saw it (422), with the store's messages for the other fields too, so
// one round trip shows every mistake.
func (h *Handler) petFormInvalid(c *fiber.Ctx, in db.NewPet, v view.PetFormView) error {
	if err := in.Validate(dayOf(h.Now())); err != nil {
		return h.petFormFailed(c, err, v)
	}
	return h.renderPetForm(c, fiber.StatusUnprocessableEntity, v)
}

// dayOf is t's date in UTC, at midnight: the store's "today".
func dayOf(t time.Time) time.Time { return t.UTC().Truncate(24 * time.Hour) }

// petFormFailed re-renders the pet form with the store's messages: 422
// for invalid values, 409 for a refused status change.
func (h *Handler) petFormFailed(c *fiber.Ctx, err error, v view.PetFormView) error {
	coded, status := refusalOf(err, fiber.StatusUnprocessableEntity, fiber.StatusConflict)
	if coded == nil {
		return err
	}
	v.Problem = mergeFieldErrors(v.Errors, coded, petFormFields...)
	return h.renderPetForm(c, status, v)
}

// renderPetForm renders the pet form page with the categories to choose
// from, the store's currency and today's date (the store clock's, UTC),
// the latest birth date; the values typed are shown as printable.
func (h *Handler) renderPetForm(c *fiber.Ctx, status int, v view.PetFormView) error {
	cats, _, err := h.Store.FindCategories(c.UserContext(), db.Page{Limit: db.MaxLimit})
	if err != nil {
		return err
	}
	v.Categories = cats
	for _, f := range []*string{&v.Name, &v.Price, &v.Description, &v.Breed, &v.BirthDate} {
		*f = browser.Printable(*f, true)
	}
	v.Currency = h.Store.Currency
	v.Today = dayOf(h.Now()).Format(time.DateOnly)
	return h.renderCatalogForm(c, status, "pet", v.ID, func(ch view.Chrome) templ.Component { return view.PetFormPage(ch, v) })
}
