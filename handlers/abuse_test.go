package handlers_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"petstore/db/dbtest"
	"petstore/handlers/handlerstest"
)

// These tests send abusive requests: each gets the right 4xx Error object,
// or its connection is closed, and never a 500.

// TestAbuseAPI is the table of hostile requests app.Test can carry (bodies
// past Fiber's 1 MiB limit need a real connection: TestAbuseWire), on both
// databases: PostgreSQL's text cannot hold NUL or bytes that are not UTF-8,
// so such text must be refused before it reaches the database. wantField,
// when set, is the field or query parameter the details must name.
func TestAbuseAPI(t *testing.T) {
	dbtest.Each(t, testAbuseAPI)
}

func testAbuseAPI(t *testing.T, open dbtest.Open) {
	a := handlerstest.NewOn(t, open)
	pet := a.SeedPet("Rex", 5)
	name := func(s string) string {
		return `{"name":` + s + `,"categoryId":` + handlerstest.Itoa(pet.CategoryID) + `}`
	}
	// profile is a NewPet with the members of SPEC §14 in extra (JSON).
	profile := func(extra string) string {
		return `{"name":"Rex","categoryId":` + handlerstest.Itoa(pet.CategoryID) + `,` + extra + `}`
	}
	petPath := "/api/pets/" + handlerstest.Itoa(pet.ID)
	cases := []struct {
		name       string
		req        handlerstest.Req
		wantStatus int
		wantCode   string
		wantField  string
	}{
		{"body past 64 KiB", handlerstest.Req{Method: "POST", Path: "/api/pets", Body: name(`"` + strings.Repeat("x", 70<<10) + `"`)}, 413, "payload_too_large", ""},
		// 100k '[' are past 64 KiB, so the size refuses them before any parsing.
		{"100k nested arrays", handlerstest.Req{Method: "POST", Path: "/api/pets", Body: strings.Repeat("[", 100_000)}, 413, "payload_too_large", ""},
		// Within the size, encoding/json stops at depth 10,000.
		{"60k nested arrays", handlerstest.Req{Method: "POST", Path: "/api/pets", Body: strings.Repeat("[", 60_000)}, 400, "bad_request", ""},
		{"60k nested objects", handlerstest.Req{Method: "POST", Path: "/api/categories", Body: `{"name":` + strings.Repeat(`{"a":`, 12_000)}, 400, "bad_request", ""},
		{"invalid UTF-8 in a name", handlerstest.Req{Method: "POST", Path: "/api/pets", Body: []byte(name("\"R\xffx\xc3\""))}, 400, "bad_request", ""},
		{"escaped NUL in a name", handlerstest.Req{Method: "POST", Path: "/api/pets", Body: name(`"Re\u0000x"`)}, 422, "validation_failed", ""},
		{"escaped NUL in a category", handlerstest.Req{Method: "POST", Path: "/api/categories", Body: `{"name":"\u0000"}`}, 422, "validation_failed", ""},
		{"escaped NUL in a key name", handlerstest.Req{Method: "POST", Path: "/api/keys", Body: `{"name":"k\u0000","role":"customer","plan":"free"}`}, 422, "validation_failed", ""},
		// A raw control byte inside a JSON string is not JSON at all.
		{"raw NUL byte in a name", handlerstest.Req{Method: "POST", Path: "/api/pets", Body: []byte(name("\"Re\x00x\""))}, 400, "bad_request", ""},
		// No name holds them (SPEC §2), and PostgreSQL cannot compare them.
		{"NUL in the search", handlerstest.Req{Method: "GET", Path: "/api/pets?q=a%00b"}, 400, "bad_request", "q"},
		{"invalid UTF-8 in the search", handlerstest.Req{Method: "GET", Path: "/api/pets?q=R%ffx"}, 400, "bad_request", "q"},
		{"truncated UTF-8 in the search", handlerstest.Req{Method: "GET", Path: "/api/pets?q=%c3"}, 400, "bad_request", "q"},
		{"control character in the search", handlerstest.Req{Method: "GET", Path: "/api/pets?q=R%1bx"}, 400, "bad_request", "q"},
		{"DEL in the search", handlerstest.Req{Method: "GET", Path: "/api/pets?q=%7f"}, 400, "bad_request", "q"},
		{"C1 control in the search", handlerstest.Req{Method: "GET", Path: "/api/pets?q=%c2%85"}, 400, "bad_request", "q"},
		{"NUL in a status", handlerstest.Req{Method: "GET", Path: "/api/pets?status=available%00"}, 400, "bad_request", "status"},
		{"invalid UTF-8 in an inventory status", handlerstest.Req{Method: "GET", Path: "/api/store/inventory?status=%ff"}, 400, "bad_request", "status"},
		{"NUL in a cursor", handlerstest.Req{Method: "GET", Path: "/api/categories?cursor=%00"}, 400, "bad_request", "cursor"},
		{"NUL in ids", handlerstest.Req{Method: "GET", Path: "/api/pets?ids=1,%00"}, 400, "bad_request", "ids"},
		{"NUL in a categoryId", handlerstest.Req{Method: "GET", Path: "/api/pets?categoryId=%00"}, 400, "bad_request", "categoryId"},
		{"invalid UTF-8 in a petId", handlerstest.Req{Method: "GET", Path: "/api/store/orders?petId=%ff"}, 400, "bad_request", "petId"},
		{"NUL in complete", handlerstest.Req{Method: "GET", Path: "/api/store/orders?complete=true%00"}, 400, "bad_request", "complete"},
		{"NUL in a limit", handlerstest.Req{Method: "GET", Path: "/api/keys?limit=1%00"}, 400, "bad_request", "limit"},
		{"NUL in a path id", handlerstest.Req{Method: "GET", Path: "/api/pets/%00"}, 400, "bad_request", "petId"},
		{"escaped NUL in a description", handlerstest.Req{Method: "POST", Path: "/api/categories", Body: `{"name":"Birds","description":"a\u0000b"}`}, 422, "validation_failed", "description"},
		{"escape in a description", handlerstest.Req{Method: "PUT", Path: "/api/categories/" + handlerstest.Itoa(pet.CategoryID), Body: `{"name":"Dogs","description":"\u001b[31mred"}`}, 422, "validation_failed", "description"},
		{"escaped C1 control in a name", handlerstest.Req{Method: "POST", Path: "/api/pets", Body: name(`"Re\u0085x"`)}, 422, "validation_failed", "name"},
		{"escaped NUL in a key name change", handlerstest.Req{Method: "PATCH", Path: "/api/keys/2", Body: `{"name":"\u0000"}`}, 422, "validation_failed", "name"},
		{"escaped NUL in a plan", handlerstest.Req{Method: "POST", Path: "/api/keys", Body: `{"name":"k","role":"customer","plan":"free\u0000"}`}, 422, "validation_failed", "plan"},
		{"escaped NUL in a role", handlerstest.Req{Method: "POST", Path: "/api/keys", Body: `{"name":"k","role":"\u0000","plan":"free"}`}, 422, "validation_failed", "role"},
		{"escaped NUL in a status", handlerstest.Req{Method: "PUT", Path: "/api/pets/" + handlerstest.Itoa(pet.ID), Body: `{"name":"Rex","categoryId":` + handlerstest.Itoa(pet.CategoryID) + `,"status":"sold\u0000"}`}, 422, "validation_failed", "status"},
		{"escaped NUL in a shipDate", handlerstest.Req{Method: "POST", Path: "/api/store/orders", Body: `{"petId":` + handlerstest.Itoa(pet.ID) + `,"quantity":1,"shipDate":"\u0000"}`}, 422, "validation_failed", "shipDate"},
		{"line breaks in a description", handlerstest.Req{Method: "POST", Path: "/api/categories", Body: `{"name":"Fish","description":"Wet.\r\nVery wet."}`}, 201, "", ""},
		{"invalid UTF-8 in an Idempotency-Key", handlerstest.Req{Method: "POST", Path: "/api/categories", Body: `{"name":"Idem"}`, Header: map[string]string{"Idempotency-Key": "k\xff\xfe"}}, 400, "bad_request", ""},
		{"control character in an Idempotency-Key", handlerstest.Req{Method: "POST", Path: "/api/categories", Body: `{"name":"Idem"}`, Header: map[string]string{"Idempotency-Key": "k\x01"}}, 400, "bad_request", ""},
		{"negative path id", handlerstest.Req{Method: "GET", Path: "/api/pets/-1"}, 400, "bad_request", ""},
		{"zero path id", handlerstest.Req{Method: "DELETE", Path: "/api/store/orders/0"}, 400, "bad_request", ""},
		{"overflowing path id", handlerstest.Req{Method: "PUT", Path: "/api/store/inventory/9223372036854775808", Body: `{"quantity":1}`}, 400, "bad_request", ""},
		{"int64 max path id", handlerstest.Req{Method: "GET", Path: "/api/categories/9223372036854775807"}, 404, "not_found", ""},
		{"negative quantity", handlerstest.Req{Method: "POST", Path: "/api/store/orders", Body: `{"petId":` + handlerstest.Itoa(pet.ID) + `,"quantity":-1}`}, 422, "validation_failed", ""},
		// A number no int64 holds is refused as the wrong type, like "1".
		{"overflowing quantity", handlerstest.Req{Method: "POST", Path: "/api/store/orders", Body: `{"petId":` + handlerstest.Itoa(pet.ID) + `,"quantity":9223372036854775808}`}, 400, "bad_request", ""},
		{"overflowing pet id in a body", handlerstest.Req{Method: "POST", Path: "/api/store/orders", Body: `{"petId":9223372036854775808,"quantity":1}`}, 400, "bad_request", ""},
		{"inventory past int64", handlerstest.Req{Method: "PUT", Path: "/api/store/inventory/" + handlerstest.Itoa(pet.ID), Body: `{"quantity":-9223372036854775809}`}, 400, "bad_request", ""},
		{"inventory int64 max", handlerstest.Req{Method: "PUT", Path: "/api/store/inventory/" + handlerstest.Itoa(pet.ID), Body: `{"quantity":9223372036854775807}`}, 422, "validation_failed", ""},
		{"negative limit", handlerstest.Req{Method: "GET", Path: "/api/pets?limit=-1"}, 400, "bad_request", ""},
		{"overflowing limit", handlerstest.Req{Method: "GET", Path: "/api/pets?limit=9223372036854775808"}, 400, "bad_request", ""},
		{"empty limit", handlerstest.Req{Method: "GET", Path: "/api/store/orders?limit="}, 400, "bad_request", ""},
		{"empty petId", handlerstest.Req{Method: "GET", Path: "/api/store/orders?petId="}, 400, "bad_request", ""},
		{"empty complete", handlerstest.Req{Method: "GET", Path: "/api/store/orders?complete="}, 400, "bad_request", ""},
		{"empty cursor", handlerstest.Req{Method: "GET", Path: "/api/pets?cursor="}, 400, "bad_request", ""},
		{"empty ids", handlerstest.Req{Method: "GET", Path: "/api/pets?ids="}, 400, "bad_request", ""},
		{"empty q", handlerstest.Req{Method: "GET", Path: "/api/pets?q="}, 200, "", ""}, // an empty search is no filter
		{"overflowing categoryId", handlerstest.Req{Method: "GET", Path: "/api/pets?categoryId=99999999999999999999"}, 400, "bad_request", ""},
		{"perMinute 2^63", handlerstest.Req{Method: "POST", Path: "/api/keys", Body: `{"name":"k","role":"customer","plan":"enterprise","perMinute":9223372036854775808,"perDay":1}`}, 400, "bad_request", ""},
		{"negative perDay", handlerstest.Req{Method: "POST", Path: "/api/keys", Body: `{"name":"k","role":"customer","plan":"enterprise","perMinute":1,"perDay":-1}`}, 422, "validation_failed", ""},
		{"empty plan", handlerstest.Req{Method: "POST", Path: "/api/keys", Body: `{"name":"k","role":"customer","plan":""}`}, 422, "validation_failed", ""},
		{"empty plan in a change", handlerstest.Req{Method: "PATCH", Path: "/api/keys/2", Body: `{"plan":""}`}, 422, "validation_failed", ""},
		{"field name in another case", handlerstest.Req{Method: "POST", Path: "/api/pets", Body: `{"NAME":"Rex","categoryId":1}`}, 400, "bad_request", ""},
		{"null body", handlerstest.Req{Method: "PATCH", Path: "/api/store/orders/1", Body: `null`}, 400, "bad_request", ""},
		{"null member", handlerstest.Req{Method: "POST", Path: "/api/pets", Body: `{"name":null,"categoryId":1}`}, 400, "bad_request", ""},
		{"101 ids", handlerstest.Req{Method: "GET", Path: "/api/pets?ids=" + strings.TrimSuffix(strings.Repeat("1,", 101), ",")}, 400, "bad_request", ""},
		{"huge Idempotency-Key", handlerstest.Req{Method: "POST", Path: "/api/categories", Body: `{"name":"Idem"}`, Header: map[string]string{"Idempotency-Key": strings.Repeat("k", 4096)}}, 400, "bad_request", ""},
		// The selling fields of SPEC §14.
		{"escaped NUL in a pet description", handlerstest.Req{Method: "POST", Path: "/api/pets", Body: profile(`"description":"a\u0000b"`)}, 422, "validation_failed", "description"},
		{"C1 control ending a pet description", handlerstest.Req{Method: "PUT", Path: petPath, Body: profile(`"description":"Calm.\u0085"`)}, 422, "validation_failed", "description"},
		{"escape in a pet description", handlerstest.Req{Method: "POST", Path: "/api/pets", Body: profile(`"description":"\u001b[2J"`)}, 422, "validation_failed", "description"},
		{"invalid UTF-8 in a pet description", handlerstest.Req{Method: "POST", Path: "/api/pets", Body: []byte(profile("\"description\":\"R\xffx\""))}, 400, "bad_request", ""},
		{"pet description of 60 KiB", handlerstest.Req{Method: "POST", Path: "/api/pets", Body: profile(`"description":"` + strings.Repeat("x", 60<<10) + `"`)}, 422, "validation_failed", "description"},
		{"description as an object", handlerstest.Req{Method: "POST", Path: "/api/pets", Body: profile(`"description":{"text":"x"}`)}, 400, "bad_request", "description"},
		{"escaped NUL in a breed", handlerstest.Req{Method: "PUT", Path: petPath, Body: profile(`"breed":"La\u0000b"`)}, 422, "validation_failed", "breed"},
		{"escaped NUL in a birthDate", handlerstest.Req{Method: "POST", Path: "/api/pets", Body: profile(`"birthDate":"2020-01-01\u0000"`)}, 422, "validation_failed", "birthDate"},
		{"birthDate of year 0", handlerstest.Req{Method: "POST", Path: "/api/pets", Body: profile(`"birthDate":"0000-01-01"`)}, 422, "validation_failed", "birthDate"},
		{"birthDate in year 9999", handlerstest.Req{Method: "PUT", Path: petPath, Body: profile(`"birthDate":"9999-12-31"`)}, 422, "validation_failed", "birthDate"},
		{"escaped NUL in a price", handlerstest.Req{Method: "POST", Path: "/api/pets", Body: profile(`"price":"1\u0000"`)}, 422, "validation_failed", "price"},
		{"Arabic-Indic digits in a price", handlerstest.Req{Method: "POST", Path: "/api/pets", Body: profile(`"price":"\u0661\u0662"`)}, 422, "validation_failed", "price"},
		{"price past int64", handlerstest.Req{Method: "PUT", Path: petPath, Body: profile(`"price":"99999999999999999999.99"`)}, 422, "validation_failed", "price"},
		{"price as a huge number", handlerstest.Req{Method: "POST", Path: "/api/pets", Body: profile(`"price":1e400`)}, 400, "bad_request", "price"},
		{"null price in a PUT", handlerstest.Req{Method: "PUT", Path: petPath, Body: profile(`"price":null`)}, 400, "bad_request", "price"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.req.Key = a.Staff
			r := a.Do(tc.req)
			if tc.wantCode == "" {
				r.Want(t, tc.wantStatus)
				return
			}
			r.Want(t, tc.wantStatus, tc.wantCode)
			if p := r.Problem(t); tc.wantField != "" && (len(p.Details) == 0 || p.Details[0].Field != tc.wantField) {
				t.Errorf("details %+v, want the first to name %s", p.Details, tc.wantField)
			}
		})
	}
}

// TestAbuseStoredVerbatim stores SQL and markup in names, descriptions and
// breeds: they come back exactly as sent, JSON-escaped in the JSON, and
// searching for them finds them (and LIKE's wildcards are plain
// characters), on both databases.
func TestAbuseStoredVerbatim(t *testing.T) { dbtest.Each(t, testAbuseStoredVerbatim) }

func testAbuseStoredVerbatim(t *testing.T, open dbtest.Open) {
	a := handlerstest.NewOn(t, open)
	rex := a.SeedPet("Rex", 1)
	hostile := []string{
		`Robert'); DROP TABLE pets;--`,
		`x' OR '1'='1`,
		`<script>alert("pwned")</script>`,
		`100% _real_ \ cat`,
	}
	for _, n := range hostile {
		r := a.Do(handlerstest.Req{Method: "POST", Path: "/api/pets", Key: a.Staff,
			Body: map[string]any{"name": n, "categoryId": rex.CategoryID, "description": n + "\n" + n, "breed": n}}).Want(t, 201)
		if strings.Contains(string(r.Body), "<script>") {
			t.Errorf("JSON output carries raw markup: %s", r.Body)
		}
		var got struct{ ID int64 }
		r.Decode(t, &got)
		var back struct{ Name, Description, Breed string }
		a.Do(handlerstest.Req{Method: "GET", Path: "/api/pets/" + handlerstest.Itoa(got.ID), Key: a.Staff}).Want(t, 200).Decode(t, &back)
		if back.Name != n || back.Description != n+"\n"+n || back.Breed != n {
			t.Errorf("stored %q, read back %+v", n, back)
		}
	}
	search := func(q string) []string {
		var pets []struct{ Name string }
		a.Do(handlerstest.Req{Method: "GET", Path: "/api/pets?q=" + url.QueryEscape(q), Key: a.Staff}).Want(t, 200).Decode(t, &pets)
		var names []string
		for _, p := range pets {
			names = append(names, p.Name)
		}
		return names
	}
	for q, want := range map[string]string{
		`' OR 1=1 --`:          "[]",
		`'); DROP TABLE pets;`: "[Robert'); DROP TABLE pets;--]",
		`%`:                    `[100% _real_ \ cat]`,
		`_`:                    `[100% _real_ \ cat]`,
		`\`:                    `[100% _real_ \ cat]`,
		`<SCRIPT>`:             `[<script>alert("pwned")</script>]`,
	} {
		if got := fmt.Sprint(search(q)); got != want {
			t.Errorf("q=%s found %s, want %s", q, got, want)
		}
	}
	var all []struct{ ID int64 }
	a.Do(handlerstest.Req{Method: "GET", Path: "/api/pets", Key: a.Staff}).Want(t, 200).Decode(t, &all)
	if len(all) != 1+len(hostile) {
		t.Errorf("%d pets listed, want %d: the table survived", len(all), 1+len(hostile))
	}
}

// TestAbuseEscapedInPages shows hostile names come out HTML-escaped on the
// storefront and in the staff console, on both databases.
func TestAbuseEscapedInPages(t *testing.T) { dbtest.Each(t, testAbuseEscapedInPages) }

func testAbuseEscapedInPages(t *testing.T, open dbtest.Open) {
	a := handlerstest.NewOn(t, open)
	const evil = `<script>alert("pwned")</script><img src=x onerror=alert(1)>`
	pet := a.SeedPet(evil, 3)
	a.IssueKey(evil, "customer", "free", 0, 0)
	check := func(where string, html []byte) {
		t.Helper()
		s := string(html)
		if strings.Contains(s, `<script>alert`) || strings.Contains(s, `<img src=x`) {
			t.Errorf("%s renders the name as markup", where)
		}
		if !strings.Contains(s, `&lt;script&gt;alert(`) {
			t.Errorf("%s does not show the escaped name", where)
		}
	}
	for _, path := range []string{"/", "/pets/" + handlerstest.Itoa(pet.ID), "/?q=" + url.QueryEscape(evil)} {
		check("storefront "+path, a.Do(handlerstest.Req{Method: "GET", Path: path}).Want(t, 200).Body)
	}
	// A buyer may be called anything printable: the confirmation, My
	// orders and the lookup show it (and the pet's name) as text.
	shopper := a.Shopper(t)
	shopper.Post("/cart", handlerstest.Form("pet_id", handlerstest.Itoa(pet.ID), "quantity", "1")).WantRedirect("/cart")
	n := handlerstest.Itoa(shopper.Checkout(handlerstest.Buyer("name", evil)))
	for _, path := range []string{"/orders/confirmation/" + n, "/orders"} {
		check("storefront "+path, []byte(shopper.Get(path).WantStatus(200).Body))
	}
	shopper.Post("/orders/lookup", handlerstest.Form("number", n, "email", "ada@example.com")).WantRedirect("/orders/lookup/" + n)
	check("storefront lookup", []byte(shopper.Get("/orders/lookup/"+n).WantStatus(200).Body))
	b := a.SignedIn(t)
	for _, path := range []string{"/staff/catalog", "/staff/inventory", "/staff/keys"} {
		check("console "+path, []byte(b.Get(path).WantStatus(200).Body))
	}
}
