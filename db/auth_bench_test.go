package db_test

import (
	"context"
	"testing"

	"petstore/db"
	"petstore/db/dbtest"
)

// BenchmarkAuthenticate measures one request's key lookup with nothing
// changing: on SQLite a read of the change counter and a cache hit, on
// PostgreSQL the one indexed query.
func BenchmarkAuthenticate(b *testing.B) {
	for _, tc := range []struct {
		name string
		open dbtest.Open
	}{{"sqlite", dbtest.SQLite}, {"postgres", dbtest.Postgres}} {
		b.Run(tc.name, func(b *testing.B) {
			s := tc.open(b)
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
}
