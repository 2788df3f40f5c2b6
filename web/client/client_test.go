package client_test

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"petstore/db"
	"petstore/db/dbtest"
	ht "petstore/handlers/handlerstest"
	"petstore/web/client"
	api "petstore/web/client/petstoreapi"
)

// counting counts what reaches the network through the real transport.
type counting struct {
	sends atomic.Int32
	posts atomic.Int32
}

func (c *counting) RoundTrip(r *http.Request) (*http.Response, error) {
	c.sends.Add(1)
	if r.Method == http.MethodPost {
		c.posts.Add(1)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// onServerClock makes the transport wait on the server's clock: a wait of
// d moves the clock by d at once, so a minute window passes in no time.
func onServerClock(a *ht.App, t *client.Transport) *client.Transport {
	t.Now = a.Clock.Now
	t.Sleep = func(ctx context.Context, d time.Duration) error {
		a.Clock.Add(d)
		return ctx.Err()
	}
	return t
}

func newClient(t *testing.T, url, key string, tr *client.Transport) *client.Client {
	t.Helper()
	c, err := client.New(client.Config{URL: url, Key: key, Transport: tr})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A key of 20 requests a minute walks a catalog of 50 pages: paced, it
// never sees a 429; unpaced, it waits the 429s out by Retry-After; banned
// in neither case, every pet seen once.
func TestPagesWithinTheLimit(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := ht.NewOn(t, open)
		want := map[int64]bool{}
		for i := range 50 {
			want[a.SeedPet("pet "+ht.Itoa(int64(i)), 1).ID] = true
		}
		url := a.Listen()
		for _, paced := range []bool{true, false} {
			name := map[bool]string{true: "paced", false: "unpaced"}[paced]
			t.Run(name, func(t *testing.T) {
				key, k := a.IssueKey(name, db.RoleCustomer, db.PlanEnterprise, 20, 100000)
				c := newClient(t, url, key, onServerClock(a, &client.Transport{NoPacing: !paced}))
				seen := map[int64]int{}
				for p, err := range c.Pets(context.Background(), api.ListPetsParams{Limit: ht.Ptr(1)}) {
					if err != nil {
						t.Fatal(err)
					}
					seen[p.Id]++
				}
				if len(seen) != len(want) {
					t.Fatalf("saw %d pets, want %d", len(seen), len(want))
				}
				for id, n := range seen {
					if !want[id] || n != 1 {
						t.Fatalf("pet %d seen %d times (known %v)", id, n, want[id])
					}
				}
				u := a.Usage(t, k.ID)
				if u["banned"] != false {
					t.Fatalf("banned: %v", u)
				}
				got429 := u["limited429Today"].(float64)
				if paced && got429 != 0 {
					t.Fatalf("paced: %v 429s, want none", got429)
				}
				if !paced && got429 == 0 {
					t.Fatalf("unpaced: no 429 met; the test shows nothing")
				}
			})
		}
	})
}

// The server's address goes dark for 3 s mid-run: requests succeed after
// backoff; a request whose context ends first returns the context's error.
func TestOutageBackoff(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := ht.NewOn(t, open)
		a.SeedPet("Rex", 1)
		p := newProxy(t, a.Listen()[len("http://"):])
		c := newClient(t, p.url(), a.Customer, &client.Transport{BaseDelay: 100 * time.Millisecond, MaxDelay: time.Second, MaxAttempts: 100})
		ctx := context.Background()
		if _, err := c.ListPetsWithResponse(ctx, nil); err != nil {
			t.Fatal(err)
		}
		p.stop()

		short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel()
		if _, err := c.ListPetsWithResponse(short, nil); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("short context: err = %v, want context.DeadlineExceeded", err)
		}

		down := time.Now()
		back := time.AfterFunc(3*time.Second, p.start) // the outage the test is about
		defer back.Stop()
		r, err := c.ListPetsWithResponse(ctx, nil)
		if err != nil {
			t.Fatalf("after the outage: %v", err)
		}
		if took := time.Since(down); took < 3*time.Second || len(*r.JSON200) != 1 {
			t.Fatalf("answered after %v with %d pets: want after 3 s, 1 pet", took, len(*r.JSON200))
		}
	})
}

// The answer to a POST order is lost after the server committed: the
// transport sends it again with the same Idempotency-Key, the server
// replays the answer, and exactly one order exists.
func TestLostOrderAnswerReplays(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := ht.NewOn(t, open)
		pet := a.SeedPet("Rex", 5)
		p := newProxy(t, a.Listen()[len("http://"):])
		sent := &counting{}
		c := newClient(t, p.url(), a.Customer, &client.Transport{Base: sent, BaseDelay: 50 * time.Millisecond})
		p.dropAnswers.Store(1)
		r, err := c.PlaceOrderWithResponse(context.Background(), nil, api.NewOrder{PetId: pet.ID, Quantity: 2})
		if err != nil {
			t.Fatal(err)
		}
		if sent.posts.Load() < 2 {
			t.Fatalf("%d POSTs sent: the answer was not lost", sent.posts.Load())
		}
		if r.JSON201 == nil || r.JSON201.PetId != pet.ID {
			t.Fatalf("answer: %s", r.Body)
		}
		if n := ht.CountRows(t, a, "orders"); n != 1 {
			t.Fatalf("%d orders, want 1", n)
		}
	})
}

// A banned key gets one typed error at once: no retry, no wait.
func TestBannedKeyIsNotRetried(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := ht.NewOn(t, open)
		key, _ := a.IssueKey("banned", db.RoleCustomer, db.PlanEnterprise, 2, 1000)
		a.BanKey(key, 2, 20)
		sent := &counting{}
		c := newClient(t, a.Listen(), key, &client.Transport{Base: sent})
		_, err := c.ListPetsWithResponse(context.Background(), nil)
		var e *client.Error
		if !errors.As(err, &e) || !errors.Is(err, client.ErrBanned) {
			t.Fatalf("err = %v, want a *client.Error matching ErrBanned", err)
		}
		if e.Status != 403 || e.Code != "api_key_banned" || e.RequestID == "" || e.RetryAfter <= 0 {
			t.Fatalf("error = %+v", e)
		}
		if n := sent.sends.Load(); n != 1 {
			t.Fatalf("%d sends, want 1", n)
		}
	})
}

// A 422 comes back as the Error object with its details.
func TestValidationError(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := ht.NewOn(t, open)
		pet := a.SeedPet("Rex", 1)
		c := newClient(t, a.Listen(), a.Customer, nil)
		_, err := c.PlaceOrderWithResponse(context.Background(), nil, api.NewOrder{PetId: pet.ID, Quantity: 0})
		var e *client.Error
		if !errors.As(err, &e) {
			t.Fatalf("err = %v, want *client.Error", err)
		}
		if e.Status != 422 || e.Code != "validation_failed" || len(e.Details) == 0 || e.Details[0].Field != "quantity" || e.RequestID == "" {
			t.Fatalf("error = %+v", e)
		}
	})
}

// A key whose day is used up: the transport does not wait for midnight
// and does not send (a 429 would be a strike toward a ban); it answers a
// 429 *Error of its own saying when the window resets.
func TestDayUsedUpIsNotSent(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := ht.NewOn(t, open)
		key, _ := a.IssueKey("daily", db.RoleCustomer, db.PlanEnterprise, 100, 3)
		sent := &counting{}
		c := newClient(t, a.Listen(), key, onServerClock(a, &client.Transport{Base: sent}))
		for range 3 {
			if _, err := c.ListPetsWithResponse(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
		}
		_, err := c.ListPetsWithResponse(context.Background(), nil)
		var e *client.Error
		if !errors.As(err, &e) || !errors.Is(err, client.ErrRateLimited) || e.RetryAfter < time.Hour {
			t.Fatalf("err = %v (%+v), want a 429 *client.Error with hours to wait", err, e)
		}
		if n := sent.sends.Load(); n != 3 {
			t.Fatalf("%d sends, want 3", n)
		}
	})
}
