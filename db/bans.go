package db

import (
	"context"
	"fmt"
	"time"
)

// Bans are stored durably so a restart or another instance still enforces
// them. Store implements the rate limiter's BanStore with these methods.

// ActiveBan returns the end of the subject's ban in force at now, if any.
func (s *Store) ActiveBan(ctx context.Context, subject string, now time.Time) (time.Time, bool, error) {
	var ends []time.Time
	err := s.sel(ctx, &ends, `SELECT ends_at FROM bans
		WHERE subject = $1 AND lifted_at IS NULL AND ends_at > $2 ORDER BY ends_at DESC LIMIT 1`, subject, now.UTC())
	if err != nil {
		return time.Time{}, false, fmt.Errorf("active ban: %w", err)
	}
	if len(ends) == 0 {
		return time.Time{}, false, nil
	}
	return ends[0].UTC(), true, nil
}

// ActiveBans maps every subject banned now to the end of its ban.
func (s *Store) ActiveBans(ctx context.Context) (map[string]time.Time, error) {
	var rows []struct {
		Subject string    `db:"subject"`
		EndsAt  time.Time `db:"ends_at"`
	}
	err := s.sel(ctx, &rows, `SELECT subject, ends_at FROM bans WHERE lifted_at IS NULL AND ends_at > $1`, s.Now().UTC())
	if err != nil {
		return nil, fmt.Errorf("active bans: %w", err)
	}
	m := make(map[string]time.Time, len(rows))
	for _, r := range rows {
		if r.EndsAt.After(m[r.Subject]) {
			m[r.Subject] = r.EndsAt.UTC()
		}
	}
	return m, nil
}

// CreateBan records a ban from start until until, and bumps the change
// counter so every instance's ban cache sees it on its next request.
func (s *Store) CreateBan(ctx context.Context, subject string, start, until time.Time) error {
	return inTxDo(ctx, s, func(tx *Tx) error {
		if _, err := tx.exec(ctx, `INSERT INTO bans (subject, started_at, ends_at) VALUES ($1, $2, $3)`, subject, start.UTC(), until.UTC()); err != nil {
			return fmt.Errorf("create ban: %w", err)
		}
		if err := tx.bumpAuthVersion(ctx); err != nil {
			return err
		}
		return nil
	})
}

// CountBans counts the subject's bans started after since that were not lifted.
func (s *Store) CountBans(ctx context.Context, subject string, since time.Time) (int, error) {
	var n int
	err := s.get(ctx, &n, `SELECT count(*) FROM bans WHERE subject = $1 AND started_at > $2 AND lifted_at IS NULL`, subject, since.UTC())
	if err != nil {
		return 0, fmt.Errorf("count bans: %w", err)
	}
	return n, nil
}

// LiftBan ends the subject's bans in force at now. Lifted bans do not
// count toward later doubling. It bumps the change counter so every
// instance's ban cache sees the lift on its next request.
func (s *Store) LiftBan(ctx context.Context, subject string, now time.Time) error {
	return inTxDo(ctx, s, func(tx *Tx) error {
		if _, err := tx.exec(ctx, `UPDATE bans SET lifted_at = $1 WHERE subject = $2 AND lifted_at IS NULL AND ends_at > $1`, now.UTC(), subject); err != nil {
			return fmt.Errorf("lift ban: %w", err)
		}
		if err := tx.bumpAuthVersion(ctx); err != nil {
			return err
		}
		return nil
	})
}
