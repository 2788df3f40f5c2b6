package browser

import (
	"crypto/sha256"
	"net/http"
	"reflect"
	"testing"

	"github.com/gorilla/securecookie"
)

// TestSessionValuesSerializer: a session's values (strings, and flash
// lists) come back as they were from the JSON a cookie now holds, and a
// cookie sealed before the change, in gob, still opens with everything in
// it (a shopper's cart survives the upgrade).
func TestSessionValuesSerializer(t *testing.T) {
	values := map[interface{}]interface{}{
		"csrf":   "dG9rZW4",
		"cart":   "12:1,7:3",
		"_flash": []interface{}{"success|Added Rex to your cart.", "error|Only 2 left."},
	}
	b, err := sessionValues{}.Serialize(values)
	if err != nil {
		t.Fatal(err)
	}
	if b[0] != '{' {
		t.Fatalf("serialized as %q, want a JSON object", b)
	}
	got := map[interface{}]interface{}{}
	if err := (sessionValues{}).Deserialize(b, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, values) {
		t.Fatalf("round trip: %v, want %v", got, values)
	}
	if _, err := (sessionValues{}).Serialize(map[interface{}]interface{}{"n": 1}); err == nil {
		t.Error("a value that is not a string was serialized")
	}

	// A cookie sealed with gob by the store as it was, under the same key.
	secret := []byte("0123456789abcdef0123456789abcdef")
	hash := sha256.Sum256(append([]byte("petstore session hash:"), secret...))
	block := sha256.Sum256(append([]byte("petstore session block:"), secret...))
	old, err := securecookie.New(hash[:], block[:]).Encode("petstore_shop", values)
	if err != nil {
		t.Fatal(err)
	}
	s := NewSessions([][]byte{secret})
	r := &http.Request{Header: http.Header{"Cookie": {"petstore_shop=" + old}}}
	sess, err := s.store.Get(r, "petstore_shop")
	if err != nil || sess.IsNew {
		t.Fatalf("a gob cookie of the same key: new %v, %v", sess.IsNew, err)
	}
	if !reflect.DeepEqual(sess.Values, values) {
		t.Fatalf("a gob cookie opened to %v, want %v", sess.Values, values)
	}
}
