package webhooks

import (
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"strings"
	"testing"
)

// hmacSHA256 is RFC 2104 written out, independent of crypto/hmac, which
// Sign uses: a verifier a receiver could write from the standard alone.
func hmacSHA256(key, msg []byte) []byte {
	const block = 64
	if len(key) > block {
		sum := sha256.Sum256(key)
		key = sum[:]
	}
	k := make([]byte, block)
	copy(k, key)
	inner, outer := make([]byte, block), make([]byte, block)
	for i := range k {
		inner[i], outer[i] = k[i]^0x36, k[i]^0x5c
	}
	in := sha256.Sum256(append(inner, msg...))
	out := sha256.Sum256(append(outer, in[:]...))
	return out[:]
}

// verify checks a webhook-signature header the way a receiver does: some
// "v1," signature of the header list must be the HMAC of id.timestamp.body
// under the secret's bytes.
func verify(t *testing.T, secret, id string, timestamp int64, body []byte, header string) bool {
	t.Helper()
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		t.Fatalf("secret %q: %v", secret, err)
	}
	want := "v1," + base64.StdEncoding.EncodeToString(hmacSHA256(key, []byte(id+"."+strconv.FormatInt(timestamp, 10)+"."+string(body))))
	for _, sig := range strings.Fields(header) {
		if sig == want {
			return true
		}
	}
	return false
}

func TestSignStandardWebhooksVector(t *testing.T) {
	// The example of the Standard Webhooks specification.
	got := Sign([]string{"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, []byte(`{"test": 2432232314}`))
	if want := "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="; got != want {
		t.Fatalf("Sign = %s, want %s", got, want)
	}
}

func TestSignVerifiesIndependently(t *testing.T) {
	old, cur := "whsec_"+base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef")),
		"whsec_"+base64.StdEncoding.EncodeToString([]byte("fedcba9876543210fedcba9876543210"))
	body := []byte(`{"id":7,"type":"order.created","createdAt":"2026-01-02T03:04:05Z","data":{"id":1}}`)
	one := Sign([]string{cur}, "42", 1767323045, body)
	if !verify(t, cur, "42", 1767323045, body, one) {
		t.Fatalf("signature %s does not verify", one)
	}
	for _, c := range []struct {
		name string
		ok   bool
		id   string
		ts   int64
		body string
	}{
		{"OtherID", false, "43", 1767323045, string(body)},
		{"OtherTimestamp", false, "42", 1767323046, string(body)},
		{"OtherBody", false, "42", 1767323045, string(body) + " "},
	} {
		if verify(t, cur, c.id, c.ts, []byte(c.body), one) != c.ok {
			t.Errorf("%s: verified = %v, want %v", c.name, !c.ok, c.ok)
		}
	}
	// During a rotation both sign, space-separated, the new one first.
	both := Sign([]string{cur, old}, "42", 1767323045, body)
	if parts := strings.Fields(both); len(parts) != 2 || parts[0] != one {
		t.Fatalf("rotation signature = %q", both)
	}
	if !verify(t, old, "42", 1767323045, body, both) || !verify(t, cur, "42", 1767323045, body, both) {
		t.Fatalf("a receiver holding either secret must verify %s", both)
	}
}
