package db

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strings"
	"unicode/utf8"

	"golang.org/x/crypto/bcrypt"
)

// Staff passwords (SPEC §16): 12 to 200 characters, not the username,
// stored as bcrypt hashes. bcrypt reads at most 72 bytes, so a password is
// first reduced to the base64 of its SHA-256 (44 bytes), and the stored
// hash says so by its prefix; a hash without it (made before, or by the
// tests at bcrypt's lowest cost) is bcrypt of the password itself.

// Password length bounds, in characters, of a password a user chooses.
const (
	MinPasswordLength = 12
	MaxPasswordLength = 200
)

// prehashed marks a stored hash that is bcrypt of the password's SHA-256.
const prehashed = "sha256+"

// prehash is what bcrypt is given for password: the base64 of its SHA-256.
func prehash(password string) []byte {
	sum := sha256.Sum256([]byte(password))
	return []byte(base64.StdEncoding.EncodeToString(sum[:]))
}

// HashPassword is the stored form of a staff password, of any length, at
// bcrypt's default cost.
func HashPassword(password string) (string, error) {
	return HashPasswordCost(password, bcrypt.DefaultCost)
}

// HashPasswordCost is HashPassword at a bcrypt cost of its own (the tests'
// apps hash at bcrypt.MinCost).
func HashPasswordCost(password string, cost int) (string, error) {
	h, err := bcrypt.GenerateFromPassword(prehash(password), cost)
	if err != nil {
		return "", fmt.Errorf("hash password: %w", err)
	}
	return prehashed + string(h), nil
}

// PasswordMatches reports whether password is the one hash was made from
// (HashPassword's, or bcrypt of the password itself). It takes bcrypt's
// time whatever the answer.
func PasswordMatches(hash, password string) bool {
	if rest, ok := strings.CutPrefix(hash, prehashed); ok {
		return bcrypt.CompareHashAndPassword([]byte(rest), prehash(password)) == nil
	}
	return bcrypt.CompareHashAndPassword([]byte(hash), []byte(password)) == nil
}

// CheckNewPassword checks a password a user chooses for themselves: 12 to
// 200 characters of valid UTF-8, not their username. Errors:
// validation_failed (field "password").
func CheckNewPassword(username, password string) error {
	var p Problems
	switch n := utf8.RuneCountInString(password); {
	case !utf8.ValidString(password):
		p.Add("password", "must be valid UTF-8 text")
	case n < MinPasswordLength:
		p.Add("password", "must be at least %d characters", MinPasswordLength)
	case n > MaxPasswordLength:
		p.Add("password", "must be at most %d characters", MaxPasswordLength)
	case strings.EqualFold(strings.TrimSpace(password), strings.TrimSpace(username)):
		p.Add("password", "must not be your username")
	}
	return p.Err()
}

// passwordAlphabet is what generated passwords are made of: no letters
// that read alike (0/O, 1/l/I).
const passwordAlphabet = "abcdefghjkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"

// GeneratePassword makes a one-time password an admin hands over: four
// groups of five characters (about 115 bits), easy to read out.
func GeneratePassword() (string, error) {
	return randomGroups(passwordAlphabet, 4, 5)
}

// randomGroups is groups of n characters of alphabet, chosen uniformly
// with crypto/rand, joined by hyphens.
func randomGroups(alphabet string, groups, n int) (string, error) {
	var b strings.Builder
	buf := make([]byte, 1)
	for g := range groups {
		if g > 0 {
			b.WriteByte('-')
		}
		for i := 0; i < n; {
			if _, err := rand.Read(buf); err != nil {
				return "", fmt.Errorf("random password: %w", err)
			}
			// Rejection sampling keeps every character equally likely.
			if int(buf[0]) >= 256-256%len(alphabet) {
				continue
			}
			b.WriteByte(alphabet[int(buf[0])%len(alphabet)])
			i++
		}
	}
	return b.String(), nil
}
