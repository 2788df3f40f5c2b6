package db

import (
	"bytes"
	"encoding/json"
)

// Nullable is a request field that may be absent, null or set: a PUT that
// omits it keeps the stored value, null clears it (SPEC §14's description,
// breed and birthDate).
type Nullable[T any] struct {
	// Present is true when the field was sent, null included.
	Present bool
	// Null is true when the field was sent as null.
	Null  bool
	Value T
}

// Set is a field sent with a value.
func Set[T any](v T) Nullable[T] { return Nullable[T]{Present: true, Value: v} }

// Clear is a field sent as null.
func Clear[T any]() Nullable[T] { return Nullable[T]{Present: true, Null: true} }

// UnmarshalJSON records that the field was sent; encoding/json calls it for
// null too, since Nullable is not a pointer.
func (n *Nullable[T]) UnmarshalJSON(b []byte) error {
	n.Present = true
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		n.Null = true
		var zero T
		n.Value = zero
		return nil
	}
	n.Null = false
	return json.Unmarshal(b, &n.Value)
}

// Has reports whether the field carries a value (sent, not null).
func (n Nullable[T]) Has() bool { return n.Present && !n.Null }

// NullClears marks the field as one where null is a value (it clears),
// for the request decoder, which refuses null everywhere else.
func (*Nullable[T]) NullClears() {}
