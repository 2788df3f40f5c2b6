package db_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"petstore/db"
	"petstore/db/dbtest"
)

// changeSpan is a span context as a request's span would be.
var changeSpan = trace.NewSpanContext(trace.SpanContextConfig{
	TraceID:    trace.TraceID{0x0a, 0xf7, 0x65, 0x19, 0x16, 0xcd, 0x43, 0xdd, 0x84, 0x48, 0xeb, 0x21, 0x1c, 0x80, 0x31, 0x9c},
	SpanID:     trace.SpanID{0xb7, 0xad, 0x6b, 0x71, 0x69, 0x20, 0x33, 0x31},
	TraceFlags: trace.FlagsSampled,
})

// relayedTraceparents relays the committed events and returns the
// traceparent each carried, by type, "" for none.
func relayedTraceparents(t *testing.T, s *db.Store) map[string]string {
	t.Helper()
	got := map[string]string{}
	_, err := s.RelayEvents(context.Background(), 100, func(ctx context.Context, b *db.RelayBatch) error {
		evs, err := b.Events(ctx)
		for _, e := range evs {
			got[e.Type] = ""
			if e.Traceparent != nil {
				got[e.Type] = *e.Traceparent
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestEventsCarryTraceparent: a change made within a span writes its
// events with the span's traceparent, which the relay reads back; a change
// outside any span (tracing off) writes NULL.
func TestEventsCarryTraceparent(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		s := open(t)
		cats, price := "Dogs", "10"
		cat, err := s.CreateCategory(context.Background(), db.NewCategory{Name: &cats})
		if err != nil {
			t.Fatal(err)
		}
		newPet := func(ctx context.Context, name string) {
			t.Helper()
			if _, err := s.CreatePet(ctx, db.NewPet{Name: &name, CategoryID: &cat.ID, Price: &price}); err != nil {
				t.Fatal(err)
			}
		}
		newPet(context.Background(), "Untraced")
		if got := relayedTraceparents(t, s); got[db.EventPetCreated] != "" {
			t.Errorf("an untraced change's event carries %q, want NULL", got[db.EventPetCreated])
		}
		newPet(trace.ContextWithSpanContext(context.Background(), changeSpan), "Traced")
		want := "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
		if got := relayedTraceparents(t, s); got[db.EventPetCreated] != want {
			t.Errorf("a traced change's event carries %q, want %q", got[db.EventPetCreated], want)
		}
	})
}

// TestStoreTracing: a store opened WithTracing makes a span of each
// statement run within a span, as a child of it, with its text and not its
// arguments; statements outside any span make none.
func TestStoreTracing(t *testing.T) {
	dbtest.EachURL(t, func(t *testing.T, rawURL string) {
		rec := tracetest.NewSpanRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
		s, err := db.Open(context.Background(), rawURL, dbtest.NewClock(t).Now, db.WithTracing(tp))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		if err := s.Migrate(context.Background()); err != nil {
			t.Fatal(err)
		}
		if n := len(rec.Ended()); n != 0 {
			t.Fatalf("%d spans of statements outside any span", n)
		}
		ctx, parent := tp.Tracer("test").Start(context.Background(), "request")
		secret := "Rex-the-secret-name"
		if _, err := s.CreateCategory(ctx, db.NewCategory{Name: &secret}); err != nil {
			t.Fatal(err)
		}
		parent.End()
		var statements int
		for _, sp := range rec.Ended() {
			if !strings.HasPrefix(sp.Name(), "sql.") {
				continue
			}
			statements++
			if sp.Parent().SpanID() != parent.SpanContext().SpanID() {
				t.Errorf("%s is not a child of the request's span", sp.Name())
			}
			for _, a := range sp.Attributes() {
				if strings.Contains(a.Value.String(), secret) {
					t.Errorf("%s records an argument: %s=%s", sp.Name(), a.Key, a.Value.String())
				}
			}
		}
		if statements == 0 {
			t.Fatal("no statement span under the request's span")
		}
	})
}

// TestBatchedOrdersCarryTheirOwnTraceparent: lone orders placed together
// in one transaction (group commit) for different requests write their
// events each with its own request's traceparent, on both ways a batch is
// placed (in Go, and PostgreSQL's one statement).
func TestBatchedOrdersCarryTheirOwnTraceparent(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		for _, inGo := range []bool{false, true} {
			s := open(t)
			if inGo {
				s.PlaceLoneOrdersInGo()
			}
			c := MustCreateCategory(t, ctx, s, "Dogs")
			rex := MustCreatePet(t, ctx, s, c.ID, "Rex", 5)
			relayedTraceparents(t, s) // the pet's events
			var ctxs []context.Context
			var want []*string
			for i := range 3 {
				sc := changeSpan.WithSpanID(trace.SpanID{0xb7, 0xad, 0x6b, 0x71, 0x69, 0x20, 0x33, byte(i + 1)})
				ctxs = append(ctxs, trace.ContextWithSpanContext(ctx, sc))
				want = append(want, db.Traceparent(ctxs[i]))
			}
			orders, errs := s.PlaceLoneOrdersFrom(ctxs, db.Owner{}, []db.NewOrder{
				{PetID: &rex.ID, Quantity: ptr(int64(1))}, {PetID: &rex.ID, Quantity: ptr(int64(1))}, {PetID: &rex.ID, Quantity: ptr(int64(1))},
			})
			got := map[int64]string{}
			_, err := s.RelayEvents(ctx, 100, func(ctx context.Context, b *db.RelayBatch) error {
				evs, err := b.Events(ctx)
				for _, e := range evs {
					var ref struct{ ID int64 }
					if e.Type == db.EventOrderCreated && json.Unmarshal(e.Data, &ref) == nil && e.Traceparent != nil {
						got[ref.ID] = *e.Traceparent
					}
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			for i, o := range orders {
				if errs[i] != nil || got[o.ID] != *want[i] {
					t.Errorf("in Go %v: order %d (%v) carries %q, want its request's %q", inGo, i, errs[i], got[o.ID], *want[i])
				}
			}
		}
	})
}
