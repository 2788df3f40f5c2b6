package db_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"petstore/db"
	"petstore/db/dbtest"
)

// The fields of SPEC §14 on a pet: set on create, kept by a PUT that omits
// them, cleared by null, refused when invalid.
func TestPetProfile(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s := open(t)
		c := MustCreateCategory(t, ctx, s, "Dogs")
		born := s.Now().AddDate(-2, 0, 0).Format(time.DateOnly)
		in := db.NewPet{Name: ptr("Rex"), CategoryID: &c.ID, Price: ptr("129.5"),
			Description: db.Set("Loyal.\nHouse-trained."), Breed: db.Set("  Beagle "), BirthDate: db.Set(born)}
		p, err := s.CreatePet(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		want := func(t *testing.T, p *db.Pet, price db.Money, desc, breed, birth string) {
			t.Helper()
			str := func(v *string) string {
				if v == nil {
					return "<nil>"
				}
				return *v
			}
			if p.Price != price || str(p.Description) != desc || str(p.Breed) != breed || str(p.BirthDate) != birth || p.Currency != "EUR" {
				t.Fatalf("pet = price %s %s, %q, %q, %q; want %s EUR, %q, %q, %q",
					p.Price, p.Currency, str(p.Description), str(p.Breed), str(p.BirthDate), price, desc, breed, birth)
			}
			if p.Photos == nil || len(p.Photos) != 0 {
				t.Fatalf("photos = %#v, want empty, not nil", p.Photos)
			}
		}
		want(t, p, 12950, "Loyal.\nHouse-trained.", "Beagle", born)
		got, err := s.FindPetByID(ctx, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		want(t, got, 12950, "Loyal.\nHouse-trained.", "Beagle", born)

		// A PUT without them keeps them.
		got, err = s.UpdatePet(ctx, p.ID, db.NewPet{Name: ptr("Rex II"), CategoryID: &c.ID})
		if err != nil {
			t.Fatal(err)
		}
		want(t, got, 12950, "Loyal.\nHouse-trained.", "Beagle", born)
		pets, _, err := s.FindPets(ctx, db.PetFilter{})
		if err != nil || len(pets) != 1 {
			t.Fatalf("list: %v, %d pets", err, len(pets))
		}
		want(t, pets[0], 12950, "Loyal.\nHouse-trained.", "Beagle", born)

		// null clears, a new price replaces.
		got, err = s.UpdatePet(ctx, p.ID, db.NewPet{Name: ptr("Rex"), CategoryID: &c.ID, Price: ptr("0"),
			Description: db.Clear[string](), Breed: db.Clear[string](), BirthDate: db.Clear[string]()})
		if err != nil {
			t.Fatal(err)
		}
		want(t, got, 0, "<nil>", "<nil>", "<nil>")
		got, _ = s.FindPetByID(ctx, p.ID)
		want(t, got, 0, "<nil>", "<nil>", "<nil>")

		// A new pet without them: no fee, nothing else.
		bare := MustCreatePet(t, ctx, s, c.ID, "Tom", 1)
		want(t, bare, 0, "<nil>", "<nil>", "<nil>")
	})
}

func TestPetProfileInvalid(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s := open(t)
		c := MustCreateCategory(t, ctx, s, "Dogs")
		today := s.Now().UTC()
		for name, tc := range map[string]struct {
			in    func(*db.NewPet)
			field string
		}{
			"ErrPriceDecimals":    {func(p *db.NewPet) { p.Price = ptr("12.345") }, "price"},
			"ErrPriceNegative":    {func(p *db.NewPet) { p.Price = ptr("-1") }, "price"},
			"ErrPriceTooLarge":    {func(p *db.NewPet) { p.Price = ptr("12345678") }, "price"},
			"ErrPriceText":        {func(p *db.NewPet) { p.Price = ptr("abc") }, "price"},
			"ErrDescriptionLong":  {func(p *db.NewPet) { p.Description = db.Set(strings.Repeat("é", 2001)) }, "description"},
			"ErrDescriptionBell":  {func(p *db.NewPet) { p.Description = db.Set("ring\x07") }, "description"},
			"ErrDescriptionNUL":   {func(p *db.NewPet) { p.Description = db.Set("a\x00b") }, "description"},
			"ErrBreedEmpty":       {func(p *db.NewPet) { p.Breed = db.Set("   ") }, "breed"},
			"ErrBreedLong":        {func(p *db.NewPet) { p.Breed = db.Set(strings.Repeat("b", 101)) }, "breed"},
			"ErrBreedControl":     {func(p *db.NewPet) { p.Breed = db.Set("Bea\tgle") }, "breed"},
			"ErrBirthDateFuture":  {func(p *db.NewPet) { p.BirthDate = db.Set(today.AddDate(0, 0, 1).Format(time.DateOnly)) }, "birthDate"},
			"ErrBirthDateNotDay":  {func(p *db.NewPet) { p.BirthDate = db.Set("2024-02-30") }, "birthDate"},
			"ErrBirthDateFormat":  {func(p *db.NewPet) { p.BirthDate = db.Set("1/2/2024") }, "birthDate"},
			"ErrBirthDateTime":    {func(p *db.NewPet) { p.BirthDate = db.Set("2024-01-02T00:00:00Z") }, "birthDate"},
			"ErrBirthDateAncient": {func(p *db.NewPet) { p.BirthDate = db.Set("1899-12-31") }, "birthDate"},
		} {
			t.Run(name, func(t *testing.T) {
				in := db.NewPet{Name: ptr("Rex"), CategoryID: &c.ID}
				tc.in(&in)
				_, err := s.CreatePet(ctx, in)
				wantField(t, err, tc.field)
			})
		}
		// Today is a birth date; 2,000 characters with line breaks are a description.
		long := strings.Repeat("line\r\n", 333) + "ab"
		if _, err := s.CreatePet(ctx, db.NewPet{Name: ptr("Newborn"), CategoryID: &c.ID,
			BirthDate: db.Set(today.Format(time.DateOnly)), Description: db.Set(long)}); err != nil {
			t.Fatalf("born today, 2000 characters: %v", err)
		}
	})
}
