package db_test

import (
	"context"
	"testing"

	"petstore/db/dbtest"
)

func TestFindLowStock(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s := open(t)
		c := MustCreateCategory(t, ctx, s, "Cats")
		MustCreatePet(t, ctx, s, c.ID, "Plenty", 10)
		two := MustCreatePet(t, ctx, s, c.ID, "Two", 2)
		one := MustCreatePet(t, ctx, s, c.ID, "One", 1)
		MustCreatePet(t, ctx, s, c.ID, "None", 0)
		pets, err := s.FindLowStock(ctx, 2, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(pets) != 2 || pets[0].ID != one.ID || pets[1].ID != two.ID {
			t.Fatalf("low stock = %+v, want One then Two", pets)
		}
		if pets[0].CategoryName != "Cats" || pets[0].Stock != 1 {
			t.Errorf("pet = %+v", pets[0])
		}
	})
}
