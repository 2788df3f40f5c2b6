package openapi

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"petstore/db"
	"petstore/db/dbtest"
)

// Tests of what the document says: the deprecation and stability markers,
// the schemas, the sunset date it is built with.

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
		"Pet":             "categoryId,currency,id,name,photos,price,status",
		"Photo":           "height,id,thumbUrl,url,width",
		"NewPet":          "categoryId,name",
		"Category":        "id,name",
		"NewCategory":     "name",
		"Order":           "complete,currency,id,petId,quantity,total,unitPrice",
		"Customer":        "email,name",
		"NewOrder":        "petId,quantity",
		"InventoryItem":   "petId,quantity,status",
		"InventoryUpdate": "quantity",
		"RateLimitStatus": "banned,day,minute,plan",
		"ApiKey":          "createdAt,id,name,perDay,perMinute,plan,prefix,role",
		"NewApiKey":       "name,plan,role",
		"KeyUsage":        "banned,bansLast24h,day,keyId,limited429Today,minute,perMinute,plan",
		"Webhook":         "createdAt,enabled,events,id,url",
		"NewWebhook":      "events,url",
		"Delivery":        "attempts,createdAt,eventId,eventType,id,status",
		"DeliveryAttempt": "at,durationMs",
		"WebhookEvent":    "createdAt,data,id,type",
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

// TestMoneySchemas: the document's amount patterns say what the store
// does — MoneyInput accepts exactly what db.ParseMoney reads, and Money
// fits every amount the store writes, totals of 1,000 units included.
func TestMoneySchemas(t *testing.T) {
	doc := mustLoad(t)
	input := doc.Components.Schemas["MoneyInput"].Value
	for _, s := range []string{"0", "0.00", "129", "129.5", "129.05", "9999999.99", "0000000.0",
		"", ".5", "12.", "12.345", "-1", "+1", "1e3", "12345678", " 12", "12 ", "abc", "١٢", "1,50"} {
		_, parseErr := db.ParseMoney(s)
		docErr := input.VisitJSON(s)
		if (parseErr == nil) != (docErr == nil) {
			t.Errorf("%q: db.ParseMoney error %v, but the document's MoneyInput says %v", s, parseErr, docErr)
		}
	}
	out := doc.Components.Schemas["Money"].Value
	for _, m := range []db.Money{0, 1, 99, 100, 12950, db.MaxMoney, db.MaxMoney.Times(db.MaxOrderQuantity)} {
		if err := out.VisitJSON(m.String(), openapi3.VisitAsResponse()); err != nil {
			t.Errorf("%d as %q: not a Money of the document: %v", m, m.String(), err)
		}
	}
	for _, s := range []string{"129", "129.5", "-1.00", "1.000"} {
		if out.VisitJSON(s, openapi3.VisitAsResponse()) == nil {
			t.Errorf("%q is a Money of the document; responses write exactly two decimals", s)
		}
	}
}
