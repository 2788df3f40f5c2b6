package main

import (
	"context"
	"slices"
	"strconv"
	"testing"

	"petstore/db"
	"petstore/db/dbtest"
)

// TestCLIChangesAreAudited: what the command line changes is in the audit
// log as the command line's (SPEC §16), on both databases; reading changes
// nothing and writes nothing.
func TestCLIChangesAreAudited(t *testing.T) {
	t.Parallel() // the command line and configuration only: no shared state, no timing
	dbtest.EachURL(t, func(t *testing.T, rawURL string) {
		vars := map[string]string{"DATABASE_URL": rawURL}
		if _, err := runCLI(t, vars, "", "seed"); err != nil {
			t.Fatalf("seed: %v", err)
		}
		if _, err := runCLI(t, vars, "", "keys", "create", "--name", "ci", "--role", "staff", "--plan", "pro"); err != nil {
			t.Fatalf("keys create: %v", err)
		}
		if _, err := runCLI(t, vars, "", "keys", "list"); err != nil {
			t.Fatalf("keys list: %v", err)
		}
		s := dbtest.OpenURL(t, rawURL)
		ctx := context.Background()
		ks, _, err := s.FindAPIKeys(ctx, db.Page{})
		if err != nil || len(ks) != 1 {
			t.Fatalf("keys %v, %v", ks, err)
		}
		if _, err := runCLI(t, vars, "", "keys", "revoke", strconv.FormatInt(ks[0].ID, 10)); err != nil {
			t.Fatalf("keys revoke: %v", err)
		}
		es, _, err := s.FindAudit(ctx, db.AuditFilter{}, db.Page{})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range es {
			got = append(got, e.Action)
			if e.Actor.Type != db.ActorCLI || e.Actor.ID != "" || e.Actor.Name == "" || e.RequestID != "" {
				t.Errorf("%s: actor %+v (request %q), want the command line's", e.Action, e.Actor, e.RequestID)
			}
		}
		if want := []string{db.AuditKeyRevoke, db.AuditKeyCreate, db.AuditCatalogSeed}; !slices.Equal(got, want) {
			t.Errorf("entries %v, want %v", got, want)
		}
		if es[1].Target != db.TargetID("key", ks[0].ID) {
			t.Errorf("key.create's target = %+v", es[1].Target)
		}
	})
}
