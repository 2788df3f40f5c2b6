package openapi

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"petstore/db/dbtest"
)

// operation is one row of SPEC §4 (paths relative to /api).
type operation struct {
	method, path string
	anonymous    bool // open to callers without a key
	body         bool // has a JSON request body
	addressed    bool // addresses one resource by path id
	conflict     bool // can answer 409 (SPEC §2 table, Idempotency-Key on POST)
}

// specOperations is SPEC §4, row by row.
var specOperations = []operation{
	{method: "GET", path: "/openapi.json", anonymous: true},
	{method: "GET", path: "/docs", anonymous: true},
	{method: "GET", path: "/rate-limit"},
	{method: "GET", path: "/pets"},
	{method: "POST", path: "/pets", body: true, conflict: true},
	{method: "GET", path: "/pets/{petId}", addressed: true},
	{method: "PUT", path: "/pets/{petId}", body: true, addressed: true, conflict: true},
	{method: "DELETE", path: "/pets/{petId}", addressed: true, conflict: true},
	{method: "GET", path: "/categories"},
	{method: "POST", path: "/categories", body: true, conflict: true},
	{method: "GET", path: "/categories/{categoryId}", addressed: true},
	{method: "PUT", path: "/categories/{categoryId}", body: true, addressed: true, conflict: true},
	{method: "DELETE", path: "/categories/{categoryId}", addressed: true, conflict: true},
	{method: "GET", path: "/store/orders"},
	{method: "POST", path: "/store/orders", body: true, conflict: true},
	{method: "GET", path: "/store/orders/{orderId}", addressed: true},
	{method: "PATCH", path: "/store/orders/{orderId}", body: true, addressed: true, conflict: true},
	{method: "DELETE", path: "/store/orders/{orderId}", addressed: true, conflict: true},
	{method: "GET", path: "/store/inventory"},
	{method: "GET", path: "/store/inventory/{petId}", addressed: true},
	{method: "PUT", path: "/store/inventory/{petId}", body: true, addressed: true},
	{method: "GET", path: "/keys"},
	{method: "POST", path: "/keys", body: true, conflict: true},
	{method: "PATCH", path: "/keys/{keyId}", body: true, addressed: true},
	{method: "DELETE", path: "/keys/{keyId}", addressed: true},
	{method: "DELETE", path: "/keys/{keyId}/ban", addressed: true},
	{method: "GET", path: "/keys/{keyId}/usage", addressed: true},
	{method: "GET", path: "/events"},
}

// commonHeaders are on every response of the API (SPEC §2, §6).
var commonHeaders = []string{
	"X-Request-Id", "X-API-Version",
	"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset",
	"X-RateLimit-Limit-Minute", "X-RateLimit-Remaining-Minute",
	"X-RateLimit-Limit-Day", "X-RateLimit-Remaining-Day",
	"RateLimit-Policy", "RateLimit",
}

func mustLoad(t *testing.T) *openapi3.T {
	t.Helper()
	doc, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func mustOperation(t *testing.T, doc *openapi3.T, method, path string) *openapi3.Operation {
	t.Helper()
	item := doc.Paths.Value(path)
	if item == nil {
		t.Fatalf("path %s missing", path)
	}
	op := item.GetOperation(method)
	if op == nil {
		t.Fatalf("operation %s %s missing", method, path)
	}
	return op
}

func TestLoad(t *testing.T) {
	doc := mustLoad(t)
	if got, want := doc.OpenAPI, "3.0.3"; got != want {
		t.Errorf("openapi = %q, want %q", got, want)
	}
	if got, want := doc.Info.Version, "1.0.0"; got != want {
		t.Errorf("info.version = %q, want %q", got, want)
	}
	if len(doc.Servers) != 1 || doc.Servers[0].URL != BasePath {
		t.Errorf("servers = %v, want one with url %s", doc.Servers, BasePath)
	}
	if got := len(doc.Security); got != 2 {
		t.Errorf("global security has %d alternatives, want 2 (ApiKeyAuth, BearerAuth)", got)
	}
	key := doc.Components.SecuritySchemes["ApiKeyAuth"].Value
	if key.Type != "apiKey" || key.In != "header" || key.Name != "X-API-Key" {
		t.Errorf("ApiKeyAuth = %+v", key)
	}
	bearer := doc.Components.SecuritySchemes["BearerAuth"].Value
	if bearer.Type != "http" || bearer.Scheme != "bearer" {
		t.Errorf("BearerAuth = %+v", bearer)
	}
}

func TestDocumentJSON(t *testing.T) {
	data, err := Document()
	if err != nil {
		t.Fatal(err)
	}
	again, _ := Document()
	if &data[0] != &again[0] {
		t.Error("Document is converted again on every call; want it cached")
	}
	for _, s := range []string{`\u003c`, `\u0026`, `1e+06`} {
		if bytes.Contains(data, []byte(s)) {
			t.Errorf("served JSON contains %s", s)
		}
	}
	if !json.Valid(data) || !bytes.HasPrefix(data, []byte("{")) {
		t.Fatal("served document is not a JSON object")
	}
	doc, err := openapi3.NewLoader().LoadFromData(data)
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("served JSON does not validate: %v", err)
	}
	if got, want := doc.Paths.Len(), mustLoad(t).Paths.Len(); got != want {
		t.Errorf("JSON has %d paths, YAML %d", got, want)
	}
}

func TestOperationsOfSpec(t *testing.T) {
	doc := mustLoad(t)
	ids := map[string]bool{}
	want := map[string]bool{}
	for _, o := range specOperations {
		want[o.method+" "+o.path] = true
		op := mustOperation(t, doc, o.method, o.path)
		if op.OperationID == "" {
			t.Errorf("%s %s: no operationId", o.method, o.path)
		}
		if ids[op.OperationID] {
			t.Errorf("%s %s: operationId %s used twice", o.method, o.path, op.OperationID)
		}
		ids[op.OperationID] = true
		if o.anonymous {
			if op.Security == nil || len(*op.Security) != 0 {
				t.Errorf("%s %s: want security: [] (anonymous)", o.method, o.path)
			}
		} else if op.Security != nil {
			t.Errorf("%s %s: want the global security", o.method, o.path)
		}
		if o.body {
			rb := op.RequestBody
			if rb == nil || !rb.Value.Required || rb.Value.Content.Get("application/json") == nil {
				t.Errorf("%s %s: want a required application/json request body", o.method, o.path)
			} else if s := rb.Value.Content.Get("application/json").Schema.Value; s.AdditionalProperties.Has == nil || *s.AdditionalProperties.Has {
				t.Errorf("%s %s: request body schema must have additionalProperties: false", o.method, o.path)
			}
		}
	}
	// Nothing beyond SPEC §4.
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			if !want[method+" "+path] {
				t.Errorf("%s %s is in the document but not in SPEC §4", method, path)
			}
		}
	}
}

func TestResponseStatuses(t *testing.T) {
	doc := mustLoad(t)
	for _, o := range specOperations {
		op := mustOperation(t, doc, o.method, o.path)
		want := []int{500, 503, 403, 429}
		if !o.anonymous {
			want = append(want, 400, 401)
		}
		if o.path == "/rate-limit" { // never limited, 200 while banned (SPEC §13)
			want = []int{400, 401, 500, 503}
		}
		if o.addressed {
			want = append(want, 404)
		}
		if o.body {
			want = append(want, 413, 415, 422)
		}
		if o.conflict {
			want = append(want, 409)
		}
		for _, status := range want {
			if op.Responses.Status(status) == nil {
				t.Errorf("%s %s: no %d response", o.method, o.path, status)
			}
		}
		success := 0
		for code := range op.Responses.Map() {
			if strings.HasPrefix(code, "2") {
				success++
			}
		}
		if success != 1 {
			t.Errorf("%s %s: %d success responses, want 1", o.method, o.path, success)
		}
		if o.path == "/rate-limit" {
			for _, status := range []int{403, 429} {
				if op.Responses.Status(status) != nil {
					t.Errorf("GET /rate-limit documents %d; SPEC §13 says it answers 200 while banned and is never limited", status)
				}
			}
		}
	}
}

func TestEveryResponseHeadersAndErrors(t *testing.T) {
	doc := mustLoad(t)
	for _, o := range specOperations {
		op := mustOperation(t, doc, o.method, o.path)
		for code, ref := range op.Responses.Map() {
			resp := ref.Value
			for _, name := range commonHeaders {
				h := resp.Headers[name]
				if h == nil {
					t.Errorf("%s %s %s: header %s missing", o.method, o.path, code, name)
					continue
				}
				if !strings.HasPrefix(h.Ref, "#/components/headers/") {
					t.Errorf("%s %s %s: header %s is not a $ref to components.headers", o.method, o.path, code, name)
				}
			}
			status, _ := strconv.Atoi(code)
			if status < 400 {
				continue
			}
			mt := resp.Content.Get("application/json")
			if mt == nil || mt.Schema == nil || mt.Schema.Ref != "#/components/schemas/Error" {
				t.Errorf("%s %s %s: want application/json with $ref Error", o.method, o.path, code)
			}
			switch status {
			case 429, 503, 403:
				if resp.Headers["Retry-After"] == nil {
					t.Errorf("%s %s %s: Retry-After missing", o.method, o.path, code)
				}
			}
		}
		if r := op.Responses.Status(201); r != nil && r.Value.Headers["Location"] == nil {
			t.Errorf("%s %s 201: Location missing", o.method, o.path)
		}
	}
	// Only X-Request-Id and X-API-Version are required: the others are conditional.
	for name, h := range doc.Components.Headers {
		want := name == "X-Request-Id" || name == "X-API-Version"
		if h.Value.Required != want {
			t.Errorf("components.headers.%s required = %v, want %v", name, h.Value.Required, want)
		}
	}
	if r := doc.Components.Responses["MethodNotAllowed"]; r == nil || r.Value.Headers["Allow"] == nil {
		t.Error("components.responses.MethodNotAllowed with Allow missing")
	}
	errSchema := doc.Components.Schemas["Error"].Value
	sort.Strings(errSchema.Required)
	if got, want := strings.Join(errSchema.Required, ","), "code,message,status"; got != want {
		t.Errorf("Error.required = %s, want %s", got, want)
	}
	for _, name := range []string{"details", "requestId"} {
		if errSchema.Properties[name] == nil {
			t.Errorf("Error.%s missing", name)
		}
	}
	if got, want := len(errSchema.Properties["code"].Value.Enum), len(ErrorStatus); got != want {
		t.Errorf("Error.code has %d values, ErrorStatus %d", got, want)
	}
}

func TestMarkers(t *testing.T) {
	doc := mustLoad(t)
	dep := mustOperation(t, doc, "GET", "/pets/{petId}")
	if !dep.Deprecated {
		t.Error("GET /pets/{petId} is not deprecated")
	}
	// SPEC §7's default sunset, as the document states it: data, which
	// nothing here compares with the present.
	if got, want := dep.Extensions["x-sunset"], "2027-06-30T00:00:00Z"; got != want {
		t.Errorf("x-sunset = %v, want %s", got, want)
	}
	if got, want := DefaultSunset.Format(time.RFC3339), dep.Extensions["x-sunset"]; got != want {
		t.Errorf("DefaultSunset = %s, but the document says %v", got, want)
	}
	for _, code := range []int{200, 404, 410} {
		r := dep.Responses.Status(code)
		if r == nil {
			t.Fatalf("GET /pets/{petId}: no %d", code)
		}
		for _, h := range []string{"Deprecation", "Sunset", "Link"} {
			if r.Value.Headers[h] == nil {
				t.Errorf("GET /pets/{petId} %d: header %s missing", code, h)
			}
		}
	}
	for _, c := range []struct{ method, path, want string }{
		{"PUT", "/store/inventory/{petId}", "beta"},
		{"GET", "/events", "experimental"},
	} {
		op := mustOperation(t, doc, c.method, c.path)
		if got := op.Extensions["x-stability"]; got != c.want {
			t.Errorf("%s %s x-stability = %v, want %s", c.method, c.path, got, c.want)
		}
		if op.Responses.Status(200).Value.Headers["X-API-Stability"] == nil {
			t.Errorf("%s %s 200: X-API-Stability missing", c.method, c.path)
		}
	}
	events := mustOperation(t, doc, "GET", "/events").Responses.Status(200).Value
	if events.Content.Get("text/event-stream") == nil {
		t.Error("GET /events 200 is not text/event-stream")
	}
}

func TestSchemas(t *testing.T) {
	doc := mustLoad(t)
	for name, want := range map[string]string{
		"Pet":             "categoryId,id,name,status",
		"NewPet":          "categoryId,name",
		"Category":        "id,name",
		"NewCategory":     "name",
		"Order":           "complete,id,petId,quantity",
		"NewOrder":        "petId,quantity",
		"InventoryItem":   "petId,quantity,status",
		"InventoryUpdate": "quantity",
		"RateLimitStatus": "banned,day,minute,plan",
		"ApiKey":          "createdAt,id,name,perDay,perMinute,plan,prefix,role",
		"NewApiKey":       "name,plan,role",
		"KeyUsage":        "banned,bansLast24h,day,keyId,limited429Today,minute,perMinute,plan",
	} {
		ref := doc.Components.Schemas[name]
		if ref == nil {
			t.Errorf("schema %s missing", name)
			continue
		}
		req := append([]string(nil), ref.Value.Required...)
		sort.Strings(req)
		if got := strings.Join(req, ","); got != want {
			t.Errorf("%s.required = %s, want %s", name, got, want)
		}
	}
	if s := doc.Components.Schemas["Pets"].Value; !s.Type.Is("array") {
		t.Error("Pets is not an array")
	}
	if got := doc.Components.Schemas["Order"].Value.Properties["shipDate"].Value.Format; got != "date-time" {
		t.Errorf("Order.shipDate format = %q", got)
	}
	inv := doc.Components.Schemas["InventoryUpdate"].Value.Properties["quantity"].Value
	if *inv.Min != 0 || *inv.Max != 1000000 {
		t.Errorf("InventoryUpdate.quantity range = %v..%v", *inv.Min, *inv.Max)
	}
}

func TestDocumentWithSunset(t *testing.T) {
	// Noon in Central Europe on a day to come is 11:00 UTC.
	day := dbtest.NextDay(dbtest.Present(t)).AddDate(1, 0, 0)
	sunset := time.Date(day.Year(), day.Month(), day.Day(), 12, 0, 0, 0, time.FixedZone("CET", 3600))
	data, err := DocumentWithSunset(sunset)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	var get struct {
		Sunset string `json:"x-sunset"`
	}
	if err := json.Unmarshal(doc.Paths["/pets/{petId}"]["get"], &get); err != nil {
		t.Fatal(err)
	}
	if got, want := get.Sunset, day.Add(11*time.Hour).Format(time.RFC3339); got != want {
		t.Errorf("x-sunset = %v, want %s", got, want)
	}
	plain, _ := Document()
	def, err := DocumentWithSunset(DefaultSunset)
	if err != nil || !bytes.Equal(def, plain) {
		t.Errorf("DocumentWithSunset(DefaultSunset) differs from Document() (err %v)", err)
	}
	if !bytes.Contains(plain, []byte(`"x-sunset":"2027-06-30T00:00:00Z"`)) {
		t.Error("Document() lost the default x-sunset")
	}
}

// apiHeader is the header set every /api response carries.
func apiHeader(contentType string) http.Header {
	h := http.Header{}
	if contentType != "" {
		h.Set("Content-Type", contentType)
	}
	h.Set("X-Request-Id", "req-1")
	h.Set("X-API-Version", "1.0.0")
	h.Set("X-RateLimit-Limit", "60")
	h.Set("X-RateLimit-Remaining", "59")
	h.Set("X-RateLimit-Reset", "1795000020")
	h.Set("X-RateLimit-Limit-Minute", "60")
	h.Set("X-RateLimit-Remaining-Minute", "59")
	h.Set("X-RateLimit-Limit-Day", "1000")
	h.Set("X-RateLimit-Remaining-Day", "999")
	h.Set("RateLimit-Policy", `"minute";q=60;w=60, "day";q=1000;w=86400`)
	h.Set("RateLimit", `"minute";r=59;t=20`)
	return h
}

func with(h http.Header, kv ...string) http.Header {
	h = h.Clone()
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			h.Del(kv[i])
		} else {
			h.Set(kv[i], kv[i+1])
		}
	}
	return h
}

func TestValidatorCheck(t *testing.T) {
	v, err := NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	const jsonCT = "application/json"
	jsonH := apiHeader("application/json; charset=utf-8")
	pet := `{"id":1,"name":"Rex","categoryId":2,"status":"available"}`
	// Header and body dates as the app writes them, around the present.
	now := dbtest.Present(t).Truncate(time.Second)
	deprecation := "@" + strconv.FormatInt(now.AddDate(0, -6, 0).Unix(), 10)
	sunset := now.AddDate(1, 0, 0).Format(http.TimeFormat)
	shipDate := now.AddDate(0, 0, 7).Format(time.RFC3339)
	errBody := func(code string, status int) string {
		return `{"code":"` + code + `","message":"m","status":` + strconv.Itoa(status) + `}`
	}
	tests := []struct {
		name         string
		method, path string
		reqCT        string
		reqBody      string
		status       int
		header       http.Header
		respBody     string
		wantErr      bool
	}{
		{name: "OKPet", method: "GET", path: "/api/pets/1", status: 200, header: with(jsonH, "Deprecation", deprecation, "Sunset", sunset), respBody: pet},
		{name: "ErrPetWithoutName", method: "GET", path: "/api/pets/1", status: 200, header: jsonH, respBody: `{"id":1,"categoryId":2,"status":"available"}`, wantErr: true},
		{name: "ErrPetBadStatus", method: "GET", path: "/api/pets/1", status: 200, header: jsonH, respBody: `{"id":1,"name":"Rex","categoryId":2,"status":"lost"}`, wantErr: true},
		{name: "ErrUndocumentedStatus", method: "GET", path: "/api/pets/1", status: 418, header: jsonH, respBody: errBody("bad_request", 418), wantErr: true},
		{name: "ErrMissingRequestId", method: "GET", path: "/api/pets/1", status: 200, header: with(jsonH, "X-Request-Id", ""), respBody: pet, wantErr: true},
		{name: "ErrWrongAPIVersion", method: "GET", path: "/api/pets/1", status: 200, header: with(jsonH, "X-API-Version", "2.0.0"), respBody: pet, wantErr: true},
		{name: "ErrBadRateLimitHeader", method: "GET", path: "/api/pets/1", status: 200, header: with(jsonH, "X-RateLimit-Remaining", "lots"), respBody: pet, wantErr: true},
		{name: "ErrNotJSON", method: "GET", path: "/api/pets/1", status: 200, header: apiHeader("text/plain"), respBody: pet, wantErr: true},
		{name: "OKHead", method: "HEAD", path: "/api/pets/1", status: 200, header: jsonH},
		{name: "OKList", method: "GET", path: "/api/pets?status=available&status=sold&ids=1,2&limit=2&q=re", status: 200, header: with(jsonH, "Link", `</api/pets?cursor=abc&limit=2>; rel="next"`), respBody: `[` + pet + `]`},
		{name: "OKBadLimit400", method: "GET", path: "/api/pets?limit=0", status: 400, header: jsonH, respBody: errBody("bad_request", 400)},
		{name: "ErrBadLimitAccepted", method: "GET", path: "/api/pets?limit=0", status: 200, header: jsonH, respBody: `[]`, wantErr: true},
		{name: "ErrBadPathIdAccepted", method: "GET", path: "/api/pets/0", status: 200, header: jsonH, respBody: pet, wantErr: true},
		{name: "OKBadPathId400", method: "GET", path: "/api/pets/abc", status: 400, header: jsonH, respBody: errBody("bad_request", 400)},
		{name: "OKCreateOrder", method: "POST", path: "/api/store/orders", reqCT: jsonCT, reqBody: `{"petId":1,"quantity":2}`, status: 201, header: with(jsonH, "Location", "/api/store/orders/5"), respBody: `{"id":5,"petId":1,"quantity":2,"complete":false}`},
		{name: "OKReplayedOrder", method: "POST", path: "/api/store/orders", reqCT: jsonCT, reqBody: `{"petId":1,"quantity":2}`, status: 201, header: with(jsonH, "Location", "/api/store/orders/5", "Idempotent-Replayed", "true"), respBody: `{"id":5,"petId":1,"quantity":2,"complete":false,"shipDate":"` + shipDate + `"}`},
		{name: "OKInvalidOrder422", method: "POST", path: "/api/store/orders", reqCT: jsonCT, reqBody: `{"petId":1,"quantity":0}`, status: 422, header: jsonH, respBody: `{"code":"validation_failed","message":"m","status":422,"details":[{"field":"quantity","message":"must be 1 to 1000"}],"requestId":"req-1"}`},
		{name: "ErrInvalidOrderAccepted", method: "POST", path: "/api/store/orders", reqCT: jsonCT, reqBody: `{"petId":1,"quantity":0}`, status: 201, header: jsonH, respBody: `{"id":5,"petId":1,"quantity":0,"complete":false}`, wantErr: true},
		{name: "ErrUnknownFieldAccepted", method: "POST", path: "/api/pets", reqCT: jsonCT, reqBody: `{"name":"Rex","categoryId":1,"colour":"brown"}`, status: 201, header: jsonH, respBody: pet, wantErr: true},
		{name: "OKUnknownField400", method: "POST", path: "/api/pets", reqCT: jsonCT, reqBody: `{"name":"Rex","categoryId":1,"colour":"brown"}`, status: 400, header: jsonH, respBody: errBody("bad_request", 400)},
		{name: "OKNotJSON415", method: "POST", path: "/api/pets", reqCT: "text/plain", reqBody: `name=Rex`, status: 415, header: jsonH, respBody: errBody("unsupported_media_type", 415)},
		{name: "ErrErrorStatusMismatch", method: "GET", path: "/api/pets/1", status: 404, header: jsonH, respBody: errBody("not_found", 400), wantErr: true},
		{name: "ErrErrorCodeMismatch", method: "DELETE", path: "/api/pets/1", status: 409, header: jsonH, respBody: errBody("not_found", 409), wantErr: true},
		{name: "ErrUnknownErrorCode", method: "DELETE", path: "/api/pets/1", status: 409, header: jsonH, respBody: errBody("conflict", 409), wantErr: true},
		{name: "ErrRequestIdMismatch", method: "GET", path: "/api/pets/1", status: 404, header: jsonH, respBody: `{"code":"not_found","message":"m","status":404,"requestId":"other"}`, wantErr: true},
		{name: "Ok429", method: "GET", path: "/api/pets", status: 429, header: with(jsonH, "Retry-After", "18"), respBody: errBody("rate_limited", 429)},
		{name: "Err429WithoutRetryAfter", method: "GET", path: "/api/pets", status: 429, header: jsonH, respBody: errBody("rate_limited", 429), wantErr: true},
		{name: "ErrBannedWithoutRetryAfter", method: "GET", path: "/api/pets", status: 403, header: jsonH, respBody: errBody("api_key_banned", 403), wantErr: true},
		{name: "OKForbidden", method: "POST", path: "/api/pets", reqCT: jsonCT, reqBody: `{"name":"Rex","categoryId":1}`, status: 403, header: jsonH, respBody: errBody("forbidden", 403)},
		{name: "ErrRateLimitIs429Only", method: "GET", path: "/api/rate-limit", status: 429, header: with(jsonH, "Retry-After", "3"), respBody: errBody("rate_limited", 429), wantErr: true},
		{name: "OKDelete204", method: "DELETE", path: "/api/pets/1", status: 204, header: apiHeader("")},
		{name: "Err204WithBody", method: "DELETE", path: "/api/pets/1", status: 204, header: apiHeader(""), respBody: `{}`, wantErr: true},
		{name: "OKEvents", method: "GET", path: "/api/events", status: 200, header: with(apiHeader("text/event-stream"), "X-API-Stability", "experimental"), respBody: ": heartbeat\n\nid: 1\nevent: pet.deleted\ndata: {\"id\":1}\n\n"},
		{name: "OKDocsPage", method: "GET", path: "/api/docs", status: 200, header: apiHeader("text/html; charset=utf-8"), respBody: "<!doctype html><title>API</title>"},
		{name: "OKOpenAPI", method: "GET", path: "/api/openapi.json", status: 200, header: jsonH, respBody: `{"openapi":"3.0.3"}`},
		{name: "OKUnknownPath404", method: "GET", path: "/api/nope", status: 404, header: jsonH, respBody: errBody("not_found", 404)},
		{name: "ErrUnknownPath200", method: "GET", path: "/api/nope", status: 200, header: jsonH, respBody: `{}`, wantErr: true},
		{name: "ErrUnknownPathNotError", method: "GET", path: "/api/nope", status: 404, header: jsonH, respBody: `{"error":"nope"}`, wantErr: true},
		{name: "OKWrongMethod405", method: "PATCH", path: "/api/pets", status: 405, header: with(jsonH, "Allow", "GET, POST"), respBody: errBody("method_not_allowed", 405)},
		{name: "Err405WithoutAllow", method: "PATCH", path: "/api/pets", status: 405, header: jsonH, respBody: errBody("method_not_allowed", 405), wantErr: true},
		{name: "ErrNotUnderAPI", method: "GET", path: "/healthz", status: 200, header: jsonH, respBody: `{}`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(tt.method, tt.path, strings.NewReader(tt.reqBody))
			if tt.reqCT != "" {
				req.Header.Set("Content-Type", tt.reqCT)
			}
			req.Header.Set("X-API-Key", "psk_test")
			err := v.Check(req, []byte(tt.reqBody), tt.status, tt.header, []byte(tt.respBody))
			if err != nil {
				t.Logf("Check: %v", err)
			}
			if got := err != nil; got != tt.wantErr {
				t.Errorf("Check() error = %v, wantErr %v", err, tt.wantErr)
			}
		})
	}
	unchecked := v.Unchecked()
	for _, id := range []string{"getPetById", "listPets", "placeOrder", "streamEvents"} {
		for _, u := range unchecked {
			if u == id {
				t.Errorf("Unchecked() lists %s, which was checked with a 2xx", id)
			}
		}
	}
	if len(unchecked) == 0 {
		t.Error("Unchecked() is empty; listCategories was never checked")
	}
}
