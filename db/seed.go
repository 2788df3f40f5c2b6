package db

import (
	"context"
	"fmt"
)

// demoCatalog is the demo data of a first start.
var demoCatalog = []struct {
	category, description string
	pets                  []string
}{
	{"Dogs", "Loyal companions of every size.", []string{"Rex", "Bella", "Max", "Luna", "Charlie", "Daisy"}},
	{"Cats", "Independent, curious and fond of naps.", []string{"Milo", "Cleo", "Oliver", "Nala", "Simba"}},
	{"Birds", "Singers and talkers.", []string{"Kiwi", "Sunny", "Blue", "Polly"}},
	{"Fish", "Quiet company for a calm home.", []string{"Bubbles", "Nemo", "Goldie"}},
	{"Reptiles", "Scales, patience and a warm lamp.", []string{"Spike", "Shelly", "Iggy"}},
}

// IsEmpty reports whether the catalog has never had a category.
func (s *Store) IsEmpty(ctx context.Context) (bool, error) {
	var n int
	if err := s.get(ctx, &n, `SELECT count(*) FROM categories`); err != nil {
		return false, fmt.Errorf("count categories: %w", err)
	}
	return n == 0, nil
}

// SeedDemo adds the demo categories and pets, with varied stock. Categories
// that already exist are reused, so seeding twice adds pets twice but never
// fails.
func (s *Store) SeedDemo(ctx context.Context) error {
	n := 0
	for _, c := range demoCatalog {
		name, desc := c.category, c.description
		cat, err := s.CreateCategory(ctx, NewCategory{Name: &name, Description: &desc})
		if ErrorCode(err) == ECategoryExists {
			cat, err = s.findCategoryByName(ctx, name)
		}
		if err != nil {
			return fmt.Errorf("seed category %s: %w", name, err)
		}
		for _, petName := range c.pets {
			petName := petName
			p, err := s.CreatePet(ctx, NewPet{Name: &petName, CategoryID: &cat.ID})
			if err != nil {
				return fmt.Errorf("seed pet %s: %w", petName, err)
			}
			n++
			qty := int64(n % 7) // some sold out, most in stock
			if qty == 1 {
				continue
			}
			if _, err := s.SetInventory(ctx, p.ID, InventoryUpdate{Quantity: &qty}); err != nil {
				return fmt.Errorf("seed stock %s: %w", petName, err)
			}
		}
	}
	return nil
}

func (s *Store) findCategoryByName(ctx context.Context, name string) (*Category, error) {
	var c Category
	err := s.get(ctx, &c, `SELECT `+categoryCols+` FROM categories WHERE name_key = $1 AND deleted_at IS NULL`, foldName(name))
	if err != nil {
		return nil, fmt.Errorf("find category %s: %w", name, err)
	}
	return &c, nil
}
