package db_test

import (
	"context"
	"testing"

	"petstore/db"
	"petstore/db/dbtest"
)

// TestHostileText stores and searches text PostgreSQL's text type cannot
// hold (NUL, bytes that are not UTF-8) and control characters: every
// write is refused as validation_failed naming the field, every search
// finds nothing, and neither reaches the database as an error, on both
// databases.
func TestHostileText(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		s := open(t)
		ctx := context.Background()
		cat := MustCreateCategory(t, ctx, s, "Dogs")
		rex := MustCreatePet(t, ctx, s, cat.ID, "Rex", 1)
		bad := map[string]string{
			"NUL": "Re\x00x", "invalid UTF-8": "Re\xffx", "truncated UTF-8": "Re\xc3", "escape": "Re\x1bx",
			"DEL": "Re\x7fx", "C1 control": "Re\u0085x", "trailing tab": "Rex\t", "leading NEL": "\u0085Rex",
		}
		for what, text := range bad {
			t.Run(what, func(t *testing.T) {
				_, err := s.CreateCategory(ctx, db.NewCategory{Name: ptr(text)})
				wantField(t, err, "name")
				_, err = s.CreateCategory(ctx, db.NewCategory{Name: ptr("Birds"), Description: ptr(text)})
				wantField(t, err, "description")
				_, err = s.UpdateCategory(ctx, cat.ID, db.NewCategory{Name: ptr("Dogs"), Description: ptr(text)})
				wantField(t, err, "description")
				_, err = s.CreatePet(ctx, db.NewPet{Name: ptr(text), CategoryID: &cat.ID})
				wantField(t, err, "name")
				_, err = s.UpdatePet(ctx, rex.ID, db.NewPet{Name: ptr(text), CategoryID: &cat.ID})
				wantField(t, err, "name")
				_, _, err = s.CreateAPIKey(ctx, db.NewAPIKey{Name: ptr(text), Role: ptr(db.RoleCustomer), Plan: ptr(db.PlanFree)})
				wantField(t, err, "name")
				pets, more, err := s.FindPets(ctx, db.PetFilter{Query: text})
				if err != nil || len(pets) != 0 || more {
					t.Errorf("search %q = %d pets, more %v, %v; want none", text, len(pets), more, err)
				}
			})
		}
		// Line breaks are what a textarea sends: a description keeps them.
		c, err := s.CreateCategory(ctx, db.NewCategory{Name: ptr("Fish"), Description: ptr("Wet.\r\nVery wet.\n")})
		if err != nil || c.Description == nil || *c.Description != "Wet.\r\nVery wet.\n" {
			t.Fatalf("description with line breaks = %+v, %v", c, err)
		}
		if pets, _, err := s.FindPets(ctx, db.PetFilter{Query: "REX"}); err != nil || len(pets) != 1 {
			t.Fatalf("search REX = %d pets, %v; want Rex", len(pets), err)
		}
	})
}
