package api_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"petstore/db/dbtest"
	"petstore/handlers/handlerstest"
)

// petProfileFields are the fields of SPEC §14 a Pet may carry.
var petProfileFields = []string{"price", "currency", "description", "breed", "birthDate", "photos"}

// profileOf is what a Pet's JSON says of the §14 fields, absent ones left out.
func profileOf(pet map[string]any) map[string]any {
	out := map[string]any{}
	for _, f := range petProfileFields {
		if v, ok := pet[f]; ok {
			out[f] = v
		}
	}
	return out
}

// profile is the §14 part of a Pet: price, currency EUR, no photos and the
// optional fields given in kv (field, value pairs).
func profile(price string, kv ...string) map[string]any {
	m := map[string]any{"price": price, "currency": "EUR", "photos": []any{}}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// TestPetProfileValidation sends every rule of SPEC §14 for NewPet's
// price, description, breed and birthDate through POST /api/pets on both
// databases: a wrong JSON type or a null price is 400, a value the rules
// refuse is 422 naming the field, and an accepted pet answers with the
// values as stored. Dates are relative to the app's clock.
func TestPetProfileValidation(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		dogs := a.Create(t, "/api/categories", map[string]any{"name": "Dogs"})
		today := a.Clock.Now().UTC()
		day := func(d time.Time) string { return d.Format(time.DateOnly) }
		long := strings.Repeat("é", 2000)

		t.Run("POST without them", func(t *testing.T) {
			r := a.Do(handlerstest.Req{Method: "POST", Path: "/api/pets", Key: a.Staff, Body: map[string]any{"name": "Plain", "categoryId": dogs}}).Want(t, 201)
			var got map[string]any
			r.Decode(t, &got)
			if diff := cmp.Diff(profile("0.00"), profileOf(got)); diff != "" {
				t.Errorf("new pet (-want +got):\n%s", diff)
			}
		})

		cases := []struct {
			name       string
			extra      string // members after name and categoryId, as JSON
			wantStatus int
			wantField  string         // for an error
			want       map[string]any // for a success: the §14 fields of the answer
		}{
			{"price as a number", `"price":12`, 400, "price", nil},
			{"price as a decimal number", `"price":12.5`, 400, "price", nil},
			{"price null", `"price":null`, 400, "price", nil},
			{"price with three decimals", `"price":"12.345"`, 422, "price", nil},
			{"negative price", `"price":"-1"`, 422, "price", nil},
			{"price of eight digits", `"price":"12345678"`, 422, "price", nil},
			{"price not a number", `"price":"abc"`, 422, "price", nil},
			{"empty price", `"price":""`, 422, "price", nil},
			{"price with a comma", `"price":"12,50"`, 422, "price", nil},
			{"price with a dot and no decimals", `"price":"12."`, 422, "price", nil},
			{"price in exponent form", `"price":"1e3"`, 422, "price", nil},
			{"price zero", `"price":"0"`, 201, "", profile("0.00")},
			{"price with one decimal", `"price":"129.5"`, 201, "", profile("129.50")},
			{"highest price", `"price":"9999999.99"`, 201, "", profile("9999999.99")},
			{"description of 2,001 characters", `"description":"` + long + `x"`, 422, "description", nil},
			{"description of 2,000 characters", `"description":"` + long + `"`, 201, "", profile("0.00", "description", long)},
			{"description with line breaks", `"description":"Calm.\nLoves walks.\r\nSheds."`, 201, "", profile("0.00", "description", "Calm.\nLoves walks.\r\nSheds.")},
			{"description trimmed", `"description":"  Calm.\n"`, 201, "", profile("0.00", "description", "Calm.")},
			{"description with a bell", `"description":"Calm.\u0007"`, 422, "description", nil},
			{"description with a tab at the end", `"description":"Calm.\t"`, 422, "description", nil},
			{"description with NUL", `"description":"Ca\u0000lm."`, 422, "description", nil},
			{"description as a number", `"description":7`, 400, "description", nil},
			{"empty breed", `"breed":""`, 422, "breed", nil},
			{"blank breed", `"breed":"   "`, 422, "breed", nil},
			{"breed of 101 characters", `"breed":"` + strings.Repeat("b", 101) + `"`, 422, "breed", nil},
			{"breed with a control character", `"breed":"La\u001bb"`, 422, "breed", nil},
			{"breed of 100 characters", `"breed":"` + strings.Repeat("b", 100) + `"`, 201, "", profile("0.00", "breed", strings.Repeat("b", 100))},
			{"breed as an array", `"breed":["Lab"]`, 400, "breed", nil},
			{"birthDate tomorrow", `"birthDate":"` + day(today.AddDate(0, 0, 1)) + `"`, 422, "birthDate", nil},
			{"birthDate today", `"birthDate":"` + day(today) + `"`, 201, "", profile("0.00", "birthDate", day(today))},
			{"birthDate not a day", `"birthDate":"2024-02-30"`, 422, "birthDate", nil},
			{"birthDate before 1900", `"birthDate":"1899-12-31"`, 422, "birthDate", nil},
			{"birthDate 1900-01-01", `"birthDate":"1900-01-01"`, 201, "", profile("0.00", "birthDate", "1900-01-01")},
			{"birthDate without zeros", `"birthDate":"2024-3-5"`, 422, "birthDate", nil},
			{"birthDate with a time", `"birthDate":"2024-03-05T00:00:00Z"`, 422, "birthDate", nil},
			{"birthDate as a number", `"birthDate":20240305`, 400, "birthDate", nil},
			{"all of them", `"price":"25","description":"Calm.","breed":"Labrador","birthDate":"2020-05-01"`, 201, "",
				profile("25.00", "description", "Calm.", "breed", "Labrador", "birthDate", "2020-05-01")},
			{"nulls on a new pet", `"description":null,"breed":null,"birthDate":null`, 201, "", profile("0.00")},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				body := `{"name":"Rex","categoryId":` + handlerstest.Itoa(dogs) + `,` + tc.extra + `}`
				r := a.Do(handlerstest.Req{Method: "POST", Path: "/api/pets", Key: a.Staff, Body: body})
				if tc.want == nil {
					code := map[int]string{400: "bad_request", 422: "validation_failed"}[tc.wantStatus]
					r.Want(t, tc.wantStatus, code)
					if p := r.Problem(t); len(p.Details) == 0 || p.Details[0].Field != tc.wantField {
						t.Errorf("details = %+v, want the first naming %q", p.Details, tc.wantField)
					}
					return
				}
				r.Want(t, tc.wantStatus)
				var got map[string]any
				r.Decode(t, &got)
				if diff := cmp.Diff(tc.want, profileOf(got)); diff != "" {
					t.Errorf("created pet (-want +got):\n%s", diff)
				}
				var read []map[string]any
				a.GetJSON(t, a.Customer, "/api/pets?ids="+handlerstest.Itoa(int64(got["id"].(float64))), &read)
				if len(read) != 1 {
					t.Fatalf("GET the new pet: %v", read)
				}
				if diff := cmp.Diff(tc.want, profileOf(read[0])); diff != "" {
					t.Errorf("pet read back (-want +got):\n%s", diff)
				}
			})
		}
	})
}

// TestPetProfileReplace: a PUT without the §14 fields keeps them, null
// clears description, breed and birthDate, price cannot be null, and a
// refused PUT changes nothing; on both databases.
func TestPetProfileReplace(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		dogs := a.Create(t, "/api/categories", map[string]any{"name": "Dogs"})
		rex := a.Create(t, "/api/pets", map[string]any{"name": "Rex", "categoryId": dogs,
			"price": "25", "description": "Calm.", "breed": "Labrador", "birthDate": "2020-05-01"})
		path := "/api/pets/" + handlerstest.Itoa(rex)
		put := func(extra map[string]any) *handlerstest.Response {
			body := map[string]any{"name": "Rex", "categoryId": dogs}
			for k, v := range extra {
				body[k] = v
			}
			return a.Do(handlerstest.Req{Method: "PUT", Path: path, Key: a.Staff, Body: body})
		}
		want := func(t *testing.T, r *handlerstest.Response, w map[string]any) {
			t.Helper()
			var got map[string]any
			r.Decode(t, &got)
			if diff := cmp.Diff(w, profileOf(got)); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
			var read []map[string]any
			a.GetJSON(t, a.Customer, "/api/pets?ids="+handlerstest.Itoa(rex), &read)
			if len(read) != 1 {
				t.Fatalf("GET rex: %v", read)
			}
			if diff := cmp.Diff(w, profileOf(read[0])); diff != "" {
				t.Errorf("read back (-want +got):\n%s", diff)
			}
		}
		full := profile("25.00", "description", "Calm.", "breed", "Labrador", "birthDate", "2020-05-01")

		t.Run("PUT without them keeps them", func(t *testing.T) {
			want(t, put(nil).Want(t, 200), full)
		})
		t.Run("refused PUTs change nothing", func(t *testing.T) {
			put(map[string]any{"price": nil, "description": "Other."}).Want(t, 400, "bad_request")
			put(map[string]any{"price": "1.234", "breed": "Poodle"}).Want(t, 422, "validation_failed")
			put(map[string]any{"breed": "", "description": nil}).Want(t, 422, "validation_failed")
			put(map[string]any{"birthDate": a.Clock.Now().UTC().AddDate(0, 0, 1).Format(time.DateOnly), "breed": nil}).Want(t, 422, "validation_failed")
			want(t, put(nil).Want(t, 200), full)
		})
		t.Run("PUT changes the price alone", func(t *testing.T) {
			full["price"] = "30.00"
			want(t, put(map[string]any{"price": "30"}).Want(t, 200), full)
		})
		t.Run("null clears description, breed and birthDate", func(t *testing.T) {
			want(t, put(map[string]any{"description": nil, "breed": nil, "birthDate": nil}).Want(t, 200), profile("30.00"))
		})
		t.Run("PUT sets them again", func(t *testing.T) {
			want(t, put(map[string]any{"description": "Old.", "breed": "Mix"}).Want(t, 200), profile("30.00", "description", "Old.", "breed", "Mix"))
		})
		t.Run("an empty description clears it", func(t *testing.T) {
			want(t, put(map[string]any{"description": ""}).Want(t, 200), profile("30.00", "breed", "Mix"))
		})
	})
}
