package db

import (
	"context"
	"database/sql"
)

// Audit actions of the console's Jobs page (SPEC §21): staff retried or
// cancelled one of the queue's jobs.
const (
	AuditJobRetry  = "job.retry"
	AuditJobCancel = "job.cancel"

	auditTargetJob = "job"
)

// JobChange changes one of the queue's jobs in tx, the transaction its
// audit entry is written in, and returns the job's state before and
// after. The queue makes it (web/queue: River's JobRetryTx or
// JobCancelTx); db never names River's tables.
type JobChange func(ctx context.Context, tx *sql.Tx) (before, after string, err error)

// ChangeJob runs change, a staff change of job id, and writes its audit
// entry (action, AuditJobRetry or AuditJobCancel) in the same
// transaction: the job's state as [before, after]. A change that leaves
// the state as it was (a finished job cancelled) is audited all the same:
// someone asked. Errors: those of change.
func (s *Store) ChangeJob(ctx context.Context, action string, id int64, change JobChange) (before, after string, err error) {
	err = inTxDo(ctx, s, func(tx *Tx) error {
		before, after, err = change(ctx, tx.Tx.Tx)
		if err != nil {
			return err
		}
		return tx.audit(action, TargetID(auditTargetJob, id), Changes{"state": {before, after}})
	})
	return before, after, err
}
