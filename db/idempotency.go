package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Idempotency windows (SPEC §5).
const (
	IdempotencyTTL = 24 * time.Hour
	// idempotencyStale is how long a request may hold a key before another
	// may take it over: the holder must have died.
	idempotencyStale = time.Minute
)

// StoredResponse is the answer kept for an Idempotency-Key.
type StoredResponse struct {
	Status      int    `db:"status"`
	ContentType string `db:"content_type"`
	Location    string `db:"location"`
	Body        []byte `db:"body"`
}

// BeginIdempotent claims an Idempotency-Key for owner. It returns nil when
// the caller now holds the key and must run the request, or the stored
// response to replay. Errors: idempotency_key_reused (different request),
// idempotency_in_progress (the first request still runs).
func (s *Store) BeginIdempotent(ctx context.Context, owner, key, requestHash string) (*StoredResponse, error) {
	now := s.Now().UTC()
	if _, err := s.exec(ctx, `DELETE FROM idempotency_keys WHERE owner = $1 AND key = $2 AND created_at <= $3`,
		owner, key, now.Add(-IdempotencyTTL)); err != nil {
		return nil, fmt.Errorf("expire idempotency key: %w", err)
	}
	res, err := s.exec(ctx, `INSERT INTO idempotency_keys (owner, key, request_hash, created_at)
		VALUES ($1, $2, $3, $4) ON CONFLICT (owner, key) DO NOTHING`, owner, key, requestHash, now)
	if err != nil {
		return nil, fmt.Errorf("claim idempotency key: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return nil, nil
	}
	var row struct {
		RequestHash string         `db:"request_hash"`
		Status      sql.NullInt64  `db:"status"`
		ContentType sql.NullString `db:"content_type"`
		Location    sql.NullString `db:"location"`
		Body        []byte         `db:"body"`
		CreatedAt   time.Time      `db:"created_at"`
	}
	err = s.get(ctx, &row, `SELECT request_hash, status, content_type, location, body, created_at FROM idempotency_keys WHERE owner = $1 AND key = $2`, owner, key)
	if errors.Is(err, sql.ErrNoRows) {
		// Expired and deleted between our statements: try once more.
		return s.BeginIdempotent(ctx, owner, key, requestHash)
	}
	if err != nil {
		return nil, fmt.Errorf("read idempotency key: %w", err)
	}
	if row.RequestHash != requestHash {
		return nil, Errorf(EIdempotencyKeyReused, "This Idempotency-Key was used with a different request.")
	}
	if row.Status.Valid {
		return &StoredResponse{Status: int(row.Status.Int64), ContentType: row.ContentType.String, Location: row.Location.String, Body: row.Body}, nil
	}
	if now.Sub(row.CreatedAt) < idempotencyStale {
		return nil, Errorf(EIdempotencyInProgress, "A request with this Idempotency-Key is still in progress.")
	}
	res, err = s.exec(ctx, `UPDATE idempotency_keys SET created_at = $1 WHERE owner = $2 AND key = $3 AND status IS NULL AND created_at = $4`,
		now, owner, key, row.CreatedAt)
	if err != nil {
		return nil, fmt.Errorf("take over idempotency key: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return nil, nil
	}
	return nil, Errorf(EIdempotencyInProgress, "A request with this Idempotency-Key is still in progress.")
}

// FinishIdempotent stores the response for replay.
func (s *Store) FinishIdempotent(ctx context.Context, owner, key string, r StoredResponse) error {
	_, err := s.exec(ctx, `UPDATE idempotency_keys SET status = $1, content_type = $2, location = $3, body = $4 WHERE owner = $5 AND key = $6`,
		r.Status, r.ContentType, r.Location, r.Body, owner, key)
	if err != nil {
		return fmt.Errorf("store idempotent response: %w", err)
	}
	return nil
}

// AbandonIdempotent releases a key whose request failed without an answer
// worth replaying (a 5xx), so the client may retry with it.
func (s *Store) AbandonIdempotent(ctx context.Context, owner, key string) error {
	if _, err := s.exec(ctx, `DELETE FROM idempotency_keys WHERE owner = $1 AND key = $2 AND status IS NULL`, owner, key); err != nil {
		return fmt.Errorf("abandon idempotency key: %w", err)
	}
	return nil
}
