package db

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/lib/pq"
)

// MaxSearchLen bounds a console search box's text, in characters: longer
// than any name, email address or phone the store keeps.
const MaxSearchLen = 254

// orderSearchCap is how many checkouts a search's keys may match before
// the search walks orders newest first instead of reading its matches.
//
// Reading the matches costs their number, m; walking orders newest first
// costs about pageSize × N / m rows (N orders) until a page is found, and
// at most orderSearchWindow. Each costs a few microseconds a row on either
// database: 5,000 keeps each way near 10-25 ms at a million orders on a
// busy machine (TestOrderSearchAtAMillion), inside SPEC §10's 50 ms.
const orderSearchCap = 5_000

// orderSearchWindow is how many orders, newest first from the page's
// start, a search whose keys match many checkouts walks for one page.
// Matches spread through the orders fill a page within it up to a shop
// of about a million orders (5,000 of them or more match); matches
// bunched among older orders, or a larger shop, leave a page short, and
// the next page walks the window before it: no page walks more than
// this, however the matches lie.
const orderSearchWindow = 5_000

// orderSearch is the console's one search box over orders (SPEC §10): an
// order by its number, the buyer's name, email or phone, each a prefix,
// case aside.
type orderSearch struct {
	// number is q read as an order's or a checkout's number (the order
	// number a shopper is given), 0 when q is not one.
	number int64
	// keys are the checkouts' key columns q is a prefix of, each with the
	// key q folds to for it.
	keys []searchKey
}

// searchKey is one prefix range on a key column of checkouts.
type searchKey struct{ col, prefix string }

// parseOrderSearch reads q: "#1234" or "1234" is a number (and digits are
// also a phone's prefix), anything with an @ an email address's prefix,
// digits with spaces and + - ( ) a phone's, anything else a name's (an
// email address starts with a name's letters too). nil when q is empty.
func parseOrderSearch(q string) *orderSearch {
	q = strings.TrimSpace(q)
	if q == "" {
		return nil
	}
	s := &orderSearch{}
	digits := strings.TrimPrefix(q, "#")
	if n, err := strconv.ParseInt(digits, 10, 64); err == nil && n > 0 && digits[0] != '+' && digits[0] != '-' {
		s.number = n
	}
	if phoneProblem(q) == "" {
		if k := phoneKey(q); len(k) >= 3 {
			s.keys = append(s.keys, searchKey{"phone_key", k})
		}
		return s
	}
	if strings.HasPrefix(q, "#") {
		return s
	}
	s.keys = append(s.keys, searchKey{"email_key", foldEmail(q)})
	if !strings.Contains(q, "@") {
		s.keys = append(s.keys, searchKey{"name_key", foldName(q)})
	}
	return s
}

// phoneKey is a phone number's digits alone, what checkouts.phone_key
// holds.
func phoneKey(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// prefixEnd is the first string past every string that starts with p in
// code point order (UTF-8 byte order): p followed by the last code point.
func prefixEnd(p string) string { return p + string(utf8.MaxRune) }

// keyRange adds to w the condition "c.<col> starts with prefix" as a range
// its index serves: on PostgreSQL under the "C" collation of the index
// (migration 00021).
func (s *Store) keyRange(w *where, alias, col, prefix string) string {
	c := alias + "." + col
	if s.dialect == DialectPostgres {
		c += ` COLLATE "C"`
	}
	return c + " >= " + w.arg(prefix) + " AND " + c + " < " + w.arg(prefixEnd(prefix))
}

// searchProblem says why q cannot be searched for, "" when it can.
func searchProblem(q string) string {
	switch {
	case !utf8.ValidString(q):
		return "must be valid UTF-8"
	case hasControl(q):
		return "must not contain control characters"
	case utf8.RuneCountInString(q) > MaxSearchLen:
		return fmt.Sprintf("must be at most %d characters", MaxSearchLen)
	}
	return ""
}

// searchCap is orderSearchCap, or the store's own for a test.
func (s *Store) searchCap() int {
	if s.orderSearchCap > 0 {
		return s.orderSearchCap
	}
	return orderSearchCap
}

// countMatches counts the checkouts the search's keys match, up to
// searchCap() + 1 for each key.
func (s *Store) countMatches(ctx context.Context, q *orderSearch) (int, error) {
	if len(q.keys) == 0 {
		return 0, nil
	}
	var w where
	parts := make([]string, len(q.keys))
	for i, k := range q.keys {
		parts[i] = `(SELECT count(*) FROM (SELECT 1 FROM checkouts c WHERE ` + s.keyRange(&w, "c", k.col, k.prefix) +
			` LIMIT ` + strconv.Itoa(s.searchCap()+1) + `) AS m` + strconv.Itoa(i) + `)`
	}
	var n int
	if err := s.get(ctx, &n, `SELECT `+strings.Join(parts, " + "), w.args...); err != nil {
		return 0, fmt.Errorf("count order matches: %w", err)
	}
	return n, nil
}

// findSearchedOrders is FindConsoleOrders with a search, a page of
// orders newest first, read one of two ways:
//
//   - Few matches (countMatches at most searchCap()): each key's matches
//     are read by its index, their orders by orders_checkout, the page's
//     ids picked from them by a sort, and only that page's orders read,
//     by their ids.
//     On PostgreSQL each checkout's orders are looked up by a LATERAL
//     subquery that is never flattened: else, where a tenth of the
//     checkouts match, the planner hashes them against every order.
//   - Many: orders are walked newest first by the primary key, each
//     order's checkout checked by its own, until the page is full or
//     orderSearchWindow orders were walked.
func (s *Store) findSearchedOrders(ctx context.Context, f ConsoleOrderFilter, q *orderSearch) ([]*ConsoleOrder, int64, error) {
	page := Page{AfterID: f.BeforeID, Limit: f.Limit}
	n, err := s.countMatches(ctx, q)
	if err != nil {
		return nil, 0, err
	}
	var w where
	sel := s.listSelector(true)
	if n > s.searchCap() {
		top := f.BeforeID
		if top == 0 {
			if err := s.get(ctx, &top, `SELECT COALESCE(max(id), 0) + 1 FROM orders`); err != nil {
				return nil, 0, fmt.Errorf("newest order: %w", err)
			}
		}
		window := int64(orderSearchWindow)
		if s.orderSearchWindow > 0 {
			window = s.orderSearchWindow
		}
		low := max(top-window, 0)
		visibleOrders(&w, f.Complete, f.PetID)
		w.add("o.id >= " + w.arg(low))
		var either []string
		for _, k := range q.keys {
			either = append(either, "("+s.keyRange(&w, "c", k.col, k.prefix)+")")
		}
		cond := "EXISTS (SELECT 1 FROM checkouts c WHERE c.id = o.checkout_id AND (" + strings.Join(either, " OR ") + "))"
		if q.number > 0 {
			cond += " OR o.id = " + w.arg(q.number) + " OR o.checkout_id = " + w.arg(q.number)
		}
		w.add("(" + cond + ")")
		tail := page.newestFirst(&w, "o.id")
		rows, more, err := selectPageWith[*ConsoleOrder](ctx, sel, "console orders", page,
			`SELECT `+consoleOrderCols+consoleOrderFrom+w.String()+tail, w.args...)
		switch {
		case err != nil:
			return nil, 0, err
		case more:
			return rows, rows[len(rows)-1].ID, nil
		case low > 1:
			return rows, low, nil // the window before this one may hold more
		}
		return rows, 0, nil
	}
	// filters are the list's own conditions on o, for one branch.
	filters := func() string {
		b := where{args: w.args}
		visibleOrders(&b, f.Complete, f.PetID)
		if f.BeforeID > 0 {
			b.add("o.id < " + b.arg(f.BeforeID))
		}
		w.args = b.args
		return strings.Join(b.conds, " AND ")
	}
	checkoutOrders := "checkouts c JOIN orders o ON o.checkout_id = c.id"
	if s.dialect == DialectPostgres {
		checkoutOrders = "checkouts c CROSS JOIN LATERAL (SELECT o.id, o.state, o.pet_id FROM orders o WHERE o.checkout_id = c.id OFFSET 0) AS o"
	}
	var branches []string
	for _, k := range q.keys {
		cond := s.keyRange(&w, "c", k.col, k.prefix)
		branches = append(branches, "SELECT o.id FROM "+checkoutOrders+" WHERE "+cond+" AND "+filters())
	}
	if q.number > 0 {
		byCheckout := "o.checkout_id = " + w.arg(q.number)
		branches = append(branches, "SELECT o.id FROM orders o WHERE "+byCheckout+" AND "+filters())
		byID := "o.id = " + w.arg(q.number)
		branches = append(branches, "SELECT o.id FROM orders o WHERE "+byID+" AND "+filters())
	}
	if len(branches) == 0 {
		return nil, 0, nil
	}
	pick := strings.Join(branches, " UNION ") + " ORDER BY 1 DESC LIMIT " + strconv.Itoa(page.limit()+1)
	var ids []int64
	if err := sel(ctx, &ids, pick, w.args...); err != nil {
		return nil, 0, fmt.Errorf("find console orders: %w", err)
	}
	ids, more := trim(ids, page)
	if len(ids) == 0 {
		return nil, 0, nil
	}
	// The page's orders by their ids, looked up by the primary key: a
	// join of the picked ids with orders, PostgreSQL may hash against
	// every order.
	var in where
	rows, _, err := selectPageWith[*ConsoleOrder](ctx, sel, "console orders", page,
		`SELECT `+consoleOrderCols+consoleOrderFrom+` WHERE o.id `+s.idIn(&in, ids)+` ORDER BY o.id DESC`, in.args...)
	if err != nil {
		return nil, 0, err
	}
	next := int64(0)
	if more {
		next = ids[len(ids)-1]
	}
	return rows, next, nil
}

// idIn is "IN the ids" as one argument, so the statement is the same
// however many ids: an array on PostgreSQL, a JSON array on SQLite.
func (s *Store) idIn(w *where, ids []int64) string {
	if s.dialect == DialectPostgres {
		return "= ANY(" + w.arg(pq.Array(ids)) + "::bigint[])"
	}
	b, _ := json.Marshal(ids) // a slice of integers always marshals
	return "IN (SELECT value FROM json_each(" + w.arg(string(b)) + "))"
}

// nextOrder is the BeforeID of the page after rows, 0 when no more follow.
func nextOrder(rows []*ConsoleOrder, more bool) int64 {
	if !more || len(rows) == 0 {
		return 0
	}
	return rows[len(rows)-1].ID
}
