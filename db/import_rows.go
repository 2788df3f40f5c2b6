package db

import (
	"strconv"
	"strings"
	"time"
)

// MaxImportRows bounds the pets one catalog import brings (SPEC §18).
const MaxImportRows = 1_000_000

// CatalogRow is one pet of a catalog import (SPEC §18): the fields of
// NewPet, its category by name (created when new) and its stock. Empty
// cells arrive as absent fields. Validate checks it as POST /pets checks
// a NewPet, with the same rules (NewPet.Validate, checkName).
type CatalogRow struct {
	Name        *string
	Category    *string
	Status      *string
	Price       *string
	Breed       *string
	BirthDate   *string
	Description *string
	// Quantity is the stock as written, nil when the cell is empty.
	Quantity *string

	pet   NewPet // the row as a NewPet, once validated
	stock int64
}

// Validate trims and checks the row; the problems' fields are the file's
// column names (which are the API's field names). today is the store's
// date, as NewPet.Validate takes it.
//
// Status and quantity agree as for a new pet (SPEC §5): the status
// follows from the stock. No status: available with quantity ≥ 1 (the
// default, 1), sold with 0. available with 0, or sold with more than 0, is
// a problem; pending is refused as POST /pets refuses it; sold without a
// quantity is stock 0.
func (r *CatalogRow) Validate(today time.Time) error {
	var pr Problems
	r.pet = NewPet{Name: r.Name, Status: r.Status, Price: r.Price}
	one := int64(1) // the category is checked by name below
	r.pet.CategoryID = &one
	if r.Description != nil {
		r.pet.Description = Set(*r.Description)
	}
	if r.Breed != nil {
		r.pet.Breed = Set(*r.Breed)
	}
	if r.BirthDate != nil {
		r.pet.BirthDate = Set(*r.BirthDate)
	}
	if err := r.pet.Validate(today); err != nil {
		pr = append(pr, err.(*Error).Details...)
	}
	checkName(&pr, "category", r.Category)
	r.stock = -1
	if r.Quantity != nil {
		q, err := strconv.ParseInt(strings.TrimSpace(*r.Quantity), 10, 64)
		switch {
		case err != nil:
			pr.Add("quantity", "must be a whole number from 0 to %d", MaxInventoryQuantity)
		case q < 0 || q > MaxInventoryQuantity:
			pr.Add("quantity", "must be from 0 to %d", MaxInventoryQuantity)
		default:
			r.stock = q
		}
	}
	if r.Status != nil && ValidStatus(*r.Status) {
		switch status := *r.Status; {
		case status == StatusPending:
			pr.Add("status", "a new pet is available or sold; pending comes from orders")
		case r.Quantity == nil && status == StatusSold:
			r.stock = 0
		case r.Quantity == nil:
			r.stock = 1
		case r.stock == 0 && status == StatusAvailable:
			pr.Add("quantity", "must be at least 1 for an available pet (a pet without stock is sold)")
		case r.stock > 0 && status == StatusSold:
			pr.Add("quantity", "must be 0 for a sold pet (a pet in stock is available)")
		}
	} else if r.Quantity == nil {
		r.stock = 1
	}
	return pr.Err()
}

// Stock is the validated row's stock.
func (r *CatalogRow) Stock() int64 { return r.stock }

// CategoryName is the validated row's category name, trimmed.
func (r *CatalogRow) CategoryName() string { return *r.Category }

// newPet is the validated row as the pet it makes in category id.
func (r *CatalogRow) newPet(categoryID int64) *Pet {
	p := &Pet{Name: *r.pet.Name, CategoryID: categoryID, Stock: r.stock}
	r.pet.apply(p)
	return p
}
