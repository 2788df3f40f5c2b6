package console_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"petstore/db"
	"petstore/handlers"
	"petstore/handlers/handlerstest"
	"petstore/web/browser/browsertest"
	"petstore/web/ratelimit"
)

func TestConsoleUsage(t *testing.T) {
	a := handlerstest.New(t, withStrikes(2))
	b := a.SignedIn(t)
	busy, k := a.IssueKey("busy", db.RoleCustomer, db.PlanEnterprise, 3, 100)
	quiet, q := a.IssueKey("quiet", db.RoleCustomer, db.PlanFree, 0, 0)
	cell := func(p *browsertest.Page, id int64, testid string) string {
		t.Helper()
		return browsertest.Text(p.Find(`[data-testid="usage-row"][data-key-id="` + handlerstest.Itoa(id) + `"] [data-testid="` + testid + `"]`))
	}

	t.Run("counts after API calls", func(t *testing.T) {
		a.Do(handlerstest.Req{Method: "GET", Path: "/api/pets", Key: quiet}).Want(t, 200)
		for range 3 {
			a.Do(handlerstest.Req{Method: "GET", Path: "/api/pets", Key: busy}).Want(t, 200)
		}
		a.Do(handlerstest.Req{Method: "GET", Path: "/api/pets", Key: busy}).Want(t, 429, "rate_limited")
		p := b.Get("/staff/usage").WantStatus(http.StatusOK)
		if got := cell(p, k.ID, "minute-use"); got != "3 / 3" {
			t.Errorf("busy minute = %q", got)
		}
		if got := cell(p, k.ID, "day-use"); got != "3 / 100" {
			t.Errorf("busy day = %q", got)
		}
		if got := cell(p, k.ID, "limited-429"); got != "1" {
			t.Errorf("busy 429s = %q", got)
		}
		if got := cell(p, q.ID, "minute-use"); got != "1 / 60" {
			t.Errorf("quiet minute = %q", got)
		}
		if got := cell(p, k.ID, "ban-state"); got != "none" {
			t.Errorf("ban = %q", got)
		}
		bar := p.Find(`[data-key-id="` + handlerstest.Itoa(k.ID) + `"] progress`).First()
		if bar.AttrOr("value", "") != "3" || bar.AttrOr("max", "") != "3" || !bar.HasClass("full") {
			t.Errorf("minute bar = value %s max %s class %q", bar.AttrOr("value", ""), bar.AttrOr("max", ""), bar.AttrOr("class", ""))
		}
		// Busiest first by default.
		if first := p.ID("usage-row").First().AttrOr("data-key-id", ""); first != handlerstest.Itoa(k.ID) {
			t.Errorf("first row = key %s, want the busy key %d", first, k.ID)
		}
	})
	t.Run("chart", func(t *testing.T) {
		p := b.Get("/staff/usage")
		svg := p.Find(`[data-key-id="` + handlerstest.Itoa(k.ID) + `"] svg[data-testid="usage-chart"]`)
		if svg.Length() != 1 {
			t.Fatalf("no chart")
		}
		if svg.AttrOr("role", "") != "img" || !contains(svg.AttrOr("aria-label", ""), "3 in all", "at most 3") {
			t.Errorf("chart label = %q", svg.AttrOr("aria-label", ""))
		}
		rects := svg.Find("rect")
		if rects.Length() != 1 || !rects.HasClass("now") || !rects.HasClass("full") {
			t.Fatalf("bars = %d, class %q; want one bar for the current minute, at the limit", rects.Length(), rects.AttrOr("class", ""))
		}
		if got := browsertest.Text(rects.Find("title")); got != "10:00 UTC: 3 requests" {
			t.Errorf("bar title = %q", got)
		}
		// A minute later, the old minute moves left and the new one is empty.
		a.Clock.Add(time.Minute)
		a.Do(handlerstest.Req{Method: "GET", Path: "/api/pets", Key: busy}).Want(t, 200)
		svg = b.Get("/staff/usage").Find(`[data-key-id="` + handlerstest.Itoa(k.ID) + `"] svg`)
		if n := svg.Find("rect").Length(); n != 2 {
			t.Errorf("bars = %d after a second minute, want 2", n)
		}
	})
	t.Run("ban shows and lifts", func(t *testing.T) {
		a.Clock.Add(time.Minute)
		a.BanKey(busy, 3, 2)
		p := b.Get("/staff/usage")
		if got := cell(p, k.ID, "ban-state"); !contains(got, "banned", "15 min left", "1 in 24 h") {
			t.Fatalf("ban = %q", got)
		}
		if p.Find(`[data-key-id="`+handlerstest.Itoa(k.ID)+`"] [data-testid="lift-ban"]`).Length() != 1 {
			t.Fatalf("no lift button")
		}
		a.Clock.Add(5 * time.Minute)
		if got := cell(b.HX("/staff/usage"), k.ID, "ban-left"); got != "10 min left" {
			t.Errorf("time left = %q", got)
		}
		b.HXPost("/staff/keys/"+handlerstest.Itoa(k.ID)+"/lift-ban", nil).WantStatus(http.StatusOK)
		p = b.Get("/staff/usage")
		// A lifted ban does not count toward later doubling, nor here.
		if got := cell(p, k.ID, "ban-state"); got != "none" {
			t.Errorf("ban after lifting = %q", got)
		}
	})
	t.Run("sorting and the polled panel", func(t *testing.T) {
		p := b.Get("/staff/usage?sort=name")
		if first := browsertest.Text(p.ID("usage-key").First()); first != "busy" {
			t.Errorf("first by name = %q", first)
		}
		if p.Find(`th[aria-sort="ascending"]`).Length() != 1 {
			t.Errorf("sorted column not marked")
		}
		b.Get("/staff/usage?sort=bogus").WantStatus(http.StatusBadRequest)
		p = b.HX("/staff/usage?sort=day").WantStatus(http.StatusOK)
		panel := p.ID("usage-panel")
		if panel.Length() != 1 || p.Find("main").Length() != 0 {
			t.Fatalf("htmx answer is not the panel")
		}
		if trig := panel.AttrOr("hx-trigger", ""); !contains(trig, "every 3s") || panel.AttrOr("hx-get", "") != "/staff/usage?sort=day" {
			t.Errorf("panel polls %q with %q", panel.AttrOr("hx-get", ""), trig)
		}
	})
}

func TestConsoleDashboard(t *testing.T) {
	a := handlerstest.New(t)
	b := a.SignedIn(t)
	ctx := context.Background()
	a.SeedPet("Plenty", 10)
	low := a.SeedPet("Last one", 1)
	a.SeedPet("Gone", 0)
	if _, err := a.Store.PlaceOrder(ctx, db.Owner{APIKeyID: a.CustID}, db.NewOrder{PetID: &low.ID, Quantity: handlerstest.Ptr(int64(1))}); err != nil {
		t.Fatal(err)
	}
	two := a.SeedPet("Two left", 2)
	p := b.Get("/staff").WantStatus(http.StatusOK)
	for id, want := range map[string]string{"count-available": "2", "count-pending": "1", "count-sold": "1", "count-open-orders": "1", "count-keys": "3", "count-bans": "0"} {
		if got := browsertest.Text(p.ID(id).Find(".value")); got != want {
			t.Errorf("%s = %q, want %q", id, got, want)
		}
	}
	rows := p.ID("low-stock-row")
	if rows.Length() != 1 || !contains(browsertest.Text(rows), "Two left", "2") {
		t.Errorf("low stock = %q", browsertest.Text(rows))
	}
	if got := browsertest.Text(p.ID("recent-orders")); !contains(got, "Last one") {
		t.Errorf("recent orders = %q", got)
	}
	if _, ok := p.Find("main").Attr("sse-connect"); !ok {
		t.Errorf("dashboard is not live")
	}
	hx := b.HX("/staff")
	if hx.Find("#dashboard").Length() != 1 || hx.Find("main").Length() != 0 {
		t.Errorf("htmx answer is not the panels")
	}
	_ = two
}

// downStore is a counter store that stops answering once down is set,
// like Redis becoming unreachable; until then the Store inside answers.
type downStore struct {
	ratelimit.Store
	down atomic.Bool
}

// errDown is what a client gets from a port nobody listens on: the
// failover store tells an outage by the error's type.
var errDown = &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}

func (s *downStore) Take(ctx context.Context, subject string, lim ratelimit.Limits, strikes int, now time.Time) (ratelimit.TakeResult, error) {
	if s.down.Load() {
		return ratelimit.TakeResult{}, errDown
	}
	return s.Store.Take(ctx, subject, lim, strikes, now)
}
func (s *downStore) Peek(ctx context.Context, subject string, now time.Time) (ratelimit.Counts, error) {
	if s.down.Load() {
		return ratelimit.Counts{}, errDown
	}
	return s.Store.Peek(ctx, subject, now)
}
func (s *downStore) History(ctx context.Context, subject string, now time.Time) (ratelimit.History, error) {
	if s.down.Load() {
		return ratelimit.History{}, errDown
	}
	return s.Store.History(ctx, subject, now)
}
func (s *downStore) ClearStrikes(ctx context.Context, subject string, now time.Time) error {
	if s.down.Load() {
		return errDown
	}
	return s.Store.ClearStrikes(ctx, subject, now)
}

func TestConsoleRedisWarning(t *testing.T) {
	primary := &downStore{Store: ratelimit.NewMemoryStore()}
	shared := ratelimit.NewFailoverStore(primary, ratelimit.NewMemoryStore(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	a := handlerstest.New(t, func(h *handlers.Handler, c *ratelimit.Config) {
		h.Shared = shared
		c.Store = shared
	})
	b := a.SignedIn(t) // the sign-in post is counted through Redis (browser.WebLimit)
	if b.Get("/staff").ID("redis-warning").Length() != 0 {
		t.Fatalf("warning shown while Redis answers")
	}
	primary.down.Store(true)
	a.Do(handlerstest.Req{Method: "GET", Path: "/api/pets", Key: a.Customer}).Want(t, 200) // fails open, marks Redis down
	if shared.Healthy() {
		t.Fatal("failover store still healthy")
	}
	for _, path := range []string{"/staff", "/staff/usage", "/staff/keys"} {
		b.Get(path).WantText("redis-warning", "Redis unreachable: rate limits are counted per instance.")
	}
}
