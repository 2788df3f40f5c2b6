package db_test

import (
	"encoding/json"
	"testing"

	"petstore/db"
)

// Amounts read back as they are written, so a client (and the tests) can
// decode the API's Pet and Order into db's types.
func TestMoneyJSON(t *testing.T) {
	for _, m := range []db.Money{0, 5, 12900, db.MaxMoney} {
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		var got db.Money
		if err := json.Unmarshal(b, &got); err != nil || got != m {
			t.Errorf("%s read back as %d, %v; want %d", b, got, err, m)
		}
	}
	var o db.Order
	if err := json.Unmarshal([]byte(`{"id":1,"unitPrice":"790.00","total":"1580.00","currency":"EUR"}`), &o); err != nil {
		t.Fatal(err)
	}
	if o.UnitPrice != 79000 || o.Total != 158000 {
		t.Errorf("order = %+v", o)
	}
	for _, bad := range []string{`129`, `"12,90"`, `"-1.00"`, `"1.234"`, `true`} {
		var m db.Money
		if err := json.Unmarshal([]byte(bad), &m); err == nil {
			t.Errorf("%s was read as %d", bad, m)
		}
	}
	m := db.Money(7)
	if err := json.Unmarshal([]byte(`null`), &m); err != nil || m != 7 {
		t.Errorf("null: %d, %v", m, err)
	}
}
