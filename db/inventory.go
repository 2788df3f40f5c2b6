package db

import (
	"context"
	"fmt"
)

// InventoryItem is the stock entry of one live pet.
type InventoryItem struct {
	PetID    int64  `db:"pet_id" json:"petId"`
	Quantity int64  `db:"quantity" json:"quantity"`
	Status   string `db:"status" json:"status"`
}

// InventoryUpdate sets a pet's stock.
type InventoryUpdate struct {
	Quantity *int64 `json:"quantity"`
}

// Validate checks the quantity is present and within 0–1,000,000.
func (u *InventoryUpdate) Validate() error {
	var p Problems
	switch {
	case u.Quantity == nil:
		p.Add("quantity", "is required")
	case *u.Quantity < 0 || *u.Quantity > MaxInventoryQuantity:
		p.Add("quantity", "must be between 0 and %d", MaxInventoryQuantity)
	}
	return p.Err()
}

// InventoryFilter selects inventory entries.
type InventoryFilter struct {
	Statuses []string
	Page
}

const inventoryCols = `i.pet_id, i.quantity, p.status`
const inventoryFrom = ` FROM inventory i JOIN pets p ON p.id = i.pet_id`

// FindInventory lists the entries of live pets by pet id.
func (s *Store) FindInventory(ctx context.Context, f InventoryFilter) ([]*InventoryItem, bool, error) {
	// Keyed on p.id (equal to i.pet_id) so the status filter walks pets'
	// (status, id) index.
	l := list{from: `SELECT ` + inventoryCols + inventoryFrom, key: "p.id", out: "pet_id", status: "p.status",
		conds: func(w *where) {
			w.add("p.deleted_at IS NULL")
			afterOnInventory(w, f.Page)
		}}
	query, args := l.build(f.Statuses, f.Page)
	sel := s.listSelector(len(f.Statuses) > 0)
	return selectPageWith[*InventoryItem](ctx, sel, "inventory", f.Page, query, args...)
}

// FindInventoryItem returns one live pet's entry. Errors: not_found.
func (s *Store) FindInventoryItem(ctx context.Context, petID int64) (*InventoryItem, error) {
	return findOne[InventoryItem](ctx, s.get, "inventory item", notFound("Pet", petID),
		`SELECT `+inventoryCols+inventoryFrom+` WHERE i.pet_id = $1 AND p.deleted_at IS NULL`, petID)
}

// SetInventory sets a pet's stock and derives its status: n > 0 is
// available, 0 is pending or sold by its open orders.
// Errors: validation_failed, not_found.
func (s *Store) SetInventory(ctx context.Context, petID int64, u InventoryUpdate) (*InventoryItem, error) {
	if err := u.Validate(); err != nil {
		return nil, err
	}
	return inTx(ctx, s, func(tx *Tx) (*InventoryItem, error) {
		p, err := tx.lockPet(ctx, petID)
		if err != nil {
			return nil, err
		}
		open, err := tx.openOrders(ctx, petID)
		if err != nil {
			return nil, err
		}
		before := fields{"quantity": p.Stock, "status": p.Status}
		p.Stock = *u.Quantity
		p.Status = deriveStatus(p.Stock, open)
		if err := tx.writeStock(ctx, p); err != nil {
			return nil, err
		}
		after := fields{"quantity": p.Stock, "status": p.Status}
		if err := tx.audit(AuditInventorySet, TargetID(auditTargetPet, petID), diff(before, after)); err != nil {
			return nil, err
		}
		return p.Inventory(), nil
	})
}

// LowStockMax is the stock at or under which an available pet is low.
// The low_stock table (migration 00023) keeps the pets in stock at or
// under it, by triggers that test the same number.
const LowStockMax = 2

// FindLowStock lists the available pets with 1 to LowStockMax in stock,
// the scarcest first, at most limit of them. It walks low_stock by
// quantity (migration 00023) and stops after limit live pets, however
// many pets the shop has; an order of a pet in plenty writes nothing
// there (on PostgreSQL its stock update stays a HOT update).
func (s *Store) FindLowStock(ctx context.Context, limit int) ([]*Pet, error) {
	var pets []*Pet
	err := s.sel(ctx, &pets, `SELECT `+petCols+` FROM low_stock l JOIN inventory i ON i.pet_id = l.pet_id JOIN pets p ON p.id = l.pet_id JOIN categories c ON c.id = p.category_id
		WHERE p.deleted_at IS NULL AND p.status = 'available'
		ORDER BY l.quantity, l.pet_id LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("find low stock: %w", err)
	}
	return pets, nil
}

// deriveStatus is the invariant of SPEC §5: available ⇔ stock > 0;
// pending ⇔ stock = 0 with open orders; sold ⇔ stock = 0 without.
func deriveStatus(stock int64, openOrders int) string {
	switch {
	case stock > 0:
		return StatusAvailable
	case openOrders > 0:
		return StatusPending
	default:
		return StatusSold
	}
}

// openOrders counts the pet's orders that are neither complete nor cancelled.
func (tx *Tx) openOrders(ctx context.Context, petID int64) (int, error) {
	var n int
	if err := tx.get(ctx, &n, `SELECT count(*) FROM orders WHERE pet_id = $1 AND state = 'open'`, petID); err != nil {
		return 0, fmt.Errorf("count open orders: %w", err)
	}
	return n, nil
}

// writeStock stores p.Stock and p.Status and records inventory.updated.
func (tx *Tx) writeStock(ctx context.Context, p *Pet) error {
	if err := tx.storeStock(ctx, p); err != nil {
		return err
	}
	return tx.addEvent(ctx, EventInventoryUpdated, p.Inventory())
}

// storeStock stores p.Stock and p.Status. The pet's row is written only
// when its status changes: most orders leave a pet available, and an
// unchanged row would cost a write, its triggers' writes and WAL for
// nothing (updated_at is the time of the row's last change).
func (tx *Tx) storeStock(ctx context.Context, p *Pet) error {
	if _, err := tx.exec(ctx, `UPDATE inventory SET quantity = $1, updated_at = $2 WHERE pet_id = $3`, p.Stock, tx.now, p.ID); err != nil {
		return fmt.Errorf("update stock: %w", err)
	}
	if _, err := tx.exec(ctx, `UPDATE pets SET status = $1, updated_at = $2 WHERE id = $3 AND status <> $1`, p.Status, tx.now, p.ID); err != nil {
		return fmt.Errorf("update status: %w", err)
	}
	return nil
}

// Inventory is the pet's inventory entry.
func (p *Pet) Inventory() *InventoryItem {
	return &InventoryItem{PetID: p.ID, Quantity: p.Stock, Status: p.Status}
}
