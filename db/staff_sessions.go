package db

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"time"
)

// Console sign-ins live in staff_sessions (SPEC §10: signing out ends the
// session on the server). The browser's cookie holds a random session id;
// the table holds only its SHA-256, so a copy of the table signs no one in.

// CreateStaffSession signs user in until ttl from now and returns the
// session id for the cookie.
func (s *Store) CreateStaffSession(ctx context.Context, userID int64, ttl time.Duration) (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random session id: %w", err)
	}
	id := base64.RawURLEncoding.EncodeToString(b)
	now := s.Now().UTC()
	_, err := s.exec(ctx, `INSERT INTO staff_sessions (id, staff_user_id, created_at, expires_at) VALUES ($1, $2, $3, $4)`,
		HashKey(id), userID, now, now.Add(ttl))
	if err != nil {
		return "", fmt.Errorf("create staff session: %w", err)
	}
	return id, nil
}

// FindStaffUserBySession returns the user signed in by a session id that
// is neither ended nor expired: one indexed query per console request.
// Errors: not_found.
func (s *Store) FindStaffUserBySession(ctx context.Context, sessionID string) (*StaffUser, error) {
	if sessionID == "" {
		return nil, Errorf(ENotFound, "Not signed in.")
	}
	var u StaffUser
	// A disabled user's sessions were ended when it was disabled; the
	// condition keeps it so should one have been made since.
	err := s.get(ctx, &u, `SELECT `+staffUserColsOf("u")+`
		FROM staff_sessions ss JOIN staff_users u ON u.id = ss.staff_user_id
		WHERE ss.id = $1 AND ss.expires_at > $2 AND u.disabled_at IS NULL`, HashKey(sessionID), s.Now().UTC())
	if errors.Is(err, sql.ErrNoRows) {
		return nil, Errorf(ENotFound, "Not signed in.")
	}
	if err != nil {
		return nil, fmt.Errorf("find staff session: %w", err)
	}
	return &u, nil
}

// EndStaffSession signs a session out on every instance. Ending one that
// is unknown or already ended is not an error.
func (s *Store) EndStaffSession(ctx context.Context, sessionID string) error {
	if _, err := s.exec(ctx, `DELETE FROM staff_sessions WHERE id = $1`, HashKey(sessionID)); err != nil {
		return fmt.Errorf("end staff session: %w", err)
	}
	return nil
}

// PurgeStaffSessions deletes the console sessions that have expired, for
// housekeeping.
func (s *Store) PurgeStaffSessions(ctx context.Context) (int64, error) {
	return s.purge(ctx, "staff_sessions", "expires_at <= $1", s.Now().UTC())
}
