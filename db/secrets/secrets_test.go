package secrets

import (
	"errors"
	"strings"
	"testing"
)

func mustKey(t *testing.T) string {
	t.Helper()
	k, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestSealOpenRotate(t *testing.T) {
	oldKey, newKey := mustKey(t), mustKey(t)
	old, err := Parse(oldKey)
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := old.Seal("webhooks.secret", "whsec_abc")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(sealed, "whsec_abc") || !IsSealed(sealed) || KeyID(sealed) != old.SealingKeyID() {
		t.Fatalf("sealed = %q", sealed)
	}
	if got, err := old.Open("webhooks.secret", sealed); err != nil || got != "whsec_abc" {
		t.Fatalf("open = %q, %v", got, err)
	}
	if _, err := old.Open("staff_users.totp_secret", sealed); !errors.Is(err, ErrNoKey) {
		t.Fatalf("open under another purpose: %v, want ErrNoKey", err)
	}
	ring, err := Parse(newKey + ", " + oldKey)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := ring.Open("webhooks.secret", sealed); err != nil || got != "whsec_abc" {
		t.Fatalf("old key second: open = %q, %v", got, err)
	}
	resealed, _ := ring.Seal("webhooks.secret", "whsec_abc")
	if KeyID(resealed) == KeyID(sealed) || KeyID(resealed) != ring.SealingKeyID() {
		t.Fatalf("resealed under %s, want the new key %s", KeyID(resealed), ring.SealingKeyID())
	}
	other, _ := Parse(mustKey(t))
	if _, err := other.Open("webhooks.secret", sealed); !errors.Is(err, ErrNoKey) {
		t.Fatalf("wrong key: %v, want ErrNoKey", err)
	}
}

func TestParseRefuses(t *testing.T) {
	for _, v := range []string{"", "abc", strings.Repeat("a", 62), strings.Repeat("a", 64) + ",zz"} {
		if _, err := Parse(v); err == nil {
			t.Errorf("Parse(%q) accepted", v)
		}
	}
	if IsSealed("whsec_abc") || IsSealed("JBSWY3DPEHPK3PXP") {
		t.Fatal("plain text taken for sealed")
	}
}
