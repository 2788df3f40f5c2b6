package db_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"petstore/db"
	"petstore/db/dbtest"
)

// purgeCase is one kind of row housekeeping purges: add makes one, labelled,
// at the store's clock; left lists the labels of those still stored.
type purgeCase struct {
	name   string
	keep   time.Duration // rows exactly this old are still kept...
	atEdge bool          // ...unless the rule is "at most", like the idempotency window
	purge  func(*db.Store) func(context.Context) (int64, error)
	add    func(t *testing.T, s *db.Store, label string)
	left   func(t *testing.T, s *db.Store) []string
}

var purgeCases = []purgeCase{
	{
		name: "idempotency records", keep: db.IdempotencyTTL, atEdge: true,
		purge: func(s *db.Store) func(context.Context) (int64, error) { return s.PurgeIdempotencyKeys },
		add: func(t *testing.T, s *db.Store, label string) {
			ctx := context.Background()
			mustBegin(t, ctx, s, "key:1", label, "h")
			if err := s.FinishIdempotent(ctx, "key:1", label, db.StoredResponse{Status: 201, Body: []byte(`{}`)}); err != nil {
				t.Fatal(err)
			}
		},
		left: func(t *testing.T, s *db.Store) []string { return column(t, s, `SELECT key FROM idempotency_keys`) },
	},
	{
		name: "login failures", keep: db.LoginFailureRetention,
		purge: func(s *db.Store) func(context.Context) (int64, error) { return s.PurgeLoginFailures },
		add: func(t *testing.T, s *db.Store, label string) {
			if err := s.RecordLoginFailure(context.Background(), label, "192.0.2.1"); err != nil {
				t.Fatal(err)
			}
		},
		left: func(t *testing.T, s *db.Store) []string { return column(t, s, `SELECT username FROM login_failures`) },
	},
	{
		name: "events", keep: db.EventRetention,
		purge: func(s *db.Store) func(context.Context) (int64, error) { return s.PurgeEvents },
		add: func(t *testing.T, s *db.Store, label string) {
			ctx := context.Background()
			MustCreatePet(t, ctx, s, MustCreateCategory(t, ctx, s, "C"+label).ID, label, 1)
		},
		left: func(t *testing.T, s *db.Store) []string {
			evs, err := s.EventsAfter(context.Background(), 0, 100)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, e := range evs {
				var p struct{ Name string }
				if err := json.Unmarshal(e.Data, &p); err != nil {
					t.Fatal(err)
				}
				names = append(names, p.Name)
			}
			return names
		},
	},
	{
		name: "bans", keep: db.BanRetention,
		purge: func(s *db.Store) func(context.Context) (int64, error) { return s.PurgeBans },
		add: func(t *testing.T, s *db.Store, label string) {
			// A ban that ends now: its retention starts now.
			now := s.Now()
			if err := s.CreateBan(context.Background(), label, now.Add(-15*time.Minute), now); err != nil {
				t.Fatal(err)
			}
		},
		left: func(t *testing.T, s *db.Store) []string { return column(t, s, `SELECT subject FROM bans`) },
	},
	{
		name: "audit entries", keep: db.AuditRetention,
		purge: func(s *db.Store) func(context.Context) (int64, error) { return s.PurgeAudit },
		add: func(t *testing.T, s *db.Store, label string) {
			ctx := db.WithOrigin(context.Background(), db.Origin{Actor: db.CLIActor(label)})
			if err := s.Audit(ctx, db.AuditOrderExport, db.Target{Type: "orders"}, nil); err != nil {
				t.Fatal(err)
			}
		},
		left: func(t *testing.T, s *db.Store) []string { return column(t, s, `SELECT actor_name FROM audit_log`) },
	},
}

// column reads one text column of every row, sorted.
func column(t *testing.T, s *db.Store, query string) []string {
	t.Helper()
	var vs []string
	if err := s.DB().Select(&vs, query); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	slices.Sort(vs)
	return vs
}

// movableStore opens a fresh store whose clock reads *now, a time relative
// to the real present that the test advances by assigning to it; t0 is
// where it starts.
func movableStore(t testing.TB, open dbtest.Open) (*db.Store, *time.Time, time.Time) {
	s := open(t)
	t0 := dbtest.NextMinute(dbtest.Present(t)).Add(42 * time.Second)
	now := t0
	s.Now = func() time.Time { return now }
	return s, &now, t0
}

// TestPurge adds a row at t0 and one just before its retention runs out,
// then purges at the edge and just after it: each purge removes exactly the
// rows past their retention and reports how many.
func TestPurge(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		for _, pc := range purgeCases {
			t.Run(pc.name, func(t *testing.T) {
				ctx := context.Background()
				s, now, t0 := movableStore(t, open)
				purge := pc.purge(s)
				mustPurge := func(want int64) {
					t.Helper()
					if n, err := purge(ctx); err != nil || n != want {
						t.Fatalf("at t0+%s: purged %d, %v; want %d", now.Sub(t0), n, err, want)
					}
				}
				pc.add(t, s, "old")
				mustPurge(0)

				*now = t0.Add(pc.keep - time.Second)
				pc.add(t, s, "young")
				mustPurge(0)

				*now = t0.Add(pc.keep)
				if pc.atEdge {
					mustPurge(1)
				} else {
					mustPurge(0)
					*now = t0.Add(pc.keep + time.Second)
					mustPurge(1)
				}
				if got := pc.left(t, s); !slices.Equal(got, []string{"young"}) {
					t.Fatalf("left %q, want only the young row", got)
				}
				mustPurge(0)

				*now = t0.Add(2*pc.keep + time.Hour)
				mustPurge(1)
				if got := pc.left(t, s); len(got) != 0 {
					t.Fatalf("left %q, want nothing", got)
				}
			})
		}
	})
}

// TestPurgeBacklog purges more rows than one batch deletes: every old row
// goes, over several statements, and the new one stays.
func TestPurgeBacklog(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s, now, t0 := movableStore(t, open)
		backlog := 2*db.PurgeBatch + 500
		_, err := s.DB().ExecContext(ctx, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $1)
			INSERT INTO login_failures (username, client_ip, at) SELECT 'guesser', '198.51.100.7', $2 FROM n`, backlog, t0)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.RecordLoginFailure(ctx, "typo", "192.0.2.1"); err != nil {
			t.Fatal(err)
		}
		*now = t0.Add(db.LoginFailureRetention + time.Second)
		if err := s.RecordLoginFailure(ctx, "fresh", "192.0.2.1"); err != nil {
			t.Fatal(err)
		}
		n, err := s.PurgeLoginFailures(ctx)
		if err != nil || n != int64(backlog)+1 {
			t.Fatalf("purged %d, %v; want %d", n, err, backlog+1)
		}
		if got := column(t, s, `SELECT username FROM login_failures`); !slices.Equal(got, []string{"fresh"}) {
			t.Fatalf("left %q, want only the fresh failure", got)
		}
	})
}

// TestPurgeStepsKeepTheRest runs every purge step far in the future: what
// housekeeping must never purge (the catalog, orders, keys, staff, a ban
// still in force) is all still there.
func TestPurgeStepsKeepTheRest(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s, now, t0 := movableStore(t, open)
		if _, err := s.SeedDemo(ctx); err != nil {
			t.Fatal(err)
		}
		key := mustAPIKey(t, ctx, s, "shopper")
		pets, _, err := s.FindPets(ctx, db.PetFilter{Statuses: []string{db.StatusAvailable}})
		if err != nil || len(pets) == 0 {
			t.Fatalf("available pets: %v, %v", pets, err)
		}
		if _, err := s.PlaceOrder(ctx, db.Owner{APIKeyID: key.ID}, db.NewOrder{PetID: &pets[0].ID, Quantity: ptr(int64(1))}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreateStaffUser(ctx, "ops", "$2a$10$hash"); err != nil {
			t.Fatal(err)
		}
		if err := s.CreateBan(ctx, "key:9", t0, t0.Add(365*24*time.Hour)); err != nil {
			t.Fatal(err)
		}
		*now = t0.Add(60 * 24 * time.Hour)
		for _, step := range s.PurgeSteps() {
			if _, err := step.Purge(ctx); err != nil {
				t.Fatalf("%s: %v", step.Name, err)
			}
		}
		if n := countRows(t, s, "events"); n != 0 {
			t.Errorf("%d events left, want none older than 30 days", n)
		}
		for table, want := range map[string]int{"categories": demoCategories, "pets": demoPets, "inventory": demoPets,
			"orders": 1, "api_keys": 1, "staff_users": 1, "bans": 1,
		} {
			if got := countRows(t, s, table); got != want {
				t.Errorf("%s: %d rows, want %d", table, got, want)
			}
		}
	})
}
