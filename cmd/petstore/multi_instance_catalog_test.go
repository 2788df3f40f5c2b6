package main

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"petstore/db"
)

// TestMultiInstanceCatalogAnswers: each instance keeps the catalog and
// inventory answers it served and reuses them while the catalog's change
// counter is unchanged (web.Conditional). A change written through either
// instance must show in the very next GET on both, even while other
// clients keep both instances' remembered answers hot and racing with the
// writes: stock set through A or B, then read from both, 40 times over.
func TestMultiInstanceCatalogAnswers(t *testing.T) {
	a, b := startPair(t, nil)
	staff, _ := issueKey(t, a.srv.Store, "staff", db.RoleStaff, 1_000_000, 10_000_000)
	reader, _ := issueKey(t, a.srv.Store, "reader", db.RoleCustomer, 1_000_000, 10_000_000)
	c := newClient(t)
	pet := seedPet(t, c, a, staff, 1)
	nodes := []*node{a, b}
	paths := []string{
		fmt.Sprintf("/api/store/inventory/%d", pet.ID),
		fmt.Sprintf("/api/pets?ids=%d", pet.ID),
		"/api/pets?limit=5",
	}

	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ctx.Err() == nil; n++ {
				call(c, "GET", nodes[(i+n)%2].base+paths[n%len(paths)], reader, nil)
			}
		}()
	}
	defer func() {
		stop()
		wg.Wait()
	}()

	for k := int64(2); k <= 41; k++ {
		writer := nodes[k%2]
		call(c, "PUT", fmt.Sprintf("%s/api/store/inventory/%d", writer.base, pet.ID), staff, map[string]any{"quantity": k}).must(t, 200, nil)
		name := fmt.Sprintf("Tom %d", k)
		call(c, "PUT", fmt.Sprintf("%s/api/pets/%d", writer.base, pet.ID), staff, map[string]any{"name": name, "categoryId": pet.CategoryID}).must(t, 200, nil)
		for _, n := range nodes {
			var it db.InventoryItem
			call(c, "GET", n.base+paths[0], reader, nil).must(t, 200, &it)
			if it.Quantity != k {
				t.Fatalf("write %d through %s: %s answers stock %d, want %d", k, writer.name, n.name, it.Quantity, k)
			}
			var list []db.Pet
			call(c, "GET", n.base+paths[1], reader, nil).must(t, 200, &list)
			var page []db.Pet
			call(c, "GET", n.base+paths[2], reader, nil).must(t, 200, &page)
			if len(list) != 1 || list[0].Name != name || len(page) != 1 || page[0].Name != name {
				t.Fatalf("write %d through %s: %s answers %+v and %+v, want the name %q", k, writer.name, n.name, list, page, name)
			}
		}
	}
}
