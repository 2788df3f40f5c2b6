package db_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"petstore/db"
	"petstore/db/dbtest"
)

func TestCategories(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		t.Run("OK", func(t *testing.T) {
			s := open(t)
			c, err := s.CreateCategory(ctx, db.NewCategory{Name: ptr("  Dogs "), Description: ptr("Good boys")})
			if err != nil {
				t.Fatal(err)
			}
			want := &db.Category{ID: c.ID, Name: "Dogs", Description: ptr("Good boys")}
			if diff := cmp.Diff(want, c); diff != "" {
				t.Fatalf("created (-want +got):\n%s", diff)
			}
			got, err := s.FindCategoryByID(ctx, c.ID)
			if err != nil || !cmp.Equal(got, want) {
				t.Fatalf("find = %+v, %v", got, err)
			}
			up, err := s.UpdateCategory(ctx, c.ID, db.NewCategory{Name: ptr("Hounds")})
			if err != nil || up.Name != "Hounds" || up.Description != nil {
				t.Fatalf("update = %+v, %v", up, err)
			}
			if err := s.DeleteCategory(ctx, c.ID); err != nil {
				t.Fatal(err)
			}
			_, err = s.FindCategoryByID(ctx, c.ID)
			wantCode(t, err, db.ENotFound)
			// The name is free again once deleted.
			MustCreateCategory(t, ctx, s, "hounds")
		})
		t.Run("ErrCategoryExists", func(t *testing.T) {
			s := open(t)
			MustCreateCategory(t, ctx, s, "Cats")
			_, err := s.CreateCategory(ctx, db.NewCategory{Name: ptr("cATS")})
			wantCode(t, err, db.ECategoryExists)
			other := MustCreateCategory(t, ctx, s, "Birds")
			_, err = s.UpdateCategory(ctx, other.ID, db.NewCategory{Name: ptr("CATS")})
			wantCode(t, err, db.ECategoryExists)
		})
		t.Run("ErrCategoryInUse", func(t *testing.T) {
			s := open(t)
			c := MustCreateCategory(t, ctx, s, "Fish")
			p := MustCreatePet(t, ctx, s, c.ID, "Nemo", 1)
			wantCode(t, s.DeleteCategory(ctx, c.ID), db.ECategoryInUse)
			if err := s.DeletePet(ctx, p.ID); err != nil {
				t.Fatal(err)
			}
			if err := s.DeleteCategory(ctx, c.ID); err != nil {
				t.Fatalf("delete after its pets are gone: %v", err)
			}
		})
		t.Run("ErrValidation", func(t *testing.T) {
			s := open(t)
			for name, in := range map[string]db.NewCategory{
				"missing":  {},
				"blank":    {Name: ptr("   ")},
				"long":     {Name: ptr(strings.Repeat("x", 101))},
				"control":  {Name: ptr("a\x00b")},
				"longDesc": {Name: ptr("ok"), Description: ptr(strings.Repeat("d", 501))},
			} {
				_, err := s.CreateCategory(ctx, in)
				wantCode(t, err, db.EValidationFailed)
				_ = name
			}
			_, err := s.CreateCategory(ctx, db.NewCategory{Name: ptr(strings.Repeat("é", 100))})
			if err != nil {
				t.Fatalf("100 runes must be accepted: %v", err)
			}
		})
		t.Run("ErrNotFound", func(t *testing.T) {
			s := open(t)
			_, err := s.UpdateCategory(ctx, 999, db.NewCategory{Name: ptr("x")})
			wantCode(t, err, db.ENotFound)
			wantCode(t, s.DeleteCategory(ctx, 999), db.ENotFound)
		})
		t.Run("Paging", func(t *testing.T) {
			s := open(t)
			for _, n := range []string{"a", "b", "c", "d"} {
				MustCreateCategory(t, ctx, s, n)
			}
			page, more, err := s.FindCategories(ctx, db.Page{Limit: 2})
			if err != nil || len(page) != 2 || !more {
				t.Fatalf("page 1 = %d rows, more=%v, %v", len(page), more, err)
			}
			page, more, err = s.FindCategories(ctx, db.Page{Limit: 2, AfterID: page[1].ID})
			if err != nil || len(page) != 2 || more {
				t.Fatalf("exactly full last page = %d rows, more=%v, %v", len(page), more, err)
			}
		})
	})
}

func TestPets(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		t.Run("CreateDefaults", func(t *testing.T) {
			s := open(t)
			c := MustCreateCategory(t, ctx, s, "Dogs")
			p, err := s.CreatePet(ctx, db.NewPet{Name: ptr("Rex"), CategoryID: &c.ID})
			if err != nil {
				t.Fatal(err)
			}
			wantState(t, ctx, s, p.ID, db.StatusAvailable, 1)
			sold, err := s.CreatePet(ctx, db.NewPet{Name: ptr("Old"), CategoryID: &c.ID, Status: ptr("sold")})
			if err != nil {
				t.Fatal(err)
			}
			wantState(t, ctx, s, sold.ID, db.StatusSold, 0)
		})
		t.Run("ErrValidation", func(t *testing.T) {
			s := open(t)
			c := MustCreateCategory(t, ctx, s, "Dogs")
			cases := map[string]struct {
				in    db.NewPet
				field string
			}{
				"pending":         {db.NewPet{Name: ptr("a"), CategoryID: &c.ID, Status: ptr("pending")}, "status"},
				"unknownStatus":   {db.NewPet{Name: ptr("a"), CategoryID: &c.ID, Status: ptr("lost")}, "status"},
				"noName":          {db.NewPet{CategoryID: &c.ID}, "name"},
				"noCategory":      {db.NewPet{Name: ptr("a")}, "categoryId"},
				"unknownCategory": {db.NewPet{Name: ptr("a"), CategoryID: ptr(int64(4242))}, "categoryId"},
			}
			for name, tc := range cases {
				t.Run(name, func(t *testing.T) {
					_, err := s.CreatePet(ctx, tc.in)
					wantCode(t, err, db.EValidationFailed)
					if e := err.(*db.Error); len(e.Details) == 0 || e.Details[0].Field != tc.field {
						t.Fatalf("details = %+v, want field %s", e.Details, tc.field)
					}
				})
			}
		})
		t.Run("Filters", func(t *testing.T) {
			s := open(t)
			dogs := MustCreateCategory(t, ctx, s, "Dogs")
			cats := MustCreateCategory(t, ctx, s, "Cats")
			rex := MustCreatePet(t, ctx, s, dogs.ID, "Rex", 3)
			rexy := MustCreatePet(t, ctx, s, dogs.ID, "Big REXY", 0)
			tom := MustCreatePet(t, ctx, s, cats.ID, "Tom_100%", 1)
			names := func(f db.PetFilter) []int64 {
				t.Helper()
				ps, _, err := s.FindPets(ctx, f)
				if err != nil {
					t.Fatal(f, err)
				}
				ids := []int64{}
				for _, p := range ps {
					ids = append(ids, p.ID)
				}
				return ids
			}
			for name, tc := range map[string]struct {
				f    db.PetFilter
				want []int64
			}{
				"all":             {db.PetFilter{}, []int64{rex.ID, rexy.ID, tom.ID}},
				"status":          {db.PetFilter{Statuses: []string{"sold"}}, []int64{rexy.ID}},
				"statuses":        {db.PetFilter{Statuses: []string{"sold", "available"}}, []int64{rex.ID, rexy.ID, tom.ID}},
				"category":        {db.PetFilter{CategoryID: cats.ID}, []int64{tom.ID}},
				"queryFolded":     {db.PetFilter{Query: "rEx"}, []int64{rex.ID, rexy.ID}},
				"queryLiteral":    {db.PetFilter{Query: "_100%"}, []int64{tom.ID}},
				"wildcardNoMatch": {db.PetFilter{Query: "%x"}, []int64{}},
				"ids":             {db.PetFilter{IDs: []int64{tom.ID, rex.ID, 999}}, []int64{rex.ID, tom.ID}},
			} {
				if diff := cmp.Diff(tc.want, names(tc.f)); diff != "" {
					t.Errorf("%s (-want +got):\n%s", name, diff)
				}
			}
		})
		t.Run("SoftDelete", func(t *testing.T) {
			s, p := storeWithPet(t, open, 2)
			o := mustOrder(t, ctx, s, db.Owner{APIKeyID: 0}, p.ID, 1)
			wantCode(t, s.DeletePet(ctx, p.ID), db.EPetHasOpenOrders)
			if _, err := s.UpdateOrder(ctx, o.ID, db.OrderUpdate{Complete: ptr(true)}); err != nil {
				t.Fatal(err)
			}
			if err := s.DeletePet(ctx, p.ID); err != nil {
				t.Fatal(err)
			}
			_, err := s.FindPetByID(ctx, p.ID)
			wantCode(t, err, db.ENotFound)
			_, err = s.FindInventoryItem(ctx, p.ID)
			wantCode(t, err, db.ENotFound)
			items, _, _ := s.FindInventory(ctx, db.InventoryFilter{})
			if len(items) != 0 {
				t.Fatalf("deleted pet still in inventory: %+v", items)
			}
			// Its orders stay.
			if got, err := s.FindOrderByID(ctx, o.ID, nil); err != nil || got.PetID != p.ID {
				t.Fatalf("order of deleted pet = %+v, %v", got, err)
			}
			wantCode(t, s.DeletePet(ctx, p.ID), db.ENotFound)
			_, err = s.PlaceOrder(ctx, db.Owner{}, db.NewOrder{PetID: &p.ID, Quantity: ptr(int64(1))})
			wantCode(t, err, db.EValidationFailed)
		})
	})
}

func TestFindPetSummaries(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s := open(t)
		cat := MustCreateCategory(t, ctx, s, "Dogs")
		rex := MustCreatePet(t, ctx, s, cat.ID, "Rex", 2)
		gone := MustCreatePet(t, ctx, s, cat.ID, "Gone", 1)
		if err := s.DeletePet(ctx, gone.ID); err != nil {
			t.Fatal(err)
		}
		got, err := s.FindPetSummaries(ctx, []int64{rex.ID, gone.ID, 9999})
		if err != nil {
			t.Fatal(err)
		}
		want := map[int64]*db.PetSummary{
			rex.ID:  {ID: rex.ID, Name: "Rex", CategoryName: "Dogs"},
			gone.ID: {ID: gone.ID, Name: "Gone", CategoryName: "Dogs", Deleted: true},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("summaries (-want +got):\n%s", diff)
		}
		if got, err := s.FindPetSummaries(ctx, nil); err != nil || len(got) != 0 {
			t.Fatalf("no ids = %v, %v; want empty", got, err)
		}
	})
}

// CountPetsByCategory counts live pets, sold ones included, deleted ones
// not, and leaves out categories without any.
func TestCountPetsByCategory(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s := open(t)
		cats := MustCreateCategory(t, ctx, s, "Cats")
		dogs := MustCreateCategory(t, ctx, s, "Dogs")
		MustCreateCategory(t, ctx, s, "Empty")
		MustCreatePet(t, ctx, s, cats.ID, "Plenty", 10)
		MustCreatePet(t, ctx, s, cats.ID, "None", 0)
		MustCreatePet(t, ctx, s, dogs.ID, "Rex", 1)
		gone := MustCreatePet(t, ctx, s, dogs.ID, "Gone", 1)
		if err := s.DeletePet(ctx, gone.ID); err != nil {
			t.Fatal(err)
		}
		got, err := s.CountPetsByCategory(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(map[int64]int{cats.ID: 2, dogs.ID: 1}, got); diff != "" {
			t.Errorf("pets by category (-want +got):\n%s", diff)
		}
	})
}
