package openapi

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"petstore/db/dbtest"
)

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
	pet := `{"id":1,"name":"Rex","categoryId":2,"status":"available","price":"0.00","currency":"EUR","photos":[]}`
	profile := `{"id":1,"name":"Rex","categoryId":2,"status":"available","price":"129.50","currency":"EUR",` +
		`"description":"Calm.\nLoves walks.","breed":"Golden Retriever","birthDate":"2024-03-15",` +
		`"photos":[{"id":3,"url":"/media/photos/3/large.jpg","thumbUrl":"/media/photos/3/thumb.jpg","width":1600,"height":1200}]}`
	order := `{"id":5,"petId":1,"quantity":2,"complete":false,"unitPrice":"10.00","total":"20.00","currency":"EUR"}`
	newPet := func(extra string) string { return `{"name":"Rex","categoryId":1` + extra + `}` }
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
		{name: "OKPetWithProfile", method: "GET", path: "/api/pets/1", status: 200, header: with(jsonH, "Deprecation", deprecation, "Sunset", sunset), respBody: profile},
		{name: "ErrPetPriceNumber", method: "GET", path: "/api/pets/1", status: 200, header: jsonH, respBody: strings.Replace(pet, `"0.00"`, `0`, 1), wantErr: true},
		{name: "ErrPetPriceOneDecimal", method: "GET", path: "/api/pets/1", status: 200, header: jsonH, respBody: strings.Replace(pet, `"0.00"`, `"0.0"`, 1), wantErr: true},
		{name: "ErrPetWithoutPhotos", method: "GET", path: "/api/pets/1", status: 200, header: jsonH, respBody: strings.Replace(pet, `,"photos":[]`, ``, 1), wantErr: true},
		{name: "ErrPetWithoutCurrency", method: "GET", path: "/api/pets/1", status: 200, header: jsonH, respBody: strings.Replace(pet, `,"currency":"EUR"`, ``, 1), wantErr: true},
		{name: "OKCreatePetWithProfile", method: "POST", path: "/api/pets", reqCT: jsonCT, reqBody: newPet(`,"price":"129.5","description":"Calm.\r\nKind.","breed":"Lab","birthDate":"2024-03-15"`), status: 201, header: with(jsonH, "Location", "/api/pets/1"), respBody: pet},
		{name: "OKNullsClear", method: "PUT", path: "/api/pets/1", reqCT: jsonCT, reqBody: newPet(`,"description":null,"breed":null,"birthDate":null`), status: 200, header: jsonH, respBody: pet},
		{name: "ErrPriceNumberAccepted", method: "POST", path: "/api/pets", reqCT: jsonCT, reqBody: newPet(`,"price":12`), status: 201, header: with(jsonH, "Location", "/api/pets/1"), respBody: pet, wantErr: true},
		{name: "ErrPriceNullAccepted", method: "PUT", path: "/api/pets/1", reqCT: jsonCT, reqBody: newPet(`,"price":null`), status: 200, header: jsonH, respBody: pet, wantErr: true},
		{name: "ErrPriceThreeDecimalsAccepted", method: "POST", path: "/api/pets", reqCT: jsonCT, reqBody: newPet(`,"price":"12.345"`), status: 201, header: with(jsonH, "Location", "/api/pets/1"), respBody: pet, wantErr: true},
		{name: "ErrBellInDescriptionAccepted", method: "POST", path: "/api/pets", reqCT: jsonCT, reqBody: newPet(`,"description":"a\u0007b"`), status: 201, header: with(jsonH, "Location", "/api/pets/1"), respBody: pet, wantErr: true},
		{name: "ErrEmptyBreedAccepted", method: "POST", path: "/api/pets", reqCT: jsonCT, reqBody: newPet(`,"breed":""`), status: 201, header: with(jsonH, "Location", "/api/pets/1"), respBody: pet, wantErr: true},
		{name: "ErrBadBirthDateAccepted", method: "POST", path: "/api/pets", reqCT: jsonCT, reqBody: newPet(`,"birthDate":"15.03.2024"`), status: 201, header: with(jsonH, "Location", "/api/pets/1"), respBody: pet, wantErr: true},
		{name: "OKPriceNumber400", method: "POST", path: "/api/pets", reqCT: jsonCT, reqBody: newPet(`,"price":12`), status: 400, header: jsonH, respBody: errBody("bad_request", 400)},
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
		{name: "OKCreateOrder", method: "POST", path: "/api/store/orders", reqCT: jsonCT, reqBody: `{"petId":1,"quantity":2}`, status: 201, header: with(jsonH, "Location", "/api/store/orders/5"), respBody: order},
		{name: "OKStorefrontOrder", method: "GET", path: "/api/store/orders/5", status: 200, header: jsonH, respBody: strings.Replace(order, `}`, `,"customer":{"name":"Ada","email":"ada@example.com","phone":"+44 20 7946 0000"}}`, 1)},
		{name: "ErrOrderWithoutTotal", method: "GET", path: "/api/store/orders/5", status: 200, header: jsonH, respBody: strings.Replace(order, `,"total":"20.00"`, ``, 1), wantErr: true},
		{name: "ErrCustomerWithoutEmail", method: "GET", path: "/api/store/orders/5", status: 200, header: jsonH, respBody: strings.Replace(order, `}`, `,"customer":{"name":"Ada"}}`, 1), wantErr: true},
		{name: "OKReplayedOrder", method: "POST", path: "/api/store/orders", reqCT: jsonCT, reqBody: `{"petId":1,"quantity":2}`, status: 201, header: with(jsonH, "Location", "/api/store/orders/5", "Idempotent-Replayed", "true"), respBody: strings.Replace(order, `}`, `,"shipDate":"`+shipDate+`"}`, 1)},
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
		{name: "OKRateLimitWithoutKey429", method: "GET", path: "/api/rate-limit", status: 429, header: with(jsonH, "Retry-After", "3"), respBody: errBody("rate_limited", 429)},
		{name: "ErrRateLimit429WithoutRetryAfter", method: "GET", path: "/api/rate-limit", status: 429, header: jsonH, respBody: errBody("rate_limited", 429), wantErr: true},
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

// TestValidatorCheckWebhook: the callback of POST /webhooks holds a webhook
// request to its headers and its WebhookEvent body.
func TestValidatorCheckWebhook(t *testing.T) {
	v, err := NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	sig := "v1," + strings.Repeat("A", 43) + "="
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", "petstore-webhooks/1.0")
	h.Set("webhook-id", "12")
	h.Set("webhook-timestamp", "1795000020")
	h.Set("webhook-signature", sig)
	body := func(id, typ string) string {
		return `{"id":` + id + `,"type":"` + typ + `","createdAt":"2026-11-29T10:00:00Z","data":{"id":5}}`
	}
	for _, c := range []struct {
		name    string
		header  http.Header
		body    string
		wantErr bool
	}{
		{"OKOrderCreated", h, body("7", "order.created"), false},
		{"OKTest", h, body("0", "webhook.test"), false},
		{"OKRotation", with(h, "webhook-signature", sig+" "+sig), body("7", "pet.deleted"), false},
		{"ErrUnknownType", h, body("7", "pet.sold"), true},
		{"ErrNoCreatedAt", h, `{"id":7,"type":"pet.created","data":{}}`, true},
		{"ErrNoSignature", with(h, "webhook-signature", ""), body("7", "pet.created"), true},
		{"ErrSignatureV2", with(h, "webhook-signature", "v2,"+strings.Repeat("A", 43)+"="), body("7", "pet.created"), true},
		{"ErrTimestampMillis", with(h, "webhook-timestamp", "1795000020.5"), body("7", "pet.created"), true},
		{"ErrUserAgent", with(h, "User-Agent", "Go-http-client/1.1"), body("7", "pet.created"), true},
	} {
		err := v.CheckWebhook(c.header, []byte(c.body))
		if (err != nil) != c.wantErr {
			t.Errorf("%s: err = %v, want an error: %v", c.name, err, c.wantErr)
		}
	}
}
