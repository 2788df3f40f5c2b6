package main

import (
	"context"
	"log/slog"
	"time"

	"petstore/db"
)

// housekeepingInterval is how often a server purges what has expired
// (SPEC §11). The retention periods are hours to days, so once an hour
// keeps every table within about an hour of its bound.
const housekeepingInterval = time.Hour

// startHousekeeping purges expired rows once now and then every interval
// until ctx ends, in the background. The returned function waits for the
// loop to stop, so that the caller can close the database after it. Every
// instance runs its own loop: purges are idempotent deletes, and two
// instances purging at once only share the work.
func startHousekeeping(ctx context.Context, store *db.Store, interval time.Duration, logger *slog.Logger) (wait func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			housekeep(ctx, store.PurgeSteps(), logger)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return func() { <-done }
}

// housekeep runs every purge step once. A step that fails is logged and
// the others still run; the next round tries it again.
func housekeep(ctx context.Context, steps []db.PurgeStep, logger *slog.Logger) {
	var total int64
	for _, step := range steps {
		n, err := step.Purge(ctx)
		total += n
		switch {
		case err != nil && ctx.Err() != nil:
			return // shutting down: the statement was cancelled
		case err != nil:
			logger.Warn("housekeeping: purge failed", "what", step.Name, "purged", n, "err", err)
		case n > 0:
			logger.Info("housekeeping: purged", "what", step.Name, "rows", n)
		}
	}
	logger.Debug("housekeeping done", "rows", total)
}
