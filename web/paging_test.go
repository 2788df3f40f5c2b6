package web

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/google/go-cmp/cmp"

	"petstore/db"
)

// paramResult is what a test of request parameters checks: the value
// read, or the 400 it was refused with and the parameter its details name.
type paramResult struct {
	Status int
	Value  string // the value read, as JSON
	Code   string
	Field  string
}

// readParams reads a path with app and turns the answer into a
// paramResult.
func readParams(t *testing.T, app *fiber.App, path string) paramResult {
	t.Helper()
	a := get(t, app, path)
	if a.Status != http.StatusOK {
		p := a.problem(t)
		r := paramResult{Status: a.Status, Code: p.Code}
		if len(p.Details) > 0 {
			r.Field = p.Details[0].Field
		}
		return r
	}
	return paramResult{Status: a.Status, Value: string(a.Body)}
}

// paramsApp answers what the parameter readers make of a request, as JSON.
func paramsApp(t *testing.T) *fiber.App {
	t.Helper()
	return newTestApp(t, AppOptions{}, func(r *Routes) {
		r.Add(route("GET", "/pets", func(c *fiber.Ctx) error {
			p, err := ParsePage(c)
			if err != nil {
				return err
			}
			SetNextLink(c, c.Query("more") == "yes", 42)
			return c.JSON(p)
		}))
		r.Add(route("GET", "/pets/:petId", func(c *fiber.Ctx) error {
			id, err := PathID(c, "petId")
			if err != nil {
				return err
			}
			return c.JSON(id)
		}))
		r.Add(route("GET", "/filters", func(c *fiber.Ctx) error {
			var f struct {
				CategoryID int64
				Complete   *bool
				Statuses   []string
			}
			var err error
			if f.CategoryID, err = QueryID(c, "categoryId"); err != nil {
				return err
			}
			if f.Complete, err = QueryBool(c, "complete"); err != nil {
				return err
			}
			if f.Statuses, err = QueryStatuses(c); err != nil {
				return err
			}
			return c.JSON(f)
		}))
	})
}

// page is a db.Page as /pets answers it.
func page(afterID int64, limit int) string {
	b, _ := json.Marshal(db.Page{AfterID: afterID, Limit: limit})
	return string(b)
}

// cursorOf is a cursor as a client might forge it.
func cursorOf(raw string) string { return base64.RawURLEncoding.EncodeToString([]byte(raw)) }

// TestParsePage: limit is 1–100, 20 when absent; cursor is one this API
// issued (EncodeCursor). Anything else is 400 bad_request with details
// naming the parameter (SPEC §2), a parameter sent empty included.
func TestParsePage(t *testing.T) {
	app := paramsApp(t)
	bad := func(param string) paramResult {
		return paramResult{Status: 400, Code: db.EBadRequest, Field: param}
	}
	ok := func(afterID int64, limit int) paramResult {
		return paramResult{Status: 200, Value: page(afterID, limit)}
	}
	for _, tc := range []struct {
		query string
		want  paramResult
	}{
		{"", ok(0, db.DefaultLimit)},
		{"limit=1", ok(0, 1)},
		{"limit=100", ok(0, 100)},
		{"limit=101", bad("limit")},
		{"limit=0", bad("limit")},
		{"limit=-1", bad("limit")},
		{"limit=2.5", bad("limit")},
		{"limit=ten", bad("limit")},
		{"limit=", bad("limit")},
		{"cursor=" + EncodeCursor(42), ok(42, db.DefaultLimit)},
		{"cursor=" + EncodeCursor(42) + "&limit=5", ok(42, 5)},
		{"cursor=zzz", bad("cursor")},
		{"cursor=", bad("cursor")},
		{"cursor=" + cursorOf("v1:0"), bad("cursor")},
		{"cursor=" + cursorOf("v1:-3"), bad("cursor")},
		{"cursor=" + cursorOf("v2:42"), bad("cursor")},
		{"cursor=" + cursorOf("42"), bad("cursor")},
		{"cursor=" + base64.URLEncoding.EncodeToString([]byte("v1:42")), bad("cursor")}, // padded
	} {
		t.Run(tc.query, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, readParams(t, app, "/pets?"+tc.query)); diff != "" {
				t.Errorf("GET /pets?%s (-want +got):\n%s", tc.query, diff)
			}
		})
	}
}

// TestNextLink: when more rows follow, the answer links the next page
// (Link: <…>; rel="next") with the request's other parameters kept and
// the cursor after the last row, which the next request reads back; the
// last page has no link.
func TestNextLink(t *testing.T) {
	app := paramsApp(t)
	if a := get(t, app, "/pets?limit=2&more=no"); a.Header.Get(fiber.HeaderLink) != "" {
		t.Errorf("the last page links %q, want no link", a.Header.Get(fiber.HeaderLink))
	}
	for _, query := range []string{"limit=2&more=yes&status=available", "cursor=" + EncodeCursor(7) + "&more=yes&limit=2&status=available"} {
		t.Run(query, func(t *testing.T) {
			link := get(t, app, "/pets?"+query).Header.Get(fiber.HeaderLink)
			target, ok := strings.CutSuffix(link, `>; rel="next"`)
			target, ok2 := strings.CutPrefix(target, "<")
			if !ok || !ok2 {
				t.Fatalf("Link = %q, want <…>; rel=\"next\"", link)
			}
			u, err := url.Parse(target)
			if err != nil {
				t.Fatal(err)
			}
			want := url.Values{"limit": {"2"}, "more": {"yes"}, "status": {"available"}, "cursor": {EncodeCursor(42)}}
			if diff := cmp.Diff(want, u.Query()); u.Path != "/pets" || diff != "" {
				t.Errorf("next = %s, want /pets with (-want +got):\n%s", target, diff)
			}
			if got := readParams(t, app, target); got.Value != page(42, 2) {
				t.Errorf("following the link reads %+v, want the page after 42", got)
			}
		})
	}
}

// TestPathID: a path id is a positive int64; anything else is 400
// bad_request naming the parameter (SPEC §2), before any lookup.
func TestPathID(t *testing.T) {
	app := paramsApp(t)
	bad := paramResult{Status: 400, Code: db.EBadRequest, Field: "petId"}
	for _, tc := range []struct {
		id   string
		want paramResult
	}{
		{"1", paramResult{Status: 200, Value: "1"}},
		{"9223372036854775807", paramResult{Status: 200, Value: "9223372036854775807"}},
		{"9223372036854775808", bad},
		{"99999999999999999999", bad},
		{"0", bad},
		{"-1", bad},
		{"1.0", bad},
		{"abc", bad},
		{"%00", bad},
	} {
		t.Run(tc.id, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, readParams(t, app, "/pets/"+tc.id)); diff != "" {
				t.Errorf("GET /pets/%s (-want +got):\n%s", tc.id, diff)
			}
		})
	}
}

// TestFindByPath: FindByPath answers what the store finds by the path's
// id, its not_found a 404; a path that is no id is 400 and the store is
// not asked.
func TestFindByPath(t *testing.T) {
	var asked []int64
	find := func(_ context.Context, id int64) (string, error) {
		asked = append(asked, id)
		if id != 7 {
			return "", db.Errorf(db.ENotFound, "Pet not found.")
		}
		return "Rex", nil
	}
	app := newTestApp(t, AppOptions{}, func(r *Routes) {
		r.Add(route("GET", "/pets/:petId", func(c *fiber.Ctx) error {
			name, err := FindByPath(c, "petId", find)
			if err != nil {
				return err
			}
			return c.SendString(name)
		}))
	})
	for _, tc := range []struct {
		id   string
		want paramResult
	}{
		{"7", paramResult{Status: 200, Value: "Rex"}},
		{"8", paramResult{Status: 404, Code: db.ENotFound}},
		{"seven", paramResult{Status: 400, Code: db.EBadRequest, Field: "petId"}},
	} {
		if diff := cmp.Diff(tc.want, readParams(t, app, "/pets/"+tc.id)); diff != "" {
			t.Errorf("GET /pets/%s (-want +got):\n%s", tc.id, diff)
		}
	}
	if diff := cmp.Diff([]int64{7, 8}, asked); diff != "" {
		t.Errorf("ids looked up (-want +got):\n%s", diff)
	}
}

// TestQueryFilters: the optional filters are absent when not sent; an id
// is a positive int64, a boolean true or false, a status one of the
// three (repeated or as a comma list). A value sent empty, or any other,
// is 400 bad_request naming the parameter.
func TestQueryFilters(t *testing.T) {
	app := paramsApp(t)
	bad := func(param string) paramResult {
		return paramResult{Status: 400, Code: db.EBadRequest, Field: param}
	}
	ok := func(v string) paramResult { return paramResult{Status: 200, Value: v} }
	for _, tc := range []struct {
		query string
		want  paramResult
	}{
		{"", ok(`{"CategoryID":0,"Complete":null,"Statuses":null}`)},
		{"categoryId=3", ok(`{"CategoryID":3,"Complete":null,"Statuses":null}`)},
		{"categoryId=0", bad("categoryId")},
		{"categoryId=-3", bad("categoryId")},
		{"categoryId=x", bad("categoryId")},
		{"categoryId=", bad("categoryId")},
		{"complete=true", ok(`{"CategoryID":0,"Complete":true,"Statuses":null}`)},
		{"complete=false", ok(`{"CategoryID":0,"Complete":false,"Statuses":null}`)},
		{"complete=yes", bad("complete")},
		{"complete=TRUE", bad("complete")},
		{"complete=", bad("complete")},
		{"status=available&status=sold", ok(`{"CategoryID":0,"Complete":null,"Statuses":["available","sold"]}`)},
		{"status=available,pending", ok(`{"CategoryID":0,"Complete":null,"Statuses":["available","pending"]}`)},
		{"status=lost", bad("status")},
		{"status=available,", bad("status")},
		{"status=", bad("status")},
	} {
		t.Run(tc.query, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, readParams(t, app, "/filters?"+tc.query)); diff != "" {
				t.Errorf("GET /filters?%s (-want +got):\n%s", tc.query, diff)
			}
		})
	}
}
