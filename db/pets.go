package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Pet statuses (SPEC §5). Status is derived from stock and open orders.
const (
	StatusAvailable = "available"
	StatusPending   = "pending"
	StatusSold      = "sold"
)

// ValidStatus reports whether s is a PetStatus.
func ValidStatus(s string) bool {
	return s == StatusAvailable || s == StatusPending || s == StatusSold
}

// Pet is an animal in the catalog, as the API shows it. Stock and
// CategoryName ride along for the pages.
type Pet struct {
	ID           int64  `db:"id" json:"id"`
	Name         string `db:"name" json:"name"`
	CategoryID   int64  `db:"category_id" json:"categoryId"`
	Status       string `db:"status" json:"status"`
	Stock        int64  `db:"quantity" json:"-"`
	CategoryName string `db:"category_name" json:"-"`
	// Price is what one unit costs, 0 for no fee (SPEC §14).
	Price Money `db:"price" json:"price"`
	// Currency is the store's (one per store); the store sets it on every
	// pet it returns.
	Currency    string  `db:"-" json:"currency"`
	Description *string `db:"description" json:"description,omitempty"`
	Breed       *string `db:"breed" json:"breed,omitempty"`
	// BirthDate is YYYY-MM-DD.
	BirthDate *string `db:"birth_date" json:"birthDate,omitempty"`
	Photos    Photos  `db:"photos" json:"photos"`
}

// NewPet is the input shape of a pet (POST, and PUT's full replace).
// Pointers tell a missing field from a zero one. The fields of SPEC §14
// are optional: a PUT without one keeps its value, and null clears
// description, breed and birthDate.
type NewPet struct {
	Name        *string          `json:"name"`
	CategoryID  *int64           `json:"categoryId"`
	Status      *string          `json:"status"`
	Price       *string          `json:"price"`
	Description Nullable[string] `json:"description"`
	Breed       Nullable[string] `json:"breed"`
	BirthDate   Nullable[string] `json:"birthDate"`

	price Money // Price, parsed by Validate
}

// Pet field limits of SPEC §14.
const (
	MaxPetDescriptionLen = 2000
	// earliestBirthDate bounds birthDate from below: a date before it is a
	// typing mistake, not a pet.
	earliestBirthDate = "1900-01-01"
)

// Validate trims and checks the fields that need no database. today is
// the store's date (UTC), which a birth date may not be after.
func (p *NewPet) Validate(today time.Time) error {
	var pr Problems
	checkName(&pr, "name", p.Name)
	switch {
	case p.CategoryID == nil:
		pr.Add("categoryId", "is required")
	case *p.CategoryID < 1:
		pr.Add("categoryId", "must be a positive integer")
	}
	if p.Status != nil && !ValidStatus(*p.Status) {
		pr.Add("status", "must be one of available, pending, sold")
	}
	if p.Price != nil {
		m, err := ParseMoney(*p.Price)
		if err != nil {
			pr.Add("price", "%s", err.Error())
		}
		p.price = m
	}
	if p.Description.Has() {
		trimDescription(&pr, "description", &p.Description.Value, MaxPetDescriptionLen)
	}
	if p.Breed.Has() {
		checkName(&pr, "breed", &p.Breed.Value)
	}
	if p.BirthDate.Has() {
		checkBirthDate(&pr, p.BirthDate.Value, today)
	}
	return pr.Err()
}

// checkBirthDate records why d is not a birth date: YYYY-MM-DD, a real
// day, not after today and not before 1900.
func checkBirthDate(pr *Problems, d string, today time.Time) {
	t, err := time.Parse(time.DateOnly, d)
	switch {
	case err != nil:
		pr.Add("birthDate", "must be a date as YYYY-MM-DD")
	case t.After(today):
		pr.Add("birthDate", "must not be in the future")
	case d < earliestBirthDate:
		pr.Add("birthDate", "must be %s or later", earliestBirthDate)
	}
}

// apply sets the §14 fields the input carries on p, leaving those it
// omits as they are (a new pet starts with none).
func (in *NewPet) apply(p *Pet) {
	if in.Price != nil {
		p.Price = in.price
	}
	p.Description = applyNullable(p.Description, in.Description)
	p.Breed = applyNullable(p.Breed, in.Breed)
	p.BirthDate = applyNullable(p.BirthDate, in.BirthDate)
}

// applyNullable is the stored value after a request field: kept when
// absent, cleared by null or an empty text, else replaced.
func applyNullable(stored *string, f Nullable[string]) *string {
	switch {
	case !f.Present:
		return stored
	case f.Null || f.Value == "":
		return nil
	default:
		v := f.Value
		return &v
	}
}

// today is the date of t in UTC, at midnight.
func today(t time.Time) time.Time {
	return t.UTC().Truncate(24 * time.Hour)
}

// PetFilter selects pets; zero fields do not filter.
type PetFilter struct {
	Statuses   []string
	CategoryID int64
	Query      string // name contains, case-insensitive
	IDs        []int64
	// ImportID lists the pets a catalog import brought (SPEC §18).
	ImportID int64
	Page
}

// petFields are the pets and inventory columns of a Pet; petCols adds
// its category's name.
const petFields = `p.id, p.name, p.category_id, p.status, i.quantity, p.price, p.description, p.breed,
	CAST(p.birth_date AS TEXT) AS birth_date, p.photos`
const petCols = petFields + `, c.name AS category_name`
const petFrom = ` FROM pets p JOIN inventory i ON i.pet_id = p.id JOIN categories c ON c.id = p.category_id`

// FindPets lists live pets by id and reports whether more follow.
func (s *Store) FindPets(ctx context.Context, f PetFilter) ([]*Pet, bool, error) {
	if SearchProblem(f.Query) != "" {
		return nil, false, nil // no name can match it
	}
	l := list{from: `SELECT ` + petCols + petFrom, key: "p.id", out: "id", status: "p.status"}
	search := s.nameSearch(f.Query)
	if search != nil && search.from != "" {
		l.from, l.key = `SELECT `+petCols+search.from, search.key
	}
	sel := s.listSelector(len(f.Statuses) > 0 || f.CategoryID > 0 || f.ImportID > 0 || (search != nil && search.unprepared))
	l.conds = func(w *where) {
		w.add("p.deleted_at IS NULL")
		if f.CategoryID > 0 {
			w.add("p.category_id = " + w.arg(f.CategoryID))
		}
		if search != nil {
			search.conds(w)
		}
		if len(f.IDs) > 0 {
			w.add("p.id IN " + in(w, f.IDs))
		}
		if f.ImportID > 0 {
			w.add("p.import_id = " + w.arg(f.ImportID))
		}
		afterOnInventory(w, f.Page)
	}
	query, args := l.build(f.Statuses, f.Page)
	pets, more, err := selectPageWith[*Pet](ctx, sel, "pets", f.Page, query, args...)
	s.priced(pets...)
	return pets, more, err
}

// priced sets the store's currency on pets.
func (s *Store) priced(pets ...*Pet) {
	for _, p := range pets {
		p.Currency = s.Currency
	}
}

// FindPetByID returns a live pet. Errors: not_found.
func (s *Store) FindPetByID(ctx context.Context, id int64) (*Pet, error) {
	p, err := findOne[Pet](ctx, s.get, "pet", notFound("Pet", id), `SELECT `+petCols+petFrom+` WHERE p.id = $1 AND p.deleted_at IS NULL`, id)
	if err != nil {
		return nil, err
	}
	s.priced(p)
	return p, nil
}

// CreatePet adds a pet with its inventory entry: stock 1 when available,
// 0 when sold. Errors: validation_failed (also for pending, or an unknown
// category).
func (s *Store) CreatePet(ctx context.Context, in NewPet) (*Pet, error) {
	if err := in.Validate(today(s.Now())); err != nil {
		return nil, err
	}
	status := StatusAvailable
	if in.Status != nil {
		status = *in.Status
	}
	if status == StatusPending {
		return nil, Invalid("status", "a new pet is available or sold; pending comes from orders")
	}
	stock := int64(1)
	if status == StatusSold {
		stock = 0
	}
	return inTx(ctx, s, func(tx *Tx) (*Pet, error) {
		if err := tx.checkCategory(ctx, *in.CategoryID); err != nil {
			return nil, err
		}
		p := &Pet{Name: *in.Name, CategoryID: *in.CategoryID, Stock: stock}
		in.apply(p)
		if err := tx.insertPet(ctx, p); err != nil {
			return nil, err
		}
		if err := tx.audit(AuditPetCreate, TargetID(auditTargetPet, p.ID), diff(nil, p.auditFields())); err != nil {
			return nil, err
		}
		return p, nil
	})
}

// insertPet writes p, a pet of a live category, with its inventory entry
// (p.Stock) and records pet.created; it sets p's id, status and currency.
// A pet in stock is available, one without is sold: a new pet has no
// orders.
func (tx *Tx) insertPet(ctx context.Context, p *Pet) error {
	p.Status = deriveStatus(p.Stock, 0)
	p.Currency = tx.store.Currency
	if p.Photos == nil {
		p.Photos = Photos{}
	}
	err := tx.get(ctx, &p.ID, `INSERT INTO pets (name, name_key, category_id, status, price, description, breed, birth_date,
		created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9) RETURNING id`,
		p.Name, foldName(p.Name), p.CategoryID, p.Status, p.Price, p.Description, p.Breed, p.BirthDate, tx.now)
	if err != nil {
		return fmt.Errorf("create pet: %w", err)
	}
	if _, err := tx.exec(ctx, `INSERT INTO inventory (pet_id, quantity, updated_at) VALUES ($1, $2, $3)`, p.ID, p.Stock, tx.now); err != nil {
		return fmt.Errorf("create inventory: %w", err)
	}
	return tx.addEvent(ctx, EventPetCreated, p)
}

// UpdatePet replaces a pet's name and category, sets the fields of SPEC
// §14 that in carries, and applies a status change by hand (SPEC §5, §13):
// no status or the same status keeps it; available→sold empties the stock;
// sold→available sets it to 1.
// Errors: validation_failed, not_found, invalid_transition, pet_has_open_orders.
func (s *Store) UpdatePet(ctx context.Context, id int64, in NewPet) (*Pet, error) {
	if err := in.Validate(today(s.Now())); err != nil {
		return nil, err
	}
	return inTx(ctx, s, func(tx *Tx) (*Pet, error) {
		p, err := tx.lockPet(ctx, id)
		if err != nil {
			return nil, err
		}
		if err := tx.checkCategory(ctx, *in.CategoryID); err != nil {
			return nil, err
		}
		before := p.auditFields()
		stock := p.Stock
		if in.Status != nil && *in.Status != p.Status {
			to := *in.Status
			switch {
			case to == StatusPending || p.Status == StatusPending:
				return nil, Errorf(EInvalidTransition, "Status %s cannot be changed to %s by hand: pending follows from orders.", p.Status, to)
			case to == StatusSold:
				open, err := tx.openOrders(ctx, id)
				if err != nil {
					return nil, err
				}
				if open > 0 {
					return nil, Errorf(EPetHasOpenOrders, "Pet %d has %d open orders.", id, open)
				}
				stock = 0
			case to == StatusAvailable:
				stock = 1
			}
			p.Status = to
		}
		p.Name, p.CategoryID = *in.Name, *in.CategoryID
		in.apply(p)
		if _, err := tx.exec(ctx, `UPDATE pets SET name = $1, name_key = $2, category_id = $3, status = $4, price = $5,
		description = $6, breed = $7, birth_date = $8, updated_at = $9 WHERE id = $10`,
			p.Name, foldName(p.Name), p.CategoryID, p.Status, p.Price, p.Description, p.Breed, p.BirthDate, tx.now, id); err != nil {
			return nil, fmt.Errorf("update pet: %w", err)
		}
		if stock != p.Stock {
			p.Stock = stock
			if err := tx.writeStock(ctx, p); err != nil {
				return nil, err
			}
		}
		if err := tx.addEvent(ctx, EventPetUpdated, p); err != nil {
			return nil, err
		}
		// One entry per update: pet.price when the price is among the changes
		// (so a filter on pet.price finds every price change), else pet.update.
		changes := diff(before, p.auditFields())
		action := AuditPetUpdate
		if _, ok := changes["price"]; ok {
			action = AuditPetPrice
		}
		if err := tx.audit(action, TargetID(auditTargetPet, id), changes); err != nil {
			return nil, err
		}
		return p, nil
	})
}

// DeletePet soft-deletes a pet: it disappears from the catalog and the
// inventory, its orders stay. Errors: not_found, pet_has_open_orders.
func (s *Store) DeletePet(ctx context.Context, id int64) error {
	return inTxDo(ctx, s, func(tx *Tx) error {
		p, err := tx.lockPet(ctx, id)
		if err != nil {
			return err
		}
		open, err := tx.openOrders(ctx, id)
		if err != nil {
			return err
		}
		if open > 0 {
			return Errorf(EPetHasOpenOrders, "Pet %d has %d open orders.", id, open)
		}
		if _, err := tx.exec(ctx, `UPDATE pets SET deleted_at = $1, updated_at = $1 WHERE id = $2`, tx.now, id); err != nil {
			return fmt.Errorf("delete pet: %w", err)
		}
		if err := tx.addEvent(ctx, EventPetDeleted, map[string]int64{"id": id}); err != nil {
			return err
		}
		if err := tx.audit(AuditPetDelete, TargetID(auditTargetPet, id), diff(p.auditFields(), nil)); err != nil {
			return err
		}
		return nil
	})
}

// lockPet takes the row lock that serialises every change to one pet's
// stock, status and orders. SQLite's immediate transactions already hold the
// database's single write lock.
func (tx *Tx) lockPet(ctx context.Context, id int64) (*Pet, error) {
	q := `SELECT ` + petFields + `
		FROM pets p JOIN inventory i ON i.pet_id = p.id
		WHERE p.id = $1 AND p.deleted_at IS NULL`
	if tx.dialect() == DialectPostgres {
		q += ` FOR UPDATE OF p, i`
	}
	var p Pet
	if err := tx.get(ctx, &p, q, id); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, notFound("Pet", id)
		}
		return nil, fmt.Errorf("lock pet: %w", err)
	}
	p.Currency = tx.store.Currency
	return &p, nil
}

// PetSummary names a pet for an order history: deleted pets included,
// since their orders stay (SPEC §13).
type PetSummary struct {
	ID           int64  `db:"id"`
	Name         string `db:"name"`
	CategoryName string `db:"category_name"`
	Deleted      bool   `db:"deleted"`
}

// FindPetSummaries returns the name and category of each pet in ids that
// ever existed, live or deleted, keyed by id. It reads at most MaxLimit
// ids per query.
func (s *Store) FindPetSummaries(ctx context.Context, ids []int64) (map[int64]*PetSummary, error) {
	out := make(map[int64]*PetSummary, len(ids))
	for len(ids) > 0 {
		batch := ids[:min(len(ids), MaxLimit)]
		ids = ids[len(batch):]
		var w where
		w.add("p.id IN " + in(&w, batch))
		var rows []*PetSummary
		err := s.sel(ctx, &rows, `SELECT p.id, p.name, c.name AS category_name, (p.deleted_at IS NOT NULL) AS deleted
			FROM pets p JOIN categories c ON c.id = p.category_id`+w.String(), w.args...)
		if err != nil {
			return nil, fmt.Errorf("find pet summaries: %w", err)
		}
		for _, r := range rows {
			out[r.ID] = r
		}
	}
	return out, nil
}
