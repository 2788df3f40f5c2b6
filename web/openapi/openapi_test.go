package openapi

import (
	"bytes"
	"context"
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// operation is one row of SPEC §4 (paths relative to /api).
type operation struct {
	method, path string
	anonymous    bool // open to callers without a key
	body         bool // has a JSON request body
	image        bool // has an image as its request body
	addressed    bool // addresses one resource by path id
	conflict     bool // can answer 409 (SPEC §2 table, Idempotency-Key on POST)
}

// specOperations is SPEC §4, row by row, and the additive operations of
// later sections.
var specOperations = []operation{
	{method: "GET", path: "/openapi.json", anonymous: true},
	{method: "GET", path: "/docs", anonymous: true},
	{method: "GET", path: "/rate-limit"},
	{method: "GET", path: "/pets"},
	{method: "POST", path: "/pets", body: true, conflict: true},
	{method: "GET", path: "/pets/{petId}", addressed: true},
	{method: "PUT", path: "/pets/{petId}", body: true, addressed: true, conflict: true},
	{method: "DELETE", path: "/pets/{petId}", addressed: true, conflict: true},
	{method: "POST", path: "/pets/{petId}/photos", image: true, addressed: true, conflict: true},
	{method: "DELETE", path: "/pets/{petId}/photos/{photoId}", addressed: true},
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
	{method: "GET", path: "/keys/{keyId}", addressed: true}, // SPEC §17
	{method: "PATCH", path: "/keys/{keyId}", body: true, addressed: true},
	{method: "DELETE", path: "/keys/{keyId}", addressed: true},
	{method: "DELETE", path: "/keys/{keyId}/ban", addressed: true},
	{method: "GET", path: "/keys/{keyId}/usage", addressed: true},
	{method: "GET", path: "/events"},
	// SPEC §15.
	{method: "GET", path: "/webhooks"},
	{method: "POST", path: "/webhooks", body: true, conflict: true},
	{method: "GET", path: "/webhooks/{webhookId}", addressed: true},
	{method: "PATCH", path: "/webhooks/{webhookId}", body: true, addressed: true},
	{method: "DELETE", path: "/webhooks/{webhookId}", addressed: true},
	{method: "POST", path: "/webhooks/{webhookId}/rotate-secret", addressed: true, conflict: true},
	{method: "POST", path: "/webhooks/{webhookId}/test", addressed: true, conflict: true},
	{method: "GET", path: "/webhooks/{webhookId}/deliveries", addressed: true},
	{method: "POST", path: "/webhooks/{webhookId}/deliveries/{deliveryId}/retry", addressed: true, conflict: true},
	// SPEC §16.
	{method: "GET", path: "/audit"},
	{method: "GET", path: "/store/orders/export"},
	// Catalog imports (SPEC §18).
	{method: "POST", path: "/pets/import", conflict: true},
	{method: "GET", path: "/imports/{importId}"},
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
		if o.image {
			rb := op.RequestBody
			if rb == nil || !rb.Value.Required || len(rb.Value.Content) != 4 {
				t.Fatalf("%s %s: want a required request body of the four image types", o.method, o.path)
			}
			for _, mt := range []string{"image/jpeg", "image/png", "image/gif", "image/webp"} {
				c := rb.Value.Content.Get(mt)
				if c == nil || c.Schema == nil || !c.Schema.Value.Type.Is("string") || c.Schema.Value.Format != "binary" {
					t.Errorf("%s %s: want %s as a binary string", o.method, o.path, mt)
				}
			}
		}
	}
	// Nothing beyond SPEC §4.
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			if !want[method+" "+path] {
				t.Errorf("%s %s is in the document but not in the SPEC", method, path)
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
		if o.addressed {
			want = append(want, 404)
		}
		if o.body || o.image {
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
