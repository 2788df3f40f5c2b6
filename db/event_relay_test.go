package db_test

import (
	"context"
	"errors"
	"testing"

	"petstore/db"
	"petstore/db/dbtest"
	"petstore/db/riverdb"
)

// TestRelayEvents: the relay takes committed events in batches, oldest
// first, each batch's work and the position in one transaction: work that
// fails leaves neither its rows nor a moved position, and the next run
// takes the same events again. An endpoint gets the events committed after
// it was made or enabled again, not older ones the relay comes to later.
func TestRelayEvents(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s, rex := storeWithPet(t, open, 10)
		all := mustCreateWebhook(t, ctx, s, "https://example.com/all", "*")
		deliveries := func() int { return count(t, s, "webhook_deliveries", "webhook_id = $1", all.ID) }
		if jobs := relay(t, s); len(jobs) != 0 || deliveries() != 0 {
			t.Fatalf("the pet's events, older than the endpoint, made %d jobs", len(jobs))
		}

		// Two orders: two order.created, two inventory.updated (and the
		// pet's). A batch whose work fails writes nothing.
		mustOrder(t, ctx, s, db.Owner{}, rex.ID, 1)
		mustOrder(t, ctx, s, db.Owner{}, rex.ID, 1)
		boom := errors.New("boom")
		_, err := s.RelayEvents(ctx, 100, func(ctx context.Context, b *db.RelayBatch) error {
			if _, err := b.CreateWebhookDeliveries(ctx); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) || deliveries() != 0 {
			t.Fatalf("failed batch: %v, %d deliveries left", err, deliveries())
		}

		// One at a time: each batch holds the next event, oldest first.
		var seen []db.Event
		for {
			run, err := s.RelayEvents(ctx, 1, func(ctx context.Context, b *db.RelayBatch) error {
				evs, err := b.Events(ctx)
				if err != nil {
					return err
				}
				if len(evs) != 1 || evs[0].ID <= b.From || evs[0].ID != b.To {
					t.Errorf("batch (%d, %d] holds %+v", b.From, b.To, evs)
				}
				seen = append(seen, evs...)
				_, err = b.CreateWebhookDeliveries(ctx)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if run.Events == 0 && !run.Held {
				break
			}
			if run.Events > 1 {
				t.Fatalf("a batch of at most 1 held %d events", run.Events)
			}
		}
		if len(seen) < 4 || deliveries() != len(seen) {
			t.Fatalf("relayed %d events into %d deliveries, want one each and at least 4", len(seen), deliveries())
		}
		for i := 1; i < len(seen); i++ {
			if seen[i].ID <= seen[i-1].ID {
				t.Fatalf("events relayed out of order: %d after %d", seen[i].ID, seen[i-1].ID)
			}
		}
		if jobs := relay(t, s); len(jobs) != 0 {
			t.Fatalf("caught up, the relay made %d jobs again", len(jobs))
		}

		// Disabled, an order, enabled again before the relay runs: that
		// order's events are not the endpoint's.
		before := deliveries()
		if _, err := s.UpdateWebhook(ctx, all.ID, db.WebhookUpdate{Enabled: ptr(false)}); err != nil {
			t.Fatal(err)
		}
		mustOrder(t, ctx, s, db.Owner{}, rex.ID, 1)
		if _, err := s.UpdateWebhook(ctx, all.ID, db.WebhookUpdate{Enabled: ptr(true)}); err != nil {
			t.Fatal(err)
		}
		late := mustCreateWebhook(t, ctx, s, "https://example.com/late", "*")
		if jobs := relay(t, s); len(jobs) != 0 || deliveries() != before {
			t.Fatalf("events of while the endpoint was disabled made %d jobs", len(jobs))
		}
		mustOrder(t, ctx, s, db.Owner{}, rex.ID, 1)
		if jobs := relay(t, s); len(jobs) != 4 || deliveries() != before+2 || count(t, s, "webhook_deliveries", "webhook_id = $1", late.ID) != 2 {
			t.Fatalf("an order after both: %d jobs, %d deliveries; want 2 events to each endpoint", len(jobs), deliveries()-before)
		}
	})
}

// TestRelayStartsWhereTheTriggersStopped: a store at migration 00015,
// whose triggers made each event's deliveries and jobs, migrated to the
// relay: the events from before are not delivered again, the later ones
// are.
func TestRelayStartsWhereTheTriggersStopped(t *testing.T) {
	dbtest.EachURL(t, func(t *testing.T, rawURL string) {
		ctx := context.Background()
		clock := dbtest.NewClock(t)
		s, err := db.Open(ctx, rawURL, clock.Now)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if err := riverdb.Migrate(ctx, s.Dialect(), s.DB().DB); err != nil {
			t.Fatal(err)
		}
		if err := s.MigrateUpTo(ctx, 15); err != nil {
			t.Fatal(err)
		}
		exec := func(q string, args ...any) {
			t.Helper()
			if _, err := s.DB().ExecContext(ctx, q, args...); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		event := func() {
			t.Helper()
			exec(`INSERT INTO events (type, data, created_at) VALUES ($1, '{"id":1}', $2)`, db.EventPetCreated, clock.Now())
		}
		exec(`INSERT INTO webhooks (id, url, description, enabled, secret, created_at) VALUES (1, 'https://example.com/', '', TRUE, 'whsec_x', $1)`, clock.Now())
		exec(`INSERT INTO webhook_subscriptions (webhook_id, event_type) VALUES (1, '*')`)
		event()
		event()
		if d, j := count(t, s, "webhook_deliveries", "1 = 1"), count(t, s, "river_job", "1 = 1"); d != 2 || j != 2 {
			t.Fatalf("at 00015 the triggers made %d deliveries and %d jobs, want 2 and 2", d, j)
		}
		if err := s.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		if jobs := relay(t, s); len(jobs) != 0 {
			t.Fatalf("the relay made %d jobs of events the triggers had queued", len(jobs))
		}
		event()
		if jobs := relay(t, s); len(jobs) != 1 || count(t, s, "webhook_deliveries", "1 = 1") != 3 {
			t.Fatalf("an event after the migration made %d jobs, want 1", len(jobs))
		}
		if n := count(t, s, "river_job", "1 = 1"); n != 2 {
			t.Fatalf("%d river jobs: a trigger still writes them", n)
		}
	})
}
