// Package secrets seals the secrets the store keeps (webhook signing
// secrets, TOTP secrets) with AES-256-GCM under a ring of keys
// (PETSTORE_SECRET_KEYS): the first key seals, every key opens, so keys
// rotate by putting a new one first and re-sealing.
//
// A sealed value is text: "enc:v1:<key id>:<base64 of nonce and
// ciphertext>". The key id (8 hex digits of a hash of the key, never the
// key) tells which rows still use an old key; the column's purpose
// ("webhooks.secret") is the associated data, so a value copied into
// another column does not open there.
package secrets

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// KeySize is a key's length in bytes (AES-256).
const KeySize = 32

// prefix starts every sealed value: the format and its version.
const prefix = "enc:v1:"

// ErrNoKey is returned by Open when no key of the ring opens a value: it
// was sealed under a key the ring does not hold (or was altered).
var ErrNoKey = errors.New("no key of PETSTORE_SECRET_KEYS opens it")

// Keyring holds the keys: the first seals, all open. It is safe for
// concurrent use.
type Keyring struct {
	keys []ringKey
}

type ringKey struct {
	id   string
	aead cipher.AEAD
}

// Parse reads comma-separated keys of KeySize bytes in hex (64 hex digits
// each), the value of PETSTORE_SECRET_KEYS.
func Parse(v string) (*Keyring, error) {
	var keys [][]byte
	for _, part := range strings.Split(v, ",") {
		b, err := hex.DecodeString(strings.TrimSpace(part))
		if err != nil || len(b) != KeySize {
			return nil, errors.New("must be comma-separated keys of 32 bytes in hex (64 hex digits each)")
		}
		keys = append(keys, b)
	}
	return New(keys...)
}

// New makes a ring of keys, the first sealing.
func New(keys ...[]byte) (*Keyring, error) {
	if len(keys) == 0 {
		return nil, errors.New("no key given")
	}
	k := &Keyring{}
	for _, key := range keys {
		if len(key) != KeySize {
			return nil, fmt.Errorf("a key is %d bytes, want %d", len(key), KeySize)
		}
		block, err := aes.NewCipher(key)
		if err != nil {
			return nil, err
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		k.keys = append(k.keys, ringKey{id: keyID(key), aead: aead})
	}
	return k, nil
}

// GenerateKey returns a new random key in hex, as PETSTORE_SECRET_KEYS
// takes it.
func GenerateKey() (string, error) {
	b := make([]byte, KeySize)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// keyID names a key without revealing it: 8 hex digits of a hash.
func keyID(key []byte) string {
	h := sha256.Sum256(append([]byte("petstore secret key id\x00"), key...))
	return hex.EncodeToString(h[:4])
}

// SealingKeyID is the id of the key that seals (the first).
func (k *Keyring) SealingKeyID() string { return k.keys[0].id }

// Seal encrypts plain under the first key, purpose bound in.
func (k *Keyring) Seal(purpose, plain string) (string, error) {
	key := k.keys[0]
	nonce := make([]byte, key.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("seal secret: %w", err)
	}
	out := key.aead.Seal(nonce, nonce, []byte(plain), []byte(purpose))
	return prefix + key.id + ":" + base64.RawStdEncoding.EncodeToString(out), nil
}

// Open decrypts a sealed value with the key that sealed it, purpose bound
// in. Errors: ErrNoKey (wrapped) when the ring has no key that opens it;
// another error when v is not a sealed value.
func (k *Keyring) Open(purpose, v string) (string, error) {
	id, body, ok := split(v)
	if !ok {
		return "", errors.New("open secret: not a sealed value")
	}
	raw, err := base64.RawStdEncoding.DecodeString(body)
	if err != nil {
		return "", errors.New("open secret: not a sealed value")
	}
	for _, key := range k.keys {
		if key.id != id || len(raw) < key.aead.NonceSize() {
			continue
		}
		n := key.aead.NonceSize()
		plain, err := key.aead.Open(nil, raw[:n], raw[n:], []byte(purpose))
		if err == nil {
			return string(plain), nil
		}
	}
	return "", fmt.Errorf("open secret sealed under key %s: %w", id, ErrNoKey)
}

// IsSealed reports whether v is a sealed value (else it is plain text
// written before secrets were sealed).
func IsSealed(v string) bool {
	_, _, ok := split(v)
	return ok
}

// KeyID is the id of the key a sealed value was sealed under, "" for a
// value that is not sealed.
func KeyID(v string) string {
	id, _, _ := split(v)
	return id
}

func split(v string) (id, body string, ok bool) {
	rest, found := strings.CutPrefix(v, prefix)
	if !found {
		return "", "", false
	}
	id, body, found = strings.Cut(rest, ":")
	if !found || len(id) != 8 || body == "" {
		return "", "", false
	}
	return id, body, true
}
