package db_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"petstore/db"
	"petstore/db/dbtest"
)

func newKey(name, role, plan string, limits ...int64) db.NewAPIKey {
	k := db.NewAPIKey{Name: &name, Role: &role, Plan: &plan}
	if len(limits) == 2 {
		k.PerMinute, k.PerDay = &limits[0], &limits[1]
	}
	return k
}

func mustCreateKey(t *testing.T, ctx context.Context, s *db.Store, in db.NewAPIKey) (*db.APIKey, string) {
	t.Helper()
	k, plain, err := s.CreateAPIKey(ctx, in)
	if err != nil {
		t.Fatalf("create key: %v", err)
	}
	return k, plain
}

// TestPlanLimits pins the plan table to SPEC §6; enterprise is not in it.
func TestPlanLimits(t *testing.T) {
	want := map[string]db.Limits{
		db.PlanFree:     {PerMinute: 60, PerDay: 1_000},
		db.PlanPro:      {PerMinute: 300, PerDay: 10_000},
		db.PlanBusiness: {PerMinute: 1_000, PerDay: 100_000},
	}
	if diff := cmp.Diff(want, db.PlanLimits); diff != "" {
		t.Errorf("PlanLimits (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"free", "pro", "business", "enterprise"}, db.Plans); diff != "" {
		t.Errorf("Plans (-want +got):\n%s", diff)
	}
}

func TestCreateAPIKey(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		t.Run("OK", func(t *testing.T) {
			s := open(t)
			keysT0 := dbtest.Present(t)
			pinClock(t, s, keysT0)
			k, plain := mustCreateKey(t, ctx, s, newKey(" ci bot ", db.RoleCustomer, db.PlanFree))
			if !strings.HasPrefix(plain, "psk_") || len(plain) < 4+43 {
				t.Fatalf("plain key %q: want psk_ and 32 random bytes encoded", plain)
			}
			sum := sha256.Sum256([]byte(plain))
			want := &db.APIKey{ID: k.ID, Name: "ci bot", Prefix: plain[:12], Hash: hex.EncodeToString(sum[:]),
				Role: db.RoleCustomer, Plan: db.PlanFree, PerMinute: 60, PerDay: 1000, CreatedAt: keysT0}
			if diff := cmp.Diff(want, k); diff != "" {
				t.Fatalf("created (-want +got):\n%s", diff)
			}
			read, err := s.FindAPIKeyByID(ctx, k.ID)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, read); diff != "" {
				t.Fatalf("read back (-want +got):\n%s", diff)
			}
			_, other := mustCreateKey(t, ctx, s, newKey("other", db.RoleStaff, db.PlanPro))
			if other == plain {
				t.Fatal("two keys are the same")
			}
		})
		t.Run("OKOnlyTheHashIsStored", func(t *testing.T) {
			s := open(t)
			k, plain := mustCreateKey(t, ctx, s, newKey("a", db.RoleCustomer, db.PlanFree))
			rows, err := s.DB().QueryxContext(ctx, `SELECT * FROM api_keys`)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			n := 0
			for rows.Next() {
				n++
				row := map[string]any{}
				if err := rows.MapScan(row); err != nil {
					t.Fatal(err)
				}
				for col, v := range row {
					text := fmt.Sprintf("%s", v)
					if strings.Contains(text, plain) || strings.Contains(text, plain[12:]) {
						t.Errorf("column %s holds the plain key", col)
					}
				}
				if got := fmt.Sprintf("%s", row["hash"]); got != db.HashKey(plain) {
					t.Errorf("stored hash: got %q, want %q", got, db.HashKey(plain))
				}
			}
			if err := rows.Err(); err != nil || n != 1 {
				t.Fatalf("rows: got %d (%v), want 1", n, err)
			}
			got, err := s.Authenticate(ctx, plain)
			if err != nil || got.ID != k.ID {
				t.Fatalf("authenticate = %+v, %v, want key %d", got, err, k.ID)
			}
		})
		t.Run("OKPlans", func(t *testing.T) {
			s := open(t)
			for _, tc := range []struct {
				in                db.NewAPIKey
				perMinute, perDay int64
			}{
				{newKey("f", db.RoleCustomer, db.PlanFree), 60, 1_000},
				{newKey("p", db.RoleCustomer, db.PlanPro), 300, 10_000},
				{newKey("b", db.RoleStaff, db.PlanBusiness), 1_000, 100_000},
				{newKey("e", db.RoleCustomer, db.PlanEnterprise, 5, 50), 5, 50},
			} {
				k, _ := mustCreateKey(t, ctx, s, tc.in)
				if k.PerMinute != tc.perMinute || k.PerDay != tc.perDay {
					t.Errorf("%s: limits got %d/%d, want %d/%d", k.Plan, k.PerMinute, k.PerDay, tc.perMinute, tc.perDay)
				}
			}
		})
		t.Run("ErrValidationFailed", func(t *testing.T) {
			s := open(t)
			for name, tc := range map[string]struct {
				in    db.NewAPIKey
				field string
			}{
				"noName":                {db.NewAPIKey{Role: ptr(db.RoleCustomer), Plan: ptr(db.PlanFree)}, "name"},
				"blankName":             {newKey("  ", db.RoleCustomer, db.PlanFree), "name"},
				"noRole":                {db.NewAPIKey{Name: ptr("a"), Plan: ptr(db.PlanFree)}, "role"},
				"badRole":               {newKey("a", "admin", db.PlanFree), "role"},
				"noPlan":                {db.NewAPIKey{Name: ptr("a"), Role: ptr(db.RoleCustomer)}, "plan"},
				"badPlan":               {newKey("a", db.RoleCustomer, "gold"), "plan"},
				"enterpriseNoLimits":    {newKey("a", db.RoleCustomer, db.PlanEnterprise), "perMinute"},
				"enterpriseNoPerDay":    {db.NewAPIKey{Name: ptr("a"), Role: ptr(db.RoleCustomer), Plan: ptr(db.PlanEnterprise), PerMinute: ptr(int64(5))}, "perDay"},
				"enterpriseZero":        {newKey("a", db.RoleCustomer, db.PlanEnterprise, 0, 50), "perMinute"},
				"freeWithPerMinute":     {db.NewAPIKey{Name: ptr("a"), Role: ptr(db.RoleCustomer), Plan: ptr(db.PlanFree), PerMinute: ptr(int64(5))}, "perMinute"},
				"businessWithPerDay":    {db.NewAPIKey{Name: ptr("a"), Role: ptr(db.RoleCustomer), Plan: ptr(db.PlanBusiness), PerDay: ptr(int64(5))}, "perDay"},
				"proWithBothLimitsSent": {newKey("a", db.RoleCustomer, db.PlanPro, 5, 50), "perMinute"},
			} {
				t.Run(name, func(t *testing.T) {
					_, plain, err := s.CreateAPIKey(ctx, tc.in)
					wantField(t, err, tc.field)
					if plain != "" {
						t.Fatalf("a refused key came with a plain key %q", plain)
					}
				})
			}
			if ks, _, err := s.FindAPIKeys(ctx, db.Page{}); err != nil || len(ks) != 0 {
				t.Fatalf("keys after refused creates: got %d (%v), want 0", len(ks), err)
			}
		})
	})
}

func TestUpdateAPIKey(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		t.Run("OKNameOnly", func(t *testing.T) {
			s := open(t)
			k, _ := mustCreateKey(t, ctx, s, newKey("a", db.RoleStaff, db.PlanBusiness))
			got, err := s.UpdateAPIKey(ctx, k.ID, db.NewAPIKey{Name: ptr(" renamed ")})
			if err != nil {
				t.Fatal(err)
			}
			want := *k
			want.Name = "renamed"
			if diff := cmp.Diff(&want, got); diff != "" {
				t.Fatalf("updated (-want +got):\n%s", diff)
			}
			read, _ := s.FindAPIKeyByID(ctx, k.ID)
			if diff := cmp.Diff(&want, read); diff != "" {
				t.Fatalf("read back (-want +got):\n%s", diff)
			}
		})
		t.Run("OKPlanChanges", func(t *testing.T) {
			s := open(t)
			k, _ := mustCreateKey(t, ctx, s, newKey("a", db.RoleCustomer, db.PlanFree))
			steps := []struct {
				in                db.NewAPIKey
				plan              string
				perMinute, perDay int64
			}{
				{db.NewAPIKey{Plan: ptr(db.PlanPro)}, db.PlanPro, 300, 10_000},
				{db.NewAPIKey{Plan: ptr(db.PlanEnterprise), PerMinute: ptr(int64(7)), PerDay: ptr(int64(70))}, db.PlanEnterprise, 7, 70},
				{db.NewAPIKey{PerDay: ptr(int64(90))}, db.PlanEnterprise, 7, 90},
				{db.NewAPIKey{Plan: ptr(db.PlanPro)}, db.PlanPro, 300, 10_000},
				{db.NewAPIKey{Role: ptr(db.RoleStaff)}, db.PlanPro, 300, 10_000},
			}
			for i, st := range steps {
				got, err := s.UpdateAPIKey(ctx, k.ID, st.in)
				if err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				if got.Plan != st.plan || got.PerMinute != st.perMinute || got.PerDay != st.perDay || got.Name != "a" {
					t.Fatalf("step %d: got %s %s %d/%d, want a %s %d/%d", i, got.Name, got.Plan, got.PerMinute, got.PerDay, st.plan, st.perMinute, st.perDay)
				}
			}
			read, _ := s.FindAPIKeyByID(ctx, k.ID)
			if read.Role != db.RoleStaff || read.Plan != db.PlanPro || read.PerMinute != 300 {
				t.Fatalf("read back = %+v, want staff pro 300", read)
			}
		})
		t.Run("ErrValidationFailed", func(t *testing.T) {
			s := open(t)
			pro, _ := mustCreateKey(t, ctx, s, newKey("a", db.RoleCustomer, db.PlanPro))
			ent, _ := mustCreateKey(t, ctx, s, newKey("e", db.RoleCustomer, db.PlanEnterprise, 5, 50))
			for name, tc := range map[string]struct {
				id    int64
				in    db.NewAPIKey
				field string
			}{
				"toEnterpriseNoLimits": {pro.ID, db.NewAPIKey{Plan: ptr(db.PlanEnterprise)}, "perMinute"},
				"toEnterpriseNoPerDay": {pro.ID, db.NewAPIKey{Plan: ptr(db.PlanEnterprise), PerMinute: ptr(int64(9))}, "perDay"},
				"limitsOnPro":          {pro.ID, db.NewAPIKey{PerMinute: ptr(int64(9))}, "perMinute"},
				"toFreeWithLimits":     {ent.ID, db.NewAPIKey{Plan: ptr(db.PlanFree), PerDay: ptr(int64(9))}, "perDay"},
				"enterpriseZero":       {ent.ID, db.NewAPIKey{PerDay: ptr(int64(0))}, "perDay"},
				"blankName":            {pro.ID, db.NewAPIKey{Name: ptr("")}, "name"},
				"badPlan":              {pro.ID, db.NewAPIKey{Plan: ptr("gold")}, "plan"},
			} {
				_, err := s.UpdateAPIKey(ctx, tc.id, tc.in)
				if db.ErrorCode(err) != db.EValidationFailed {
					t.Errorf("%s: got %q (%v), want validation_failed", name, db.ErrorCode(err), err)
					continue
				}
				if f := err.(*db.Error).Details[0].Field; f != tc.field {
					t.Errorf("%s: field got %q, want %q", name, f, tc.field)
				}
			}
			for _, want := range []*db.APIKey{pro, ent} {
				got, _ := s.FindAPIKeyByID(ctx, want.ID)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("key %d changed by refused updates (-want +got):\n%s", want.ID, diff)
				}
			}
		})
		t.Run("ErrNotFound", func(t *testing.T) {
			s := open(t)
			_, err := s.UpdateAPIKey(ctx, 4242, db.NewAPIKey{Name: ptr("x")})
			wantCode(t, err, db.ENotFound)
			_, err = s.FindAPIKeyByID(ctx, 4242)
			wantCode(t, err, db.ENotFound)
		})
		// A revoked key cannot be changed, whichever surface asks (the
		// console refused it before the API did): not_found, even for an
		// update that would be invalid, and the key stays as revoked.
		t.Run("ErrNotFoundRevoked", func(t *testing.T) {
			s := open(t)
			k, _ := mustCreateKey(t, ctx, s, newKey("a", db.RoleCustomer, db.PlanFree))
			if err := s.RevokeAPIKey(ctx, k.ID); err != nil {
				t.Fatal(err)
			}
			revoked, err := s.FindAPIKeyByID(ctx, k.ID)
			if err != nil {
				t.Fatal(err)
			}
			for name, in := range map[string]db.NewAPIKey{
				"rename":       {Name: ptr("b")},
				"toEnterprise": {Plan: ptr(db.PlanEnterprise), PerMinute: ptr(int64(5)), PerDay: ptr(int64(50))},
				"invalid":      {Plan: ptr("gold")},
			} {
				got, err := s.UpdateAPIKey(ctx, k.ID, in)
				if db.ErrorCode(err) != db.ENotFound || got != nil {
					t.Errorf("%s: got %+v, %q (%v), want not_found", name, got, db.ErrorCode(err), err)
				} else if msg := err.(*db.Error).Message; msg != fmt.Sprintf("API key %d is revoked.", k.ID) {
					t.Errorf("%s: message %q", name, msg)
				}
			}
			read, err := s.FindAPIKeyByID(ctx, k.ID)
			if diff := cmp.Diff(revoked, read); err != nil || diff != "" {
				t.Errorf("revoked key changed by refused updates (%v; -want +got):\n%s", err, diff)
			}
		})
	})
}

func TestFindAPIKeys(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s := open(t)
		keysT0 := dbtest.Present(t)
		clock := pinClock(t, s, keysT0)
		var ids []int64
		for i := range 5 {
			k, _ := mustCreateKey(t, ctx, s, newKey(fmt.Sprintf("k%d", i), db.RoleCustomer, db.PlanFree))
			ids = append(ids, k.ID)
		}
		if err := s.RevokeAPIKey(ctx, ids[1]); err != nil {
			t.Fatal(err)
		}
		t.Run("OKPaging", func(t *testing.T) {
			var got []int64
			var mores []bool
			for page := (db.Page{Limit: 2}); ; {
				ks, more, err := s.FindAPIKeys(ctx, page)
				if err != nil {
					t.Fatal(err)
				}
				for _, k := range ks {
					got = append(got, k.ID)
				}
				mores = append(mores, more)
				if !more {
					break
				}
				page.AfterID = ks[len(ks)-1].ID
			}
			if diff := cmp.Diff(ids, got); diff != "" {
				t.Fatalf("ids, revoked included (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]bool{true, true, false}, mores); diff != "" {
				t.Fatalf("more flags (-want +got):\n%s", diff)
			}
			ks, more, err := s.FindAPIKeys(ctx, db.Page{Limit: 4, AfterID: ids[0]})
			if err != nil || len(ks) != 4 || more {
				t.Fatalf("exactly full last page: got %d rows, more=%v (%v), want 4, false", len(ks), more, err)
			}
		})
		t.Run("OKBannedUntil", func(t *testing.T) {
			until := keysT0.Add(15 * time.Minute)
			if err := s.CreateBan(ctx, fmt.Sprintf("key:%d", ids[2]), keysT0, until); err != nil {
				t.Fatal(err)
			}
			// An expired ban of another key shows nothing.
			if err := s.CreateBan(ctx, fmt.Sprintf("key:%d", ids[3]), keysT0.Add(-time.Hour), keysT0.Add(-time.Minute)); err != nil {
				t.Fatal(err)
			}
			ks, _, err := s.FindAPIKeys(ctx, db.Page{})
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range ks {
				switch {
				case k.ID == ids[2] && (k.BannedUntil == nil || !k.BannedUntil.Equal(until)):
					t.Errorf("key %d: bannedUntil got %v, want %v", k.ID, k.BannedUntil, until)
				case k.ID != ids[2] && k.BannedUntil != nil:
					t.Errorf("key %d: bannedUntil got %v, want none", k.ID, k.BannedUntil)
				}
			}
			one, err := s.FindAPIKeyByID(ctx, ids[2])
			if err != nil || one.BannedUntil == nil || !one.BannedUntil.Equal(until) {
				t.Fatalf("find by id: bannedUntil got %v (%v), want %v", one.BannedUntil, err, until)
			}
			up, err := s.UpdateAPIKey(ctx, ids[2], db.NewAPIKey{Name: ptr("still banned")})
			if err != nil || up.BannedUntil == nil || !up.BannedUntil.Equal(until) {
				t.Fatalf("update: bannedUntil got %v (%v), want %v", up.BannedUntil, err, until)
			}
			clock.Set(until)
			one, _ = s.FindAPIKeyByID(ctx, ids[2])
			if one.BannedUntil != nil {
				t.Fatalf("after the ban ended: bannedUntil got %v, want none", one.BannedUntil)
			}
		})
	})
}
