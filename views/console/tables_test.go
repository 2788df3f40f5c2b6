package console

import (
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"petstore/db"
	"petstore/static"
	"petstore/views/viewstest"
)

// TestTablesStackOnPhones: every table of the console's pages is a
// table.stack in a .table-wrap, each body row has a heading cell (the
// card's title on a phone) and every other cell names its column in
// data-label, in the words of the column's heading: the cards then say
// what each value is.
func TestTablesStackOnPhones(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Hour) // any time: the pages' layout is what is tested
	pet := &db.Pet{ID: 7, Name: "Rex", CategoryID: 2, CategoryName: "Dogs", Status: db.StatusPending, Stock: 0, Currency: "EUR"}
	order := &db.ConsoleOrder{Order: db.Order{ID: 9, PetID: 7, Quantity: 2, Total: 2500, Currency: "EUR", CreatedAt: now,
		Customer: &db.Customer{Name: "Ada", Email: "ada@example.com"}}, PetName: "Rex", Shop: true}
	key := &db.APIKey{ID: 3, Name: "Partner", Prefix: "psk_ab", Role: db.RoleCustomer, Plan: db.PlanFree, PerMinute: 60, PerDay: 1000, CreatedAt: now}
	ch := Chrome{Title: "Test", Nav: "dashboard", User: "alice", CSRF: "token"}
	docs := map[string]*goquery.Document{
		"inventory": viewstest.Parse(t, InventoryPage(ch, InventoryView{Rows: []InventoryRow{{Pet: pet, Value: "0"}}})),
		"orders":    viewstest.Parse(t, OrdersPage(ch, OrdersView{Rows: []OrderRow{{Order: order}}})),
		"catalog": viewstest.Parse(t, CatalogPage(ch, CatalogView{Pets: []*db.Pet{pet},
			Categories: []*db.Category{{ID: 2, Name: "Dogs"}}, PetCounts: map[int64]int{2: 1}})),
		"keys": viewstest.Parse(t, KeysPage(ch, KeysView{Now: now, Rows: []KeyRow{{Key: key, Now: now}}})),
		"dashboard": viewstest.Parse(t, DashboardPage(ch, DashboardView{Counts: &db.Dashboard{Pets: map[string]int{}, Currency: "EUR"},
			LowStock: []*db.Pet{pet}, LowStockMax: 3, Recent: []*db.ConsoleOrder{order}})),
		"usage": viewstest.Parse(t, UsagePage(ch, UsageView{Now: now, Sort: "name", Rows: []UsageRow{{Key: key, MinuteLimit: 60, DayLimit: 1000}}})),
		"team": viewstest.Parse(t, TeamPage(ch, TeamView{Me: 1, Rows: []*db.StaffUser{
			{ID: 1, Username: "alice", Role: db.RoleAdmin, LastSignInAt: &now},
			{ID: 2, Username: "bob", Role: db.RoleClerk, TwoFactorSince: &now, DisabledAt: &now, MustChangePassword: true},
		}})),
		"audit": viewstest.Parse(t, AuditPage(ch, AuditView{Entries: []*db.AuditEntry{{ID: 1, At: now, Actor: db.StaffActor(1, "alice"),
			Action: "pet.price", Target: db.TargetID("pet", 7), Changes: []byte(`{"price":["1.00","2.00"]}`), RequestID: "r", IP: "192.0.2.1"}}})),
	}
	for name, doc := range docs {
		tables := doc.Find("main table")
		if tables.Length() == 0 {
			t.Errorf("%s: no table", name)
		}
		tables.Each(func(_ int, table *goquery.Selection) {
			id := name + " " + table.AttrOr("data-testid", "table")
			if !table.HasClass("stack") || table.ParentFiltered(".table-wrap").Length() != 1 {
				t.Errorf("%s: class %q, in a .table-wrap: %v", id, table.AttrOr("class", ""), table.ParentFiltered(".table-wrap").Length() == 1)
			}
			var heads []string
			table.Find("thead th").Each(func(_ int, th *goquery.Selection) {
				th.Find(`[aria-hidden="true"]`).Remove()
				heads = append(heads, strings.Join(strings.Fields(th.Text()), " "))
			})
			table.Find("tbody tr").Each(func(_ int, tr *goquery.Selection) {
				if tr.Find("td[colspan]").Length() > 0 {
					return
				}
				if tr.Find(`th[scope="row"]`).Length() != 1 {
					t.Errorf("%s: a row without its heading cell", id)
				}
				tr.Children().Each(func(i int, cell *goquery.Selection) {
					if goquery.NodeName(cell) != "td" {
						return
					}
					label, ok := cell.Attr("data-label")
					if i >= len(heads) || !ok || label != heads[i] {
						t.Errorf("%s: column %d's cell says data-label=%q (%v), its heading %q", id, i+1, label, ok, heads)
					}
				})
			})
		})
	}
	if doc := docs["inventory"]; doc.Find(`link[rel="stylesheet"]`).Length() != 1 ||
		doc.Find(`link[rel="stylesheet"]`).AttrOr("href", "") != static.URL(static.ConsoleCSS) {
		t.Errorf("the console links %d stylesheets, want its one bundle", doc.Find(`link[rel="stylesheet"]`).Length())
	}
}
