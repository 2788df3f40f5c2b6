package db_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"petstore/db"
	"petstore/db/dbtest"
)

// BenchmarkPlaceOrder measures the API's order as the bench's POST row
// places it, without HTTP: one line of quantity 1 on a random pet of 100
// that never run dry, from 32 goroutines, as an API key. On PostgreSQL
// that is the one-statement order; on SQLite the Go path in a transaction.
// It reports orders/s.
func BenchmarkPlaceOrder(b *testing.B) {
	for _, tc := range []struct {
		name string
		open dbtest.Open
	}{{"sqlite", dbtest.SQLite}, {"postgres", dbtest.Postgres}} {
		b.Run(tc.name, func(b *testing.B) {
			ctx := context.Background()
			s := tc.open(b)
			c := MustCreateCategory(b, ctx, s, "Dogs")
			ids := make([]int64, 100)
			for i := range ids {
				ids[i] = MustCreatePet(b, ctx, s, c.ID, fmt.Sprint("Rex ", i), db.MaxInventoryQuantity).ID
			}
			k := mustAPIKey(b, ctx, s, "bench")
			b.SetParallelism(16) // 32 goroutines on 2 cores, as the bench's workers
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				qty := int64(1)
				for pb.Next() {
					id := ids[rand.IntN(len(ids))]
					if _, err := s.PlaceOrder(ctx, db.Owner{APIKeyID: k.ID}, db.NewOrder{PetID: &id, Quantity: &qty}); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "orders/s")
		})
	}
}
