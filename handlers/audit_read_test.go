package handlers_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"petstore/db"
	"petstore/db/dbtest"
	"petstore/handlers/handlerstest"
)

// auditLog makes entries by a staff user, a staff key and the command
// line on two days, straight through the store, and returns the second day.
func auditLog(t *testing.T, a *handlerstest.App) (day2 time.Time) {
	t.Helper()
	now := a.Clock.Now()
	staff := db.WithOrigin(context.Background(), db.Origin{Actor: db.StaffActor(5, "bob"), RequestID: "r1", IP: "192.0.2.1"})
	key := db.WithOrigin(context.Background(), db.Origin{Actor: db.KeyActor(9, "ci"), RequestID: "r2", IP: "192.0.2.2"})
	cli := db.WithOrigin(context.Background(), db.Origin{Actor: db.CLIActor("ops")})
	a.Clock.Set(now.Add(-24 * time.Hour))
	cat, err := a.Store.CreateCategory(staff, db.NewCategory{Name: handlerstest.Ptr("Audit birds")})
	if err != nil {
		t.Fatal(err)
	}
	a.Clock.Set(now)
	for i := range 3 {
		if _, err := a.Store.CreatePet(key, db.NewPet{Name: handlerstest.Ptr("Bird " + itoa(int64(i))), CategoryID: &cat.ID}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.Store.UpdateCategory(cli, cat.ID, db.NewCategory{Name: handlerstest.Ptr("Birds")}); err != nil {
		t.Fatal(err)
	}
	return now.UTC().Truncate(24 * time.Hour)
}

func TestAuditAPI(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		day2 := auditLog(t, a)
		list := func(q string) []db.AuditEntry {
			t.Helper()
			var es []db.AuditEntry
			a.GetJSON(t, a.Staff, "/api/audit"+q, &es)
			return es
		}
		acts := func(es []db.AuditEntry) []string {
			out := []string{}
			for _, e := range es {
				out = append(out, e.Action)
			}
			return out
		}
		all := list("")
		if got, want := acts(all), []string{"category.update", "pet.create", "pet.create", "pet.create", "category.create"}; !slices.Equal(got, want) {
			t.Fatalf("GET /api/audit = %v, want %v (newest first)", got, want)
		}
		if e := all[4]; e.Actor != db.StaffActor(5, "bob") || e.RequestID != "r1" || e.IP != "192.0.2.1" || e.Target.Type != "category" {
			t.Errorf("oldest entry = %+v", e)
		}
		d1, d2 := day2.AddDate(0, 0, -1).Format(time.DateOnly), day2.Format(time.DateOnly)
		for q, want := range map[string][]string{
			"?actorType=key":                   {"pet.create", "pet.create", "pet.create"},
			"?actorType=staff&actorId=5":       {"category.create"},
			"?actorType=cli":                   {"category.update"},
			"?action=category.update":          {"category.update"},
			"?targetType=category":             {"category.update", "category.create"},
			"?targetType=pet&targetId=1234567": {},
			"?from=" + d2:                      {"category.update", "pet.create", "pet.create", "pet.create"},
			"?to=" + d1:                        {"category.create"},
			"?from=" + d1 + "&to=" + d1:        {"category.create"},
		} {
			if got := acts(list(q)); !slices.Equal(got, want) {
				t.Errorf("%s: %v, want %v", q, got, want)
			}
		}
		// Pages of two, by the Link header, cover the log once.
		pages := a.Pages(t, "/api/audit?limit=2", "id")
		var ids []int64
		for _, p := range pages {
			ids = append(ids, p...)
		}
		var want []int64
		for _, e := range all {
			want = append(want, e.ID)
		}
		if len(pages) != 3 || !slices.Equal(ids, want) {
			t.Errorf("pages %v, want %v in pages of 2", pages, want)
		}
		for q, field := range map[string]string{
			"?actorType=robot": "actorType", "?actorId=5": "actorId", "?targetId=1": "targetId",
			"?action=a%00b": "action", "?targetType=%ff": "targetType", "?from=yesterday": "from",
			"?from=" + d2 + "&to=" + d1: "to", "?action=": "action", "?action=" + strings.Repeat("x", 101): "action",
		} {
			r := a.Do(handlerstest.Req{Method: "GET", Path: "/api/audit" + q, Key: a.Staff}).Want(t, http.StatusBadRequest, db.EBadRequest)
			if p := r.Problem(t); len(p.Details) == 0 || p.Details[0].Field != field {
				t.Errorf("%s: details %+v, want %s", q, p.Details, field)
			}
		}
		a.Do(handlerstest.Req{Method: "GET", Path: "/api/audit", Key: a.Customer}).Want(t, http.StatusForbidden, db.EForbidden)
		a.Do(handlerstest.Req{Method: "GET", Path: "/api/audit"}).Want(t, http.StatusUnauthorized)
		a.Do(handlerstest.Req{Method: "POST", Path: "/api/audit", Key: a.Staff}).Want(t, http.StatusMethodNotAllowed)
	})
}

func TestAuditPage(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		day2 := auditLog(t, a)
		b := a.SignedIn(t)
		page := b.Get("/staff/audit").WantStatus(http.StatusOK)
		if got, want := page.Texts("audit-action"), []string{"signin.success", "category.update", "pet.create", "pet.create", "pet.create", "category.create"}; !slices.Equal(got, want) {
			t.Fatalf("actions %v, want %v", got, want)
		}
		if page.ID("nav-audit").Length() != 1 {
			t.Error("an admin's navigation has no Audit log entry")
		}
		oldest := page.Find(`[data-testid=audit-row]`).Last()
		at := strings.Join(strings.Fields(oldest.Find(`[data-testid=audit-at]`).Text()), " ")
		if want := a.Clock.Now().Add(-24 * time.Hour).UTC().Format("2006-01-02 15:04:05"); at != want {
			t.Errorf("the oldest entry's time reads %q, want %q (UTC)", at, want)
		}
		if got := oldest.Find(`[data-testid=audit-actor]`).Text(); !strings.Contains(got, "bob") || !strings.Contains(got, "#5") {
			t.Errorf("actor reads %q", got)
		}
		d1 := day2.AddDate(0, 0, -1).Format(time.DateOnly)
		for q, want := range map[string][]string{
			"?actorType=key":                                 {"pet.create", "pet.create", "pet.create"},
			"?action=category.update":                        {"category.update"},
			"?targetType=category&actorType=staff&actorId=5": {"category.create"},
			"?from=" + d1 + "&to=" + d1:                      {"category.create"},
		} {
			if got := b.Get("/staff/audit" + q).WantStatus(http.StatusOK).Texts("audit-action"); !slices.Equal(got, want) {
				t.Errorf("%s: %v, want %v", q, got, want)
			}
		}
		bad := b.Get("/staff/audit?from=someday&action=%00").WantStatus(http.StatusUnprocessableEntity)
		// The filters as typed stay (as text a page holds); the error
		// summary takes focus and links to the refused filter (SPEC §10).
		sum := bad.ID("error-summary")
		if _, auto := sum.Attr("autofocus"); !auto || sum.Find(`a[href="#a-from"]`).Length() != 1 {
			t.Errorf("the refusal's summary %q does not take focus or link to the from filter", bad.Text("error-summary"))
		}
		if v, _ := bad.Find("#a-from").Attr("value"); v != "someday" || bad.Find("#a-from").AttrOr("aria-invalid", "") != "true" {
			t.Errorf("the from filter holds %q, not marked invalid; want someday as typed", v)
		}
		// A page holds 100 entries; the next link goes on from the last.
		cli := db.WithOrigin(context.Background(), db.Origin{Actor: db.CLIActor("ops")})
		for range 100 {
			if err := a.Store.Audit(cli, db.AuditOrderExport, db.Target{Type: "orders"}, nil); err != nil {
				t.Fatal(err)
			}
		}
		first := b.Get("/staff/audit").WantStatus(http.StatusOK)
		next, ok := first.ID("next-page").Attr("href")
		if n := len(first.Texts("audit-action")); n != 100 || !ok {
			t.Fatalf("first page: %d entries, next link %v", n, ok)
		}
		if got := b.Get(next).WantStatus(http.StatusOK).Texts("audit-action"); len(got) != 6 || got[5] != "category.create" {
			t.Errorf("second page %v, want the 6 oldest (the sign-in's among them)", got)
		}

		// A clerk: no entry in the navigation, and the page is refused.
		makeClerk(t, a, handlerstest.StaffName)
		if b.Get("/staff/orders").WantStatus(http.StatusOK).ID("nav-audit").Length() != 0 {
			t.Error("a clerk's navigation shows the audit log")
		}
		b.Get("/staff/audit").WantStatus(http.StatusForbidden)
	})
}
