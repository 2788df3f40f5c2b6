package api_test

import (
	"bytes"
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
			before := map[string][]byte{}
			for _, p := range w.changed {
				before[p] = conditional(a, p, "").Want(t, 200).Body // remembered by the instance
			}
			w.write()
			for _, p := range w.changed {
				old := tags[p]
				plain := conditional(a, p, "").Want(t, 200)
				if bytes.Equal(plain.Body, before[p]) {
					t.Errorf("after %s: GET %s answered the body from before it: %s", w.name, p, plain.Body)
				}
				r := conditional(a, p, old).Want(t, 200)
				if got := r.Header.Get("ETag"); got == old || got != plain.Header.Get("ETag") || !bytes.Equal(r.Body, plain.Body) {
					t.Errorf("after %s: GET %s tagged %s (was %s), and %s without If-None-Match", w.name, p, got, old, plain.Header.Get("ETag"))
				}
				tags[p] = r.Header.Get("ETag")
			}
		}
	})
}

// TestConditionalGETsAnswerFromMemory: once an instance has answered a
// query, a GET of it while nothing changed is answered from the change
// counter alone, revalidation or not: with the catalog's tables gone, the
// 304s and the remembered 200s (same body, same tag) still come, while a
// query not answered before fails.
func TestConditionalGETsAnswerFromMemory(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		a.SkipContract = true // the 500s below are the point, not the contract
		rex := a.SeedPet("Rex", 3)
		a.SeedPet("Fido", 1)
		id := handlerstest.Itoa(rex.ID)
		paths := []string{"/api/pets", "/api/pets?limit=1", "/api/pets/" + id, "/api/categories", "/api/store/inventory", "/api/store/inventory/" + id}
		answers := map[string]*handlerstest.Response{}
		for _, p := range paths {
			answers[p] = conditional(a, p, "").Want(t, 200)
		}
		for _, table := range []string{"inventory", "pets", "categories"} {
			if _, err := a.Store.DB().Exec(`ALTER TABLE ` + table + ` RENAME TO ` + table + `_gone`); err != nil {
				t.Fatalf("rename %s: %v", table, err)
			}
		}
		for _, p := range paths {
			tag := answers[p].Header.Get("ETag")
			conditional(a, p, tag).Want(t, 304)
			r := conditional(a, p, "").Want(t, 200)
			if r.Header.Get("ETag") != tag || !bytes.Equal(r.Body, answers[p].Body) {
				t.Errorf("GET %s again: %s %q, want the remembered %s %q", p, r.Header.Get("ETag"), r.Body, tag, answers[p].Body)
			}
			if got, want := r.Header.Get("Link"), answers[p].Header.Get("Link"); got != want {
				t.Errorf("GET %s again: Link %q, want %q", p, got, want)
			}
		}
		if r := conditional(a, "/api/pets?limit=2", ""); r.Status == 200 || r.Status == 304 {
			t.Fatalf("GET of a query not answered before: %d, want the list's failure", r.Status)
		}
	})
}
