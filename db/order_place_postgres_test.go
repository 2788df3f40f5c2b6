package db

import (
	"strings"
	"testing"
	"time"
)

// TestPunchHolesWholeTokensOnly: a hole is a whole token, a number or a
// string with its quotes; the text inside a string is kept, however like
// a sentinel it looks.
func TestPunchHolesWholeTokensOnly(t *testing.T) {
	js := `{"a":-9000000000000001,"b":"-9000000000000001","c":"(status)","d":"x\"(status)\"",` +
		`"e":[-9000000000000002],"f":"-90000000000000.03","g":"\"-90000000000000.04\"","h":-90000000000000010}`
	var found [6]int
	got := punchHoles(js, &found)
	want := "{\"a\":\x01,\"b\":\"-9000000000000001\",\"c\":\x03,\"d\":\"x\\\"(status)\\\"\"," +
		"\"e\":[\x02],\"f\":\x04,\"g\":\"\\\"-90000000000000.04\\\"\",\"h\":-90000000000000010}"
	if got != want {
		t.Errorf("punchHoles:\n got %q\nwant %q", got, want)
	}
	if found != [6]int{0, 1, 1, 1, 1, 0} {
		t.Errorf("found = %v, want holes 1 to 4 once each", found)
	}
}

// TestPlacedEventsWithHoles: the events of an order come out with each
// hole once, in placedEvents' order, whatever text a buyer's details hold;
// a value that is a sentinel's token whole (a lone order has no buyer, so
// this never happens there) is refused rather than filled.
func TestPlacedEventsWithHoles(t *testing.T) {
	ship := "2030-01-02T03:04:05Z"
	for _, o := range []*Order{
		{PetID: 7, Quantity: 2, Currency: "EUR", State: OrderOpen},
		{PetID: 7, Quantity: 1000, Currency: "USD", State: OrderOpen, ShipDate: mustShipDate(t, ship),
			Customer: &Customer{Name: `-90000000000000.03 -9000000000000001`, Email: `"(status)"@example.com`}},
	} {
		events, err := placedEventsWithHoles(o)
		if err != nil {
			t.Fatal(err)
		}
		if events[0].typ != EventInventoryUpdated || events[1].typ != EventOrderCreated {
			t.Errorf("event types = %s, %s", events[0].typ, events[1].typ)
		}
		if want := "{\"petId\":7,\"quantity\":\x02,\"status\":\x03}"; events[0].data != want {
			t.Errorf("inventory event = %q, want %q", events[0].data, want)
		}
		if d := events[1].data; !strings.HasPrefix(d, "{\"id\":\x01,") || !strings.Contains(d, "\"unitPrice\":\x04,\"total\":\x05") {
			t.Errorf("order event = %q, want the id, unit price and total as holes", d)
		}
	}
	clash := &Order{PetID: 7, Quantity: 1, Customer: &Customer{Name: "(status)"}}
	if _, err := placedEventsWithHoles(clash); err == nil {
		t.Error("a buyer named as the status sentinel: no error")
	}
}

func mustShipDate(t *testing.T, s string) *time.Time {
	t.Helper()
	d, err := parseShipDate(&s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
