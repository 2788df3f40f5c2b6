package db_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"petstore/db"
	"petstore/db/dbtest"
)

// origins of the tests' changes: a staff user, a staff key, the command line.
var (
	byStaff = db.Origin{Actor: db.StaffActor(3, "alice"), RequestID: "req-staff", IP: "192.0.2.10"}
	byKey   = db.Origin{Actor: db.KeyActor(7, "ci"), RequestID: "req-key", IP: "2001:db8::1"}
	byCLI   = db.Origin{Actor: db.CLIActor("ops")}
)

func as(o db.Origin) context.Context { return db.WithOrigin(context.Background(), o) }

// actions lists the entries' actions, as FindAudit gives them.
func actions(es []*db.AuditEntry) []string {
	out := []string{}
	for _, e := range es {
		out = append(out, e.Action)
	}
	return out
}

func mustFindAudit(t *testing.T, s *db.Store, f db.AuditFilter, page db.Page) ([]*db.AuditEntry, bool) {
	t.Helper()
	es, more, err := s.FindAudit(context.Background(), f, page)
	if err != nil {
		t.Fatalf("FindAudit(%+v): %v", f, err)
	}
	return es, more
}

// TestAuditEntries makes changes as three actors over three days and reads
// them back: what each entry holds, newest first, every filter, and the
// pages of a long list.
func TestAuditEntries(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		s := open(t)
		day1 := dbtest.NextDay(dbtest.Present(t)).Add(9 * time.Hour)
		clock := pinClock(t, s, day1)

		cat, err := s.CreateCategory(as(byStaff), db.NewCategory{Name: ptr("Dogs")})
		if err != nil {
			t.Fatal(err)
		}
		pet, err := s.CreatePet(as(byKey), db.NewPet{Name: ptr("Rex"), CategoryID: &cat.ID})
		if err != nil {
			t.Fatal(err)
		}
		clock.Set(day1.Add(24 * time.Hour))
		if _, err := s.UpdatePet(as(byKey), pet.ID, db.NewPet{Name: ptr("Rex"), CategoryID: &cat.ID, Price: ptr("12.5")}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.UpdatePet(as(byStaff), pet.ID, db.NewPet{Name: ptr("Rexy"), CategoryID: &cat.ID, Breed: db.Set("Beagle")}); err != nil {
			t.Fatal(err)
		}
		clock.Set(day1.Add(48 * time.Hour))
		if _, err := s.SetInventory(as(byCLI), pet.ID, db.InventoryUpdate{Quantity: ptr(int64(4))}); err != nil {
			t.Fatal(err)
		}
		// Without an origin (a customer, the server itself): no entry.
		shopper := mustAPIKey(t, context.Background(), s, "shopper")
		if _, err := s.PlaceOrder(context.Background(), db.Owner{APIKeyID: shopper.ID}, db.NewOrder{PetID: &pet.ID, Quantity: ptr(int64(1))}); err != nil {
			t.Fatal(err)
		}

		all, more := mustFindAudit(t, s, db.AuditFilter{}, db.Page{})
		if got, want := actions(all), []string{"inventory.set", "pet.update", "pet.price", "pet.create", "category.create"}; more || !slices.Equal(got, want) {
			t.Fatalf("entries %v (more %v), want %v newest first", got, more, want)
		}
		price := all[2]
		if price.Actor != byKey.Actor || price.RequestID != "req-key" || price.IP != "2001:db8::1" ||
			price.Target != db.TargetID("pet", pet.ID) || !price.At.Equal(day1.Add(24*time.Hour)) {
			t.Errorf("pet.price entry = %+v", price)
		}
		wantChanges(t, price, `{"price":["0.00","12.50"]}`)
		wantChanges(t, all[1], `{"breed":[null,"Beagle"],"name":["Rex","Rexy"]}`)
		wantChanges(t, all[0], `{"quantity":[1,4]}`)
		if all[0].Actor != (db.Actor{Type: db.ActorCLI, Name: "ops"}) || all[0].RequestID != "" || all[0].IP != "" {
			t.Errorf("the command line's entry = %+v", all[0])
		}

		for _, c := range []struct {
			name string
			f    db.AuditFilter
			want []string
		}{
			{"actor type", db.AuditFilter{ActorType: db.ActorKey}, []string{"pet.price", "pet.create"}},
			{"actor", db.AuditFilter{ActorType: db.ActorStaff, ActorID: "3"}, []string{"pet.update", "category.create"}},
			{"another actor", db.AuditFilter{ActorType: db.ActorStaff, ActorID: "4"}, []string{}},
			{"action", db.AuditFilter{Action: "pet.price"}, []string{"pet.price"}},
			{"target type", db.AuditFilter{TargetType: "pet"}, []string{"inventory.set", "pet.update", "pet.price", "pet.create"}},
			{"target", db.AuditFilter{TargetType: "category", TargetID: itoa(cat.ID)}, []string{"category.create"}},
			{"one day", db.AuditFilter{Dates: db.DateRange{From: dayOf(day1.Add(24 * time.Hour)), To: dayOf(day1.Add(24 * time.Hour))}}, []string{"pet.update", "pet.price"}},
			{"from", db.AuditFilter{Dates: db.DateRange{From: dayOf(day1.Add(48 * time.Hour))}}, []string{"inventory.set"}},
			{"to", db.AuditFilter{Dates: db.DateRange{To: dayOf(day1)}}, []string{"pet.create", "category.create"}},
			{"all of them", db.AuditFilter{ActorType: db.ActorKey, ActorID: "7", Action: "pet.create", TargetType: "pet", TargetID: itoa(pet.ID),
				Dates: db.DateRange{From: dayOf(day1), To: dayOf(day1)}}, []string{"pet.create"}},
		} {
			t.Run(c.name, func(t *testing.T) {
				es, _ := mustFindAudit(t, s, c.f, db.Page{})
				if got := actions(es); !slices.Equal(got, c.want) {
					t.Errorf("got %v, want %v", got, c.want)
				}
			})
		}

		// Pages of 2 walk the whole log once, newest first.
		var walked []int64
		page := db.Page{Limit: 2}
		for {
			es, more := mustFindAudit(t, s, db.AuditFilter{}, page)
			for _, e := range es {
				walked = append(walked, e.ID)
			}
			if !more {
				break
			}
			page.AfterID = es[len(es)-1].ID
		}
		var want []int64
		for _, e := range all {
			want = append(want, e.ID)
		}
		if !slices.Equal(walked, want) {
			t.Errorf("paged ids %v, want %v", walked, want)
		}
	})
}

// TestAuditFilterRefusals: filters the log cannot hold are refused with
// the parameter's name, never sent to the database.
func TestAuditFilterRefusals(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		s := open(t)
		for field, f := range map[string]db.AuditFilter{
			"actorType":  {ActorType: "robot"},
			"actorId":    {ActorID: "3"},
			"targetId":   {TargetID: "3"},
			"action":     {Action: "pet\x00update"},
			"targetType": {TargetType: "\xff\xfe"},
		} {
			_, _, err := s.FindAudit(context.Background(), f, db.Page{})
			wantCode(t, err, db.EValidationFailed)
			wantField(t, err, field)
		}
	})
}

// TestAuditRollsBackWithTheChange: an entry is written in its change's
// transaction, so a change rolled back leaves neither.
func TestAuditRollsBackWithTheChange(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		s := open(t)
		ctx := context.Background()
		cat := MustCreateCategory(t, ctx, s, "Cats")
		if err := s.RenameCategoryThenRollBack(as(byStaff), cat.ID, "Kittens"); err != nil {
			t.Fatal(err)
		}
		// A refused change writes nothing either.
		MustCreatePet(t, ctx, s, cat.ID, "Tom", 1)
		wantCode(t, s.DeleteCategory(as(byStaff), cat.ID), db.ECategoryInUse)
		if es, _ := mustFindAudit(t, s, db.AuditFilter{}, db.Page{}); len(es) != 0 {
			t.Fatalf("entries %v after a rollback and a refusal, want none", actions(es))
		}
		if c, err := s.FindCategoryByID(ctx, cat.ID); err != nil || c.Name != "Cats" {
			t.Fatalf("category = %+v, %v; want it unchanged", c, err)
		}
	})
}

// TestAuditKeepsNoSecret: issuing and changing keys and webhooks records
// their fields but never a plain key, a hash or a signing secret.
func TestAuditKeepsNoSecret(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		s := open(t)
		ctx := as(byStaff)
		k, plain, err := s.CreateAPIKey(ctx, db.NewAPIKey{Name: ptr("ci"), Role: ptr(db.RoleStaff), Plan: ptr(db.PlanPro)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.UpdateAPIKey(ctx, k.ID, db.NewAPIKey{Plan: ptr(db.PlanBusiness)}); err != nil {
			t.Fatal(err)
		}
		w, err := s.CreateWebhook(ctx, db.NewWebhook{URL: ptr("https://example.com/hook"), Events: &[]string{"*"}})
		if err != nil {
			t.Fatal(err)
		}
		rotated, err := s.RotateWebhookSecret(ctx, w.ID)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.UpdateWebhook(ctx, w.ID, db.WebhookUpdate{Events: &[]string{"order.created"}}); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteWebhook(ctx, w.ID); err != nil {
			t.Fatal(err)
		}
		es, _ := mustFindAudit(t, s, db.AuditFilter{}, db.Page{})
		if got, want := actions(es), []string{"webhook.delete", "webhook.update", "webhook.rotate_secret", "webhook.create", "key.update", "key.create"}; !slices.Equal(got, want) {
			t.Fatalf("entries %v, want %v", got, want)
		}
		wantChanges(t, es[0], `{"description":["",null],"enabled":[true,null],"events":[["order.created"],null],"url":["https://example.com/hook",null]}`)
		wantChanges(t, es[1], `{"events":[["*"],["order.created"]]}`)
		wantChanges(t, es[2], `{}`)
		wantChanges(t, es[4], `{"perDay":[10000,100000],"perMinute":[300,1000],"plan":["pro","business"]}`)
		for _, e := range es {
			for _, secret := range []string{plain, k.Hash, w.Secret, rotated.Secret, db.KeyPrefix, db.WebhookSecretPrefix} {
				if json.Valid(e.Changes) && strings.Contains(string(e.Changes), secret) {
					t.Errorf("%s holds a secret: %s", e.Action, e.Changes)
				}
			}
		}
	})
}

// wantChanges fails unless the entry's changes are the JSON want.
func wantChanges(t *testing.T, e *db.AuditEntry, want string) {
	t.Helper()
	var got, w any
	if err := json.Unmarshal(e.Changes, &got); err != nil {
		t.Fatalf("%s: changes %s: %v", e.Action, e.Changes, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(w, got); diff != "" {
		t.Errorf("%s: changes (-want +got):\n%s", e.Action, diff)
	}
}

func dayOf(t time.Time) time.Time { return t.UTC().Truncate(24 * time.Hour) }

func itoa(n int64) string { return db.TargetID("", n).ID }
