package db_test

import (
	"context"
	"strings"
	"testing"

	"petstore/db"
	"petstore/db/dbtest"
)

// TestPetDescriptionTrim: a pet's description is kept trimmed and counted
// once trimmed, but a control character is refused wherever it stands, at
// an end too, where strings.TrimSpace would have dropped a tab or a U+0085
// (the API document's pattern sees the text as sent, and refuses it).
func TestPetDescriptionTrim(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s := open(t)
		c := MustCreateCategory(t, ctx, s, "Dogs")
		create := func(desc string) (*db.Pet, error) {
			return s.CreatePet(ctx, db.NewPet{Name: ptr("Rex"), CategoryID: &c.ID, Description: db.Set(desc)})
		}
		for _, bad := range []string{"\tCalm.", "Calm.\t", "Calm.\u0085", "\u0085Calm.", "Ca\x07lm.", "\x00"} {
			t.Run("ErrControl"+strings.NewReplacer("\t", "Tab", "\u0085", "NEL", "\x07", "Bell", "\x00", "NUL").Replace(bad), func(t *testing.T) {
				_, err := create(bad)
				wantField(t, err, "description")
			})
		}
		t.Run("ErrTooLong", func(t *testing.T) {
			_, err := create(strings.Repeat("x", db.MaxPetDescriptionLen+1))
			wantField(t, err, "description")
		})
		for _, tc := range []struct{ name, in, want string }{
			{"OKLineBreaksKept", "Calm.\r\nLoves walks.", "Calm.\r\nLoves walks."},
			{"OKTrimmed", "  \r\nCalm.\n\n ", "Calm."},
			{"OKLongestOnceTrimmed", " " + strings.Repeat("é", db.MaxPetDescriptionLen) + "\n", strings.Repeat("é", db.MaxPetDescriptionLen)},
		} {
			t.Run(tc.name, func(t *testing.T) {
				p, err := create(tc.in)
				if err != nil {
					t.Fatal(err)
				}
				got, err := s.FindPetByID(ctx, p.ID)
				if err != nil {
					t.Fatal(err)
				}
				if got.Description == nil || *got.Description != tc.want {
					t.Fatalf("description = %v, want %q", got.Description, tc.want)
				}
			})
		}
		t.Run("OKWhiteSpaceClears", func(t *testing.T) {
			p, err := create(" \n ")
			if err != nil {
				t.Fatal(err)
			}
			if p.Description != nil {
				t.Fatalf("description = %q, want none", *p.Description)
			}
		})
	})
}
