package api_test

import (
	"strconv"
	"strings"
	"testing"

	"petstore/db/dbtest"
	"petstore/handlers/handlerstest"
)

// conditional sends GET path as the customer, with If-None-Match when
// ifNoneMatch is set.
func conditional(a *handlerstest.App, path, ifNoneMatch string) *handlerstest.Response {
	a.T.Helper()
	r := handlerstest.Req{Method: "GET", Path: path, Key: a.Customer}
	if ifNoneMatch != "" {
		r.Header = map[string]string{"If-None-Match": ifNoneMatch}
	}
	return a.Do(r)
}

// strongTag GETs path, wants 200 with a strong ETag and returns it.
func strongTag(t *testing.T, a *handlerstest.App, path string) string {
	t.Helper()
	r := conditional(a, path, "").Want(t, 200)
	tag := r.Header.Get("ETag")
	if !strings.HasPrefix(tag, `"`) || !strings.HasSuffix(tag, `"`) || len(tag) < 3 {
		t.Fatalf("GET %s: ETag %q, want a strong tag", path, tag)
	}
	return tag
}

// wantNotModified sends ifNoneMatch and wants 304 with no body, the tag
// the client holds, and the request counted against the limits.
func wantNotModified(t *testing.T, a *handlerstest.App, path, ifNoneMatch, tag string) {
	t.Helper()
	before := conditional(a, "/api/categories", "").Header.Get("X-RateLimit-Remaining-Minute")
	r := conditional(a, path, ifNoneMatch)
	if r.Status != 304 || len(r.Body) != 0 {
		t.Fatalf("GET %s If-None-Match %s: %d %q, want 304 with no body", path, ifNoneMatch, r.Status, r.Body)
	}
	if got := r.Header.Get("ETag"); got != tag {
		t.Errorf("GET %s 304: ETag %q, want %q", path, got, tag)
	}
	b, _ := strconv.Atoi(before)
	if got, want := r.Header.Get("X-RateLimit-Remaining-Minute"), strconv.Itoa(b-1); got != want {
		t.Errorf("GET %s 304: X-RateLimit-Remaining-Minute %q, want %q (the 304 counts)", path, got, want)
	}
	for _, h := range []string{"X-Request-Id", "X-API-Version", "X-RateLimit-Limit", "RateLimit"} {
		if r.Header.Get(h) == "" {
			t.Errorf("GET %s 304: %s missing", path, h)
		}
	}
}

// TestConditionalGETs: the catalog and inventory GETs carry strong ETags
// and answer a current If-None-Match (alone, in a list, or *) with 304; a
// write to a pet, its stock or its category changes the tags it shows in.
func TestConditionalGETs(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		rex := a.SeedPet("Rex", 3)
		a.SeedPet("Fido", 1)
		id, cat := handlerstest.Itoa(rex.ID), handlerstest.Itoa(rex.CategoryID)
		paths := []string{
			"/api/pets", "/api/pets?limit=1", "/api/pets/" + id, "/api/categories", "/api/categories/" + cat,
			"/api/store/inventory", "/api/store/inventory/" + id,
		}
		tags := map[string]string{}
		for _, p := range paths {
			tag := strongTag(t, a, p)
			tags[p] = tag
			wantNotModified(t, a, p, tag, tag)
			wantNotModified(t, a, p, `"stale", W/`+tag, tag)
			wantNotModified(t, a, p, "*", tag)
			conditional(a, p, `"stale"`).Want(t, 200)
		}
		if tags["/api/pets"] == tags["/api/pets?limit=1"] {
			t.Errorf("two queries with different bodies share the tag %s", tags["/api/pets"])
		}

		writes := []struct {
			name    string
			write   func()
			changed []string
		}{
			{"pet update", func() {
				a.Do(handlerstest.Req{Method: "PUT", Path: "/api/pets/" + id, Key: a.Staff,
					Body: map[string]any{"name": "Rex II", "categoryId": rex.CategoryID}}).Want(t, 200)
			}, []string{"/api/pets", "/api/pets?limit=1", "/api/pets/" + id}},
			{"stock change", func() {
				a.Do(handlerstest.Req{Method: "PUT", Path: "/api/store/inventory/" + id, Key: a.Staff,
					Body: map[string]any{"quantity": 7}}).Want(t, 200)
			}, []string{"/api/store/inventory", "/api/store/inventory/" + id}},
			{"category rename", func() {
				a.Do(handlerstest.Req{Method: "PUT", Path: "/api/categories/" + cat, Key: a.Staff,
					Body: map[string]any{"name": "Hounds"}}).Want(t, 200)
			}, []string{"/api/categories", "/api/categories/" + cat}},
		}
		for _, w := range writes {
			w.write()
			for _, p := range w.changed {
				old := tags[p]
				r := conditional(a, p, old).Want(t, 200)
				if got := r.Header.Get("ETag"); got == old {
					t.Errorf("after %s: GET %s kept the tag %s", w.name, p, old)
				}
				tags[p] = r.Header.Get("ETag")
			}
		}
	})
}

// TestConditionalGETsSkipTheList: once an instance has answered a tag, a
// revalidation while nothing changed is answered from the change counter
// alone: with the catalog's tables gone, the 304s still come, while a GET
// that must run its list fails.
func TestConditionalGETsSkipTheList(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		a.SkipContract = true // the 500s below are the point, not the contract
		rex := a.SeedPet("Rex", 3)
		id := handlerstest.Itoa(rex.ID)
		paths := []string{"/api/pets", "/api/pets/" + id, "/api/categories", "/api/store/inventory", "/api/store/inventory/" + id}
		tags := map[string]string{}
		for _, p := range paths {
			tags[p] = strongTag(t, a, p)
			conditional(a, p, tags[p]).Want(t, 304) // remembers the tag
		}
		for _, table := range []string{"inventory", "pets", "categories"} {
			if _, err := a.Store.DB().Exec(`ALTER TABLE ` + table + ` RENAME TO ` + table + `_gone`); err != nil {
				t.Fatalf("rename %s: %v", table, err)
			}
		}
		for _, p := range paths {
			conditional(a, p, tags[p]).Want(t, 304)
			if r := conditional(a, p, ""); r.Status == 200 || r.Status == 304 {
				t.Fatalf("GET %s without If-None-Match: %d, want the list's failure", p, r.Status)
			}
		}
	})
}
