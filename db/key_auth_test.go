package db_test

import (
	"context"
	"strings"
	"testing"

	"petstore/db"
	"petstore/db/dbtest"
)

func TestAuthenticate(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s := open(t)
		k, plain := mustCreateKey(t, ctx, s, newKey("a", db.RoleStaff, db.PlanPro))
		t.Run("OK", func(t *testing.T) {
			got, err := s.Authenticate(ctx, plain)
			if err != nil {
				t.Fatal(err)
			}
			if got.ID != k.ID || got.Role != db.RoleStaff || got.Plan != db.PlanPro {
				t.Fatalf("authenticated = %+v, want key %d staff/pro", got, k.ID)
			}
		})
		t.Run("ErrUnauthorized", func(t *testing.T) {
			for name, key := range map[string]string{
				"unknown":     "psk_" + strings.Repeat("A", 43),
				"noPrefix":    plain[4:],
				"empty":       "",
				"hashItself":  db.HashKey(plain),
				"oneCharLess": plain[:len(plain)-1],
			} {
				_, err := s.Authenticate(ctx, key)
				if db.ErrorCode(err) != db.EUnauthorized {
					t.Errorf("%s: got %q (%v), want unauthorized", name, db.ErrorCode(err), err)
				}
			}
		})
		t.Run("ErrUnauthorizedRevoked", func(t *testing.T) {
			if err := s.RevokeAPIKey(ctx, k.ID); err != nil {
				t.Fatal(err)
			}
			if err := s.RevokeAPIKey(ctx, k.ID); err != nil {
				t.Fatalf("revoke twice: %v", err)
			}
			_, err := s.Authenticate(ctx, plain)
			wantCode(t, err, db.EUnauthorized)
			got, err := s.FindAPIKeyByID(ctx, k.ID)
			if err != nil || got.RevokedAt == nil {
				t.Fatalf("revoked key = %+v, %v, want revokedAt set", got, err)
			}
			wantCode(t, s.RevokeAPIKey(ctx, 4242), db.ENotFound)
		})
	})
}
