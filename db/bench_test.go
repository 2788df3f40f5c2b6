package db_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"petstore/db"
	"petstore/db/dbtest"
)

// BenchmarkAuthenticate measures one request's key lookup with nothing
// changing: on SQLite a read of the change counter and a cache hit, on
// PostgreSQL the one indexed query.
func BenchmarkAuthenticate(b *testing.B) {
	benchEach(b, func(b *testing.B, s *db.Store) {
		ctx := context.Background()
		name, role, plan := "bench", db.RoleCustomer, db.PlanPro
		_, plain, err := s.CreateAPIKey(ctx, db.NewAPIKey{Name: &name, Role: &role, Plan: &plan})
		if err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := s.Authenticate(ctx, plain); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
}

// BenchmarkPlaceOrder measures the API's order as the bench's POST row
// places it, without HTTP: one line of quantity 1 on a random pet of 100
// that never run dry, from 32 goroutines, as an API key. On PostgreSQL
// that is the one-statement order; on SQLite the Go path in a transaction.
// It reports orders/s.
func BenchmarkPlaceOrder(b *testing.B) {
	benchEach(b, func(b *testing.B, s *db.Store) {
		ctx := context.Background()
		pets := stockedPets(b, ctx, s, 100)
		owner := db.Owner{APIKeyID: mustAPIKey(b, ctx, s, "bench").ID}
		b.SetParallelism(16) // 32 goroutines on 2 cores, as the bench's workers
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			one := int64(1)
			for pb.Next() {
				pet := pets[rand.IntN(len(pets))]
				if _, err := s.PlaceOrder(ctx, owner, db.NewOrder{PetID: &pet, Quantity: &one}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "orders/s")
	})
}

// stockedPets adds n pets with the most stock a pet may have and returns
// their ids.
func stockedPets(b *testing.B, ctx context.Context, s *db.Store, n int) []int64 {
	b.Helper()
	cat := MustCreateCategory(b, ctx, s, "Dogs")
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = MustCreatePet(b, ctx, s, cat.ID, fmt.Sprint("Rex ", i), db.MaxInventoryQuantity).ID
	}
	return ids
}

// benchEach runs fn as a sub-benchmark on a fresh store of each database:
// SQLite, and PostgreSQL when configured.
func benchEach(b *testing.B, fn func(b *testing.B, s *db.Store)) {
	for _, tc := range []struct {
		name string
		open dbtest.Open
	}{{"sqlite", dbtest.SQLite}, {"postgres", dbtest.Postgres}} {
		b.Run(tc.name, func(b *testing.B) { fn(b, tc.open(b)) })
	}
}
