package db_test

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"

	"petstore/db"
	"petstore/db/dbtest"
)

// TestConsoleOrderSearch (SPEC §10): the orders page's one search box finds
// an order by its number (the order's or its checkout's, the number a
// shopper is given), the buyer's name, email or phone, each a prefix,
// case aside; both ways a search reads (its matches by their indexes, or
// orders newest first when its keys match many) find the same orders.
func TestConsoleOrderSearch(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s := open(t)
		c := MustCreateCategory(t, ctx, s, "Dogs")
		rex := MustCreatePet(t, ctx, s, c.ID, "Rex", 50)
		line := func(qty int64) db.NewOrder { return db.NewOrder{PetID: &rex.ID, Quantity: &qty} }
		checkout := func(shopper string, in db.NewCheckout, lines ...db.NewOrder) *db.Checkout {
			t.Helper()
			ck, err := s.PlaceCheckout(ctx, shopper, 100, in, lines)
			if err != nil {
				t.Fatal(err)
			}
			return ck
		}
		ada := checkout("ada", db.NewCheckout{Name: "Ada Lovelace", Email: "Ada.L@Example.com", Phone: "+44 (20) 7946-0000"}, line(1), line(2))
		zoe := checkout("zoe", db.NewCheckout{Name: "Zoë Ådahl", Email: "zoe@example.org"}, line(1))
		bob := checkout("bob", db.NewCheckout{Name: "Bob", Email: "bob@example.com", Phone: "030 1234"}, line(3))
		gone := checkout("gone", db.NewCheckout{Name: "Adam Gone", Email: "adam@example.com"}, line(1))
		if err := s.CancelOrder(ctx, gone.Orders[0].ID, nil); err != nil {
			t.Fatal(err)
		}
		api, err := s.PlaceOrder(ctx, db.Owner{APIKeyID: mustAPIKey(t, ctx, s, "api").ID}, line(1))
		if err != nil {
			t.Fatal(err)
		}
		ids := func(orders ...*db.Order) []int64 {
			var out []int64
			for _, o := range orders {
				out = append(out, o.ID)
			}
			slices.Sort(out)
			slices.Reverse(out) // newest first
			return out
		}
		// A number is an order's own (the console shows it) or its
		// checkout's (the shopper's order number): it finds both.
		byNumber := func(n int64) []int64 {
			var out []*db.Order
			for _, ck := range []*db.Checkout{ada, zoe, bob} {
				for _, o := range ck.Orders {
					if ck.ID == n || o.ID == n {
						out = append(out, o)
					}
				}
			}
			if api.ID == n {
				out = append(out, api)
			}
			return ids(out...)
		}
		cases := []struct {
			q    string
			want []int64
		}{
			{"ada", ids(ada.Orders...)}, // the name and the email: each order once
			{"  ADA LOVE ", ids(ada.Orders...)},
			{"ada.l@example", ids(ada.Orders...)},
			{"ADA.L@EXAMPLE.COM", ids(ada.Orders...)},
			{"zoë å", ids(zoe.Orders...)},
			{"ZOË", ids(zoe.Orders...)},
			{"+44 20", ids(ada.Orders...)},
			{"4420794", ids(ada.Orders...)},
			{"(030) 12", ids(bob.Orders...)},
			{"b", ids(bob.Orders...)},
			{strconv.FormatInt(ada.ID, 10), byNumber(ada.ID)},
			{"#" + strconv.FormatInt(bob.ID, 10), byNumber(bob.ID)},
			{strconv.FormatInt(api.ID, 10), byNumber(api.ID)},
			{"lovelace", nil}, // a prefix, not a part
			{"adam", nil},     // its one order is cancelled
			{"%", nil},
			{"_", nil},
			{"a%", nil},
			{`\`, nil},
			{"'; DROP TABLE orders; --", nil},
			{"#", nil},
			{"#x", nil},
			{"99999999", nil},
			{"-1", nil},
		}
		for _, cap := range []int{0, 1} {
			s.SetOrderSearchCap(cap) // 0: the default; 1: a walk from two matches
			for _, tc := range cases {
				got, next, err := s.FindConsoleOrders(ctx, db.ConsoleOrderFilter{Search: tc.q})
				if err != nil {
					t.Fatalf("cap %d, %q: %v", cap, tc.q, err)
				}
				var gotIDs []int64
				for _, o := range got {
					gotIDs = append(gotIDs, o.ID)
				}
				if next != 0 || !slices.Equal(gotIDs, tc.want) {
					t.Errorf("cap %d, %q: got %v (next %d), want %v", cap, tc.q, gotIDs, next, tc.want)
				}
			}
			// A page at a time, newest first, through either way.
			first, next, err := s.FindConsoleOrders(ctx, db.ConsoleOrderFilter{Search: "Ada", Limit: 1})
			if err != nil || len(first) != 1 || next != first[0].ID || first[0].ID != ada.Orders[1].ID {
				t.Fatalf("cap %d: first page %v, next %d, %v", cap, first, next, err)
			}
			second, next, err := s.FindConsoleOrders(ctx, db.ConsoleOrderFilter{Search: "Ada", Limit: 1, BeforeID: first[0].ID})
			if err != nil || len(second) != 1 || next != 0 || second[0].ID != ada.Orders[0].ID {
				t.Fatalf("cap %d: next page %v, next %d, %v", cap, second, next, err)
			}
			// With the other filters.
			open := false
			got, _, err := s.FindConsoleOrders(ctx, db.ConsoleOrderFilter{Search: "ada", Complete: &open})
			if err != nil || len(got) != 2 || got[0].Customer == nil || got[0].Customer.Name != "Ada Lovelace" {
				t.Fatalf("cap %d: open orders of ada: %v, %v", cap, got, err)
			}
		}

		t.Run("a walk stops after its window", func(t *testing.T) {
			// Ada's orders are the oldest; twelve newer buyers' names start
			// with A too. Walking 5 orders a page, the first pages find
			// none of Ada's but say older orders follow; paging on finds
			// all of them, and never walks past its window.
			for i := range 12 {
				checkout("ann", db.NewCheckout{Name: "Ann " + strconv.Itoa(i), Email: "ann@example.com"}, line(1))
			}
			s.SetOrderSearchCap(1)
			s.SetOrderSearchWindow(5)
			defer s.SetOrderSearchWindow(0)
			var found []int64
			pages := 0
			for before := int64(0); ; pages++ {
				got, next, err := s.FindConsoleOrders(ctx, db.ConsoleOrderFilter{Search: "ada", BeforeID: before})
				if err != nil {
					t.Fatal(err)
				}
				for _, o := range got {
					found = append(found, o.ID)
				}
				if next == 0 {
					break
				}
				if next >= before && before != 0 {
					t.Fatalf("the next page starts at %d, not before %d", next, before)
				}
				before = next
			}
			if !slices.Equal(found, ids(ada.Orders...)) || pages < 3 {
				t.Fatalf("paged %d times, found %v, want %v", pages, found, ids(ada.Orders...))
			}
		})

		t.Run("ErrValidationFailed", func(t *testing.T) {
			for _, q := range []string{"ada\x00", "ada\xff", strings.Repeat("a", db.MaxSearchLen+1)} {
				_, _, err := s.FindConsoleOrders(ctx, db.ConsoleOrderFilter{Search: q})
				wantCode(t, err, db.EValidationFailed)
			}
		})
	})
}

// TestAuditFiltersByNameAndActionPrefix (SPEC §10): the console's audit
// log finds a staff user's entries by the start of their name, case
// aside, and an action by its start ("webhook" finds every webhook.*).
func TestAuditFiltersByNameAndActionPrefix(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s := open(t)
		x := s.DB()
		staff := func(name string) *db.StaffUser {
			t.Helper()
			u, err := s.CreateStaffUser(ctx, name, "not a hash")
			if err != nil {
				t.Fatal(err)
			}
			return u
		}
		clara, claude := staff("Clara"), staff("claude")
		for _, e := range []struct {
			actor  *db.StaffUser
			action string
		}{{clara, "webhook.create"}, {clara, "pet.update"}, {claude, "webhook.update"}, {claude, "webhooks"}, {clara, "web"}} {
			mustExec(t, ctx, x, `INSERT INTO audit_log (at, actor_type, actor_id, actor_name, action) VALUES ($1, 'staff', $2, $3, $4)`,
				s.Now(), strconv.FormatInt(e.actor.ID, 10), e.actor.Username, e.action)
		}
		mustExec(t, ctx, x, `INSERT INTO audit_log (at, actor_type, actor_id, actor_name, action) VALUES ($1, 'key', $2, 'clara', 'pet.update')`,
			s.Now(), strconv.FormatInt(clara.ID, 10)) // a key named like her, with her id
		find := func(f db.AuditFilter) []string {
			t.Helper()
			got, _, err := s.FindAudit(ctx, f, db.Page{})
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, e := range got {
				out = append(out, e.Actor.Name+" "+e.Action)
			}
			return out
		}
		for _, tc := range []struct {
			f    db.AuditFilter
			want []string
		}{
			{db.AuditFilter{ActorName: "clara"}, []string{"Clara web", "Clara pet.update", "Clara webhook.create"}},
			{db.AuditFilter{ActorName: "CLA"}, []string{"Clara web", "claude webhooks", "claude webhook.update", "Clara pet.update", "Clara webhook.create"}},
			{db.AuditFilter{ActionPrefix: "webhook."}, []string{"claude webhook.update", "Clara webhook.create"}},
			{db.AuditFilter{ActionPrefix: "webhook"}, []string{"claude webhooks", "claude webhook.update", "Clara webhook.create"}},
			{db.AuditFilter{ActorName: "claude", ActionPrefix: "webhook."}, []string{"claude webhook.update"}},
			{db.AuditFilter{Action: "web"}, []string{"Clara web"}},
			{db.AuditFilter{ActorName: "zed"}, nil},
			{db.AuditFilter{ActionPrefix: "%"}, nil},
			{db.AuditFilter{ActorName: "_"}, nil},
		} {
			if got := find(tc.f); !slices.Equal(got, tc.want) {
				t.Errorf("%+v: got %q, want %q", tc.f, got, tc.want)
			}
		}
		_, _, err := s.FindAudit(ctx, db.AuditFilter{ActorName: "a\x00"}, db.Page{})
		wantCode(t, err, db.EValidationFailed)
	})
}
