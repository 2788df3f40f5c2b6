package db_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"petstore/db"
	"petstore/db/dbtest"
)

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
