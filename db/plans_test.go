package db_test

import (
	"context"
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"petstore/db"
	"petstore/db/dbtest"
	"petstore/handlers/handlerstest"
	"petstore/web"
)

// Issue 30: the storefront's and the console's queries run on plans that
// stay index-driven however many orders arrived since the statistics were
// taken. The bench saw the storefront's home fall to 121 requests a
// second after some 40,000 orders on a PostgreSQL without autovacuum, and
// an ANALYZE bring it back.

// plansOrders is how many orders the plans test places after the
// statistics were taken.
const plansOrders = 50_000

// plansPets is the size of the plans test's catalog.
const plansPets = 20_000

// bigTables are the tables that grow with the shop, each with the rows it
// must hold before the plans are checked: no plan may read one of them
// whole, or a tenth of it.
var bigTables = map[string]int{
	"orders":         plansOrders,
	"events":         plansOrders,
	"checkouts":      plansOrders / 10,
	"pets":           plansPets,
	"inventory":      plansPets,
	"low_stock":      plansPets / 20,
	"audit_log":      plansPets,
	"staff_sessions": plansPets,
	"login_failures": plansPets,
}

// smallTables are the other tables the pages read, which may be scanned:
// each is small by nature, whatever the traffic. A table in neither list
// fails the test until it is placed in one.
var smallTables = map[string]string{
	"categories":        "a shop's own categories, tens",
	"staff_users":       "the shop's team",
	"api_keys":          "issued by staff: tens to hundreds",
	"bans":              "the bans in force and recent ones",
	"webhooks":          "at most db.MaxWebhooks",
	"imports":           "one at a time, a few a day",
	"auth_changes":      "one row",
	"catalog_changes":   "64 slots",
	"pet_counts":        "categories × statuses × 64 slots",
	"order_counts":      "states × currencies × 64 slots",
	"order_count_slots": "64 slots",
}

// TestPlansHoldWithoutFreshStatistics (PostgreSQL; issue 30): a catalog
// is seeded and analysed, autovacuum is turned off on every table, 50,000
// orders are placed through the store, and then the storefront's and the
// console's pages are requested. Every statement they ran is EXPLAINed as
// it ran (a custom plan, for its arguments) and, for a prepared statement,
// as the generic plan PostgreSQL switches to after five runs: none may read
// a table of bigTables whole, by a sequential scan or by a whole index
// with no limit above it.
func TestPlansHoldWithoutFreshStatistics(t *testing.T) {
	if testing.Short() {
		t.Skip("places 50,000 orders")
	}
	a := handlerstest.NewOn(t, dbtest.Postgres)
	ctx := context.Background()
	x := a.Store.DB()
	cats, pets := seedPlansCatalog(t, ctx, a)
	mustExec(t, ctx, x, `ANALYZE`)
	var tables []string
	if err := x.SelectContext(ctx, &tables, `SELECT tablename FROM pg_tables WHERE schemaname = current_schema()`); err != nil {
		t.Fatal(err)
	}
	for _, table := range tables {
		mustExec(t, ctx, x, `ALTER TABLE `+table+` SET (autovacuum_enabled = false)`)
	}

	start := time.Now()
	placePlansOrders(t, ctx, a, pets)
	t.Logf("placed %d orders in %v", plansOrders, time.Since(start).Round(time.Millisecond))
	for table, least := range bigTables {
		if n := handlerstest.CountRows(t, a, table); n < least {
			t.Fatalf("%s holds %d rows, want %d or more", table, n, least)
		}
	}

	ran := traceQueries(a.Store)
	requestPlansPages(t, a, cats, pets)
	a.Store.TraceQueries(nil)

	rows := tableRows(t, ctx, x)
	checked, generic := 0, 0
	conn := genericPlans(t, ctx, x)
	cached := map[string]bool{}
	for _, q := range a.Store.CachedQueries() {
		cached[q] = true
	}
	for i, q := range ran.distinct() {
		if !explainable(q.query) {
			continue
		}
		checked++
		// A SELECT runs for real under EXPLAIN ANALYZE, which counts the
		// rows each scan read; a write is only planned.
		reads := isSelect(q.query)
		wantPlanHolds(t, "the plan", q, explainCustom(t, ctx, x, q.query, q.args, reads), rows)
		if !cached[q.query] || params(q.query) == 0 {
			continue
		}
		generic++
		name := "plans_" + strconv.Itoa(i)
		wantPlanHolds(t, "the generic plan", q, explainGeneric(t, ctx, conn, name, q.query, q.args, reads), rows)
	}
	t.Logf("%d statements the pages ran checked, %d of them also as generic plans", checked, generic)
	if checked < 40 {
		t.Errorf("only %d statements checked: the pages did not run", checked)
	}
}

// wantPlanHolds fails the test when plan, what of q, reads a table of
// bigTables whole (fullReads) or, run, read more than a tenth of one.
func wantPlanHolds(t *testing.T, what string, q ranQuery, plan shapeNode, rows map[string]int) {
	t.Helper()
	bad := fullReads(plan)
	for _, table := range relations(plan) {
		if _, big := bigTables[table]; !big && smallTables[table] == "" {
			bad = append(bad, table+", a table the test does not know: add it to bigTables or smallTables")
		}
	}
	for table, n := range rowsReadByTable(plan) {
		if limit := rows[table] / 10; n > limit && n > 1000 {
			bad = append(bad, fmt.Sprintf("%d of the %d rows of %s", n, rows[table], table))
		}
	}
	if len(bad) > 0 {
		t.Errorf("%s of\n\t%s\nfor %v reads %s:\n%s", what, q.query, q.args, strings.Join(bad, ", "), outline(plan))
	}
}

// tableRows counts the rows of each table of bigTables.
func tableRows(t *testing.T, ctx context.Context, x *sqlx.DB) map[string]int {
	t.Helper()
	rows := map[string]int{}
	for table := range bigTables {
		var n int
		if err := x.GetContext(ctx, &n, `SELECT count(*) FROM `+table); err != nil {
			t.Fatal(err)
		}
		rows[table] = n
	}
	return rows
}

// seedPlansCatalog makes eight categories and plansPets pets, each in
// stock, in one statement as a bulk import would, and a history of staff
// sign-ins, failed sign-ins and audit entries; it returns the categories
// and the pets in stock.
func seedPlansCatalog(t *testing.T, ctx context.Context, a *handlerstest.App) ([]int64, []int64) {
	t.Helper()
	x := a.Store.DB()
	var cats []int64
	for i := range 8 {
		cats = append(cats, MustCreateCategory(t, ctx, a.Store, "Category "+strconv.Itoa(i)).ID)
	}
	tmpl := MustCreatePet(t, ctx, a.Store, cats[0], "Template", 1)
	mustExec(t, ctx, x, `INSERT INTO pets (name, name_key, category_id, status, price, created_at, updated_at)
		SELECT 'pet ' || i, 'pet ' || i, ($1::bigint[])[1 + i % 8], 'available', 1000 + i, $2, $2
		FROM generate_series(1, $3) AS i`, pqArray(cats), a.Clock.Now(), plansPets-1)
	// A few pets sold, some with little stock, most with plenty: the
	// orders keep them available.
	mustExec(t, ctx, x, `INSERT INTO inventory (pet_id, quantity, updated_at)
		SELECT id, CASE WHEN id % 97 = 0 THEN 0 WHEN id % 13 = 0 THEN 2 ELSE 1000000 END, $1
		FROM pets WHERE id <> $2`, a.Clock.Now(), tmpl.ID)
	mustExec(t, ctx, x, `UPDATE pets SET status = 'sold' WHERE id IN (SELECT pet_id FROM inventory WHERE quantity = 0)`)
	mustExec(t, ctx, x, `UPDATE inventory SET quantity = 1000000 WHERE pet_id = $1`, tmpl.ID)
	mustExec(t, ctx, x, `INSERT INTO audit_log (at, actor_type, actor_id, actor_name, action, target_type, target_id, changes)
		SELECT $1::timestamptz - i * interval '1 minute', 'key', '1', 'importer', 'pet.update', 'pet', (1 + i % $2)::text, '{}'
		FROM generate_series(1, $2) AS i`, a.Clock.Now(), plansPets)
	staff := a.AddStaff("history", "a password long enough")
	mustExec(t, ctx, x, `INSERT INTO staff_sessions (id, staff_user_id, created_at, expires_at)
		SELECT md5(i::text), $1, $2::timestamptz - interval '40 days', $2::timestamptz - interval '10 days'
		FROM generate_series(1, $3) AS i`, staff.ID, a.Clock.Now(), plansPets)
	mustExec(t, ctx, x, `INSERT INTO login_failures (username, client_ip, at)
		SELECT 'guess' || (i % 100), '192.0.2.' || (i % 250), $1::timestamptz - i * interval '1 second'
		FROM generate_series(1, $2) AS i`, a.Clock.Now(), plansPets)
	var pets []int64
	if err := x.SelectContext(ctx, &pets, `SELECT pet_id FROM inventory WHERE quantity > 2 ORDER BY pet_id`); err != nil {
		t.Fatal(err)
	}
	return cats, pets
}

// pqArray is ids as a PostgreSQL array literal.
func pqArray(ids []int64) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.FormatInt(id, 10)
	}
	return "{" + strings.Join(s, ",") + "}"
}

// placePlansOrders places plansOrders orders through the store from 16
// goroutines, over the twenty days up to the clock's, ten at a time
// (placeTenOrders).
func placePlansOrders(t *testing.T, ctx context.Context, a *handlerstest.App, pets []int64) {
	t.Helper()
	const workers, days = 16, 20
	const tensPerDay = plansOrders / days / 10
	now := a.Clock.Now()
	defer a.Clock.Set(now)
	for day := days - 1; day >= 0; day-- {
		a.Clock.Set(now.AddDate(0, 0, -day))
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := w; i < tensPerDay; i += workers {
					if err := placeTenOrders(ctx, a, pets, (day*tensPerDay+i)*10); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
	}
}

// placeTenOrders places the orders n to n+9 of the plans test as the shop
// and the API do: a checkout, a shopper's lone order and eight lone orders
// by API key. One API order in four is then completed or cancelled.
func placeTenOrders(ctx context.Context, a *handlerstest.App, pets []int64, n int) error {
	one := int64(1)
	line := func(i int) db.NewOrder { return db.NewOrder{PetID: &pets[(n+i)%len(pets)], Quantity: &one} }
	shopper := "shopper-" + strconv.Itoa(n%500)
	_, err := a.Store.PlaceCheckout(ctx, shopper, 1_000_000,
		db.NewCheckout{Name: "Buyer " + strconv.Itoa(n), Email: "buyer" + strconv.Itoa(n) + "@example.com"}, []db.NewOrder{line(0)})
	if err != nil {
		return fmt.Errorf("order %d: %w", n, err)
	}
	if _, err := a.Store.PlaceOrder(ctx, db.Owner{ShopperID: shopper}, line(1)); err != nil {
		return fmt.Errorf("order %d: %w", n+1, err)
	}
	for i := 2; i < 10; i++ {
		o, err := a.Store.PlaceOrder(ctx, db.Owner{APIKeyID: a.CustID}, line(i))
		if err != nil {
			return fmt.Errorf("order %d: %w", n+i, err)
		}
		switch (n/10 + i) % 8 {
		case 0:
			_, err = a.Store.UpdateOrder(ctx, o.ID, db.OrderUpdate{Complete: ptr(true)})
		case 1:
			err = a.Store.CancelOrder(ctx, o.ID, nil)
		}
		if err != nil {
			return fmt.Errorf("order %d: %w", n+i, err)
		}
	}
	return nil
}

// requestPlansPages asks for every page of the storefront and the console
// that reads the database, with and without their filters.
func requestPlansPages(t *testing.T, a *handlerstest.App, cats, pets []int64) {
	t.Helper()
	cat, pet := strconv.FormatInt(cats[3], 10), strconv.FormatInt(pets[len(pets)/2], 10)
	cursor := web.EncodeCursor(pets[len(pets)/2])

	shop := a.Shopper(t)
	for _, path := range []string{
		"/", "/?category=" + cat, "/?status=available", "/?status=sold", "/?status=pending",
		"/?category=" + cat + "&status=available", "/?q=pet+12", "/?q=et", "/?q=zzzz",
		"/pets/" + pet, "/pets/" + pet + "?photo=2",
	} {
		shop.Get(path).WantStatus(http.StatusOK)
	}
	for _, path := range []string{"/?cursor=" + cursor, "/?category=" + cat + "&cursor=" + cursor, "/?status=available&cursor=" + cursor} {
		shop.HX(path).WantStatus(http.StatusOK)
	}
	shop.Post("/cart", handlerstest.Form("pet_id", pet, "quantity", "1")).WantRedirect("/cart")
	shop.Get("/cart").WantStatus(http.StatusOK)
	number := shop.Checkout(nil)
	shop.Get("/orders/confirmation/" + strconv.FormatInt(number, 10)).WantStatus(http.StatusOK)
	shop.Get("/orders").WantStatus(http.StatusOK)
	lookup := a.Shopper(t)
	lookup.Get("/orders/lookup").WantStatus(http.StatusOK)
	lookup.Follow(lookup.Post("/orders/lookup", handlerstest.Form("number", strconv.FormatInt(number, 10), "email", "ada@example.com")).
		WantStatus(http.StatusSeeOther)).WantStatus(http.StatusOK)

	staff := a.SignedIn(t)
	for _, path := range []string{
		"/staff/", "/staff/orders", "/staff/orders?state=open", "/staff/orders?state=complete", "/staff/orders?pet=" + pet,
		"/staff/orders?state=complete&pet=" + pet, "/staff/orders?before=" + strconv.Itoa(plansOrders/2),
		"/staff/catalog", "/staff/catalog?after=" + pet, "/staff/pets/" + pet + "/edit",
		"/staff/inventory", "/staff/inventory?status=sold", "/staff/inventory?status=available&after=" + pet,
		"/staff/inventory?category=" + cat,
		"/staff/keys", "/staff/usage", "/staff/team", "/staff/account", "/staff/webhooks",
		"/staff/audit", "/staff/audit?action=pet.update", "/staff/audit?targetType=pet&targetId=" + pet,
		"/staff/audit?actorType=staff", "/staff/audit?actorType=key", "/staff/audit?before=" + strconv.Itoa(plansPets/2),
	} {
		staff.Get(path).WantStatus(http.StatusOK)
	}
	staff.HX("/staff/").WantStatus(http.StatusOK)
	staff.HX("/staff/inventory/" + pet).WantStatus(http.StatusOK)
}

// ranQueries are the statements a store ran while traced, each with the
// arguments of its first run.
type ranQueries struct {
	mu    sync.Mutex
	order []string
	args  map[string][]any
}

// traceQueries starts recording what s runs.
func traceQueries(s *db.Store) *ranQueries {
	r := &ranQueries{args: map[string][]any{}}
	s.TraceQueries(func(query string, args []any) {
		r.mu.Lock()
		defer r.mu.Unlock()
		if _, ok := r.args[query]; !ok {
			r.order = append(r.order, query)
			r.args[query] = slices.Clone(args)
		}
	})
	return r
}

// ranQuery is one statement that ran.
type ranQuery struct {
	query string
	args  []any
}

// distinct lists each statement once, in the order they first ran.
func (r *ranQueries) distinct() []ranQuery {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]ranQuery, len(r.order))
	for i, q := range r.order {
		out[i] = ranQuery{q, r.args[q]}
	}
	return out
}

// explainable reports whether EXPLAIN takes query: a SELECT, INSERT,
// UPDATE or DELETE, or one with a WITH.
func explainable(query string) bool {
	word, _, _ := strings.Cut(strings.TrimLeft(query, " \t\n("), " ")
	switch strings.ToUpper(strings.TrimSpace(word)) {
	case "SELECT", "INSERT", "UPDATE", "DELETE", "WITH":
		return true
	}
	return false
}

// placeholder finds the $N of a query.
var placeholder = regexp.MustCompile(`\$([0-9]+)`)

// params is the highest $N of query.
func params(query string) int {
	n := 0
	for _, m := range placeholder.FindAllStringSubmatch(query, -1) {
		if i, _ := strconv.Atoi(m[1]); i > n {
			n = i
		}
	}
	return n
}

// explainCustom is query's plan for args, as PostgreSQL plans a one-off
// statement or the first runs of a prepared one; run when analyze is set.
func explainCustom(t *testing.T, ctx context.Context, x *sqlx.DB, query string, args []any, analyze bool) shapeNode {
	t.Helper()
	var raw []byte
	if err := x.GetContext(ctx, &raw, explain(analyze)+query, args...); err != nil {
		t.Fatalf("explain %s: %v", query, err)
	}
	return readPlan(t, raw)
}

// explain starts an EXPLAIN in JSON, with ANALYZE when analyze is set.
func explain(analyze bool) string {
	if analyze {
		return `EXPLAIN (ANALYZE, FORMAT JSON) `
	}
	return `EXPLAIN (FORMAT JSON) `
}

// genericPlans is a connection on which prepared statements are planned
// generically, as PostgreSQL does after five runs when the generic plan
// seems no dearer than the custom ones.
func genericPlans(t *testing.T, ctx context.Context, x *sqlx.DB) *sqlx.Conn {
	t.Helper()
	conn, err := x.Connx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if _, err := conn.ExecContext(ctx, `SET plan_cache_mode = force_generic_plan`); err != nil {
		t.Fatal(err)
	}
	return conn
}

// explainGeneric is the generic plan of query, prepared as name on conn,
// run with args when analyze is set (the generic plan does not depend on
// them: otherwise NULLs stand in).
func explainGeneric(t *testing.T, ctx context.Context, conn *sqlx.Conn, name, query string, args []any, analyze bool) shapeNode {
	t.Helper()
	if _, err := conn.ExecContext(ctx, `PREPARE `+name+` AS `+query); err != nil {
		t.Fatalf("prepare %s: %v", query, err)
	}
	values := make([]string, params(query))
	for i := range values {
		values[i] = "NULL"
		if analyze && i < len(args) {
			values[i] = literal(t, args[i])
		}
	}
	var raw []byte
	if err := conn.GetContext(ctx, &raw, explain(analyze)+`EXECUTE `+name+`(`+strings.Join(values, ", ")+`)`); err != nil {
		t.Fatalf("explain %s: %v", query, err)
	}
	return readPlan(t, raw)
}

// literal is v written in SQL, for EXECUTE's arguments.
func literal(t *testing.T, v any) string {
	t.Helper()
	if valuer, ok := v.(driver.Valuer); ok {
		var err error
		if v, err = valuer.Value(); err != nil {
			t.Fatal(err)
		}
	}
	switch v := v.(type) {
	case nil:
		return "NULL"
	case string:
		return pq.QuoteLiteral(v)
	case time.Time:
		return pq.QuoteLiteral(v.UTC().Format(time.RFC3339Nano))
	case bool:
		return strconv.FormatBool(v)
	case int, int64, int32:
		return fmt.Sprint(v)
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(rv.Int(), 10)
	case reflect.String:
		return pq.QuoteLiteral(rv.String())
	case reflect.Pointer:
		if rv.IsNil() {
			return "NULL"
		}
		return literal(t, rv.Elem().Interface())
	}
	t.Fatalf("no SQL literal for %T", v)
	return ""
}

// isSelect reports whether query only reads.
func isSelect(query string) bool {
	word, _, _ := strings.Cut(strings.TrimLeft(query, " \t\n("), " ")
	return strings.EqualFold(strings.TrimSpace(word), "SELECT") && !strings.Contains(query, "FOR UPDATE")
}

// shapeNode is one node of a JSON plan, as far as its shape goes.
type shapeNode struct {
	Type      string `json:"Node Type"`
	Relation  string `json:"Relation Name"`
	Index     string `json:"Index Name"`
	IndexCond string `json:"Index Cond"`
	// Run by EXPLAIN ANALYZE: the rows the node returned and those its
	// filters dropped, per loop.
	ActualRows   int         `json:"Actual Rows"`
	Loops        int         `json:"Actual Loops"`
	FilterDrops  int         `json:"Rows Removed by Filter"`
	RecheckDrops int         `json:"Rows Removed by Index Recheck"`
	Plans        []shapeNode `json:"Plans"`
}

// readPlan reads EXPLAIN (FORMAT JSON).
func readPlan(t *testing.T, raw []byte) shapeNode {
	t.Helper()
	var doc []struct{ Plan shapeNode }
	if err := json.Unmarshal(raw, &doc); err != nil || len(doc) != 1 {
		t.Fatalf("read plan: %v: %s", err, raw)
	}
	return doc[0].Plan
}

// fullReads names the scans of plan that read a table of bigTables whole:
// a sequential scan, or an index scan with no condition and no Limit
// above it that stops it (a walk of the whole index; under a Limit, with
// no sort or aggregate between, it stops after a page).
func fullReads(plan shapeNode) []string {
	var bad []string
	var walk func(n shapeNode, limited bool)
	walk = func(n shapeNode, limited bool) {
		if _, big := bigTables[n.Relation]; big {
			switch n.Type {
			case "Seq Scan":
				bad = append(bad, "Seq Scan on "+n.Relation)
			case "Index Scan", "Index Only Scan":
				if n.IndexCond == "" && !limited {
					bad = append(bad, n.Type+" on "+n.Relation+" by "+n.Index+" with no condition")
				}
			}
		}
		switch n.Type {
		case "Limit":
			limited = true
		case "Sort", "Hash", "Aggregate", "SetOp", "WindowAgg":
			limited = false // these read all their input before the Limit stops them
		}
		for _, c := range n.Plans {
			walk(c, limited)
		}
	}
	walk(plan, false)
	return bad
}

// rowsReadByTable sums, by table of bigTables, the rows the scans of a
// plan run by EXPLAIN ANALYZE read: those they returned and those their
// filters dropped, in every loop.
func rowsReadByTable(plan shapeNode) map[string]int {
	read := map[string]int{}
	var walk func(n shapeNode)
	walk = func(n shapeNode) {
		if _, big := bigTables[n.Relation]; big && strings.HasSuffix(n.Type, "Scan") {
			read[n.Relation] += (n.ActualRows + n.FilterDrops + n.RecheckDrops) * max(n.Loops, 1)
		}
		for _, c := range n.Plans {
			walk(c)
		}
	}
	walk(plan)
	return read
}

// relations lists the tables the scans of plan read (not those it writes).
func relations(plan shapeNode) []string {
	var tables []string
	var walk func(n shapeNode)
	walk = func(n shapeNode) {
		if strings.HasSuffix(n.Type, "Scan") && n.Relation != "" && !slices.Contains(tables, n.Relation) {
			tables = append(tables, n.Relation)
		}
		for _, c := range n.Plans {
			walk(c)
		}
	}
	walk(plan)
	return tables
}

// outline is plan as an indented tree of its nodes.
func outline(plan shapeNode) string {
	var b strings.Builder
	var walk func(n shapeNode, depth int)
	walk = func(n shapeNode, depth int) {
		fmt.Fprintf(&b, "\t%s%s", strings.Repeat("  ", depth), n.Type)
		if n.Relation != "" {
			fmt.Fprintf(&b, " on %s", n.Relation)
		}
		if n.Index != "" {
			fmt.Fprintf(&b, " by %s", n.Index)
		}
		if n.IndexCond != "" {
			fmt.Fprintf(&b, " (%s)", n.IndexCond)
		}
		if n.Loops > 0 {
			fmt.Fprintf(&b, ": %d rows ×%d loops, %d dropped by filters", n.ActualRows, n.Loops, n.FilterDrops+n.RecheckDrops)
		}
		b.WriteString("\n")
		for _, c := range n.Plans {
			walk(c, depth+1)
		}
	}
	walk(plan, 0)
	return b.String()
}
