package console

import (
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
	"petstore/web"
)

// pageSize is how many rows a console list shows at once.
const pageSize = 100

// searchParam is the search box's parameter on every console list.
const searchParam = "q"

// listQuery describes the query of a filtered console list: one word
// filter, one id filter, the search box (q) and the id its page starts
// from, by their parameters' names.
type listQuery struct {
	path                   string // the list's page
	wordName, idName, from string // the parameters
	validWord              func(string) bool
	wordChoices            string // the valid words, for the message
}

// inventoryQuery is the inventory page's: ?status=&category=&after=.
var inventoryQuery = listQuery{path: "/staff/inventory", wordName: "status", idName: "category", from: "after",
	validWord: db.ValidStatus, wordChoices: "available, pending or sold"}

// orderQuery is the orders page's: ?state=open|complete&pet=&before=.
var orderQuery = listQuery{path: "/staff/orders", wordName: "state", idName: "pet", from: "before",
	validWord: func(s string) bool { return s == db.OrderOpen || s == db.OrderComplete }, wordChoices: "open or complete"}

// listFilter is one request's values of a listQuery.
type listFilter struct {
	q    listQuery
	word string
	id   int64 // 0: any
	from int64 // 0: the first page
	// search is the search box's text, trimmed; "" searches nothing.
	search string
}

// parse reads the request's filter. Errors: bad_request.
func (q listQuery) parse(c *fiber.Ctx) (listFilter, error) {
	f := listFilter{q: q, word: c.Query(q.wordName)}
	if f.word != "" && !q.validWord(f.word) {
		return f, web.BadParam(q.wordName, "must be %s", q.wordChoices)
	}
	var err error
	if f.search, err = querySearch(c); err != nil {
		return f, err
	}
	if f.id, err = web.FormQueryID(c, q.idName); err != nil {
		return f, err
	}
	if f.from, err = web.FormQueryID(c, q.from); err != nil {
		return f, err
	}
	return f, nil
}

// url is the list with no filter, starting from the id from.
func (q listQuery) url(from int64) string { return listFilter{q: q}.url(from) }

// url is the list with these filters, starting from the id from (0: the
// first page); empty filters are left out.
func (f listFilter) url(from int64) string {
	v := url.Values{}
	if f.word != "" {
		v.Set(f.q.wordName, f.word)
	}
	if f.search != "" {
		v.Set(searchParam, f.search)
	}
	for name, id := range map[string]int64{f.q.idName: f.id, f.q.from: from} {
		if id > 0 {
			v.Set(name, strconv.FormatInt(id, 10))
		}
	}
	if len(v) == 0 {
		return f.q.path
	}
	return f.q.path + "?" + v.Encode()
}

// querySearch reads the search box (q), trimmed. Errors: bad_request.
func querySearch(c *fiber.Ctx) (string, error) {
	s := strings.TrimSpace(c.Query(searchParam))
	if why := db.SearchProblem(s); why != "" {
		return "", web.BadParam(searchParam, "%s", why)
	}
	if utf8.RuneCountInString(s) > db.MaxSearchLen {
		return "", web.BadParam(searchParam, "must be at most %d characters", db.MaxSearchLen)
	}
	return s, nil
}
