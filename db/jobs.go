package db

import (
	"context"
	"database/sql"
	"fmt"
)

// Audit actions of the console's Jobs page (SPEC §21): staff retried or
// cancelled one of the queue's jobs.
const (
	AuditJobRetry  = "job.retry"
	AuditJobCancel = "job.cancel"

	auditTargetJob = "job"
)

// JobTx is the transaction of a staff change of one of the queue's jobs:
// River's change runs in SQLTx, and the job's kind may end its own record
// of the job beside it (StopWebhookDelivery, StopEmail).
type JobTx struct{ tx *Tx }

// SQLTx is the transaction, for River's change.
func (j *JobTx) SQLTx() *sql.Tx { return j.tx.Tx.Tx }

// JobChange changes one of the queue's jobs in jt, the transaction its
// audit entry is written in, and returns the job's state before and
// after. The queue makes it (web/queue: River's JobRetryTx or
// JobCancelTx); db never names River's tables.
type JobChange func(ctx context.Context, jt *JobTx) (before, after string, err error)

// ChangeJob runs change, a staff change of job id, and writes its audit
// entry (action, AuditJobRetry or AuditJobCancel) in the same
// transaction: the job's state as [before, after]. A change that leaves
// the state as it was (a finished job cancelled) is audited all the same:
// someone asked. Errors: those of change.
func (s *Store) ChangeJob(ctx context.Context, action string, id int64, change JobChange) (before, after string, err error) {
	err = inTxDo(ctx, s, func(tx *Tx) error {
		before, after, err = change(ctx, &JobTx{tx: tx})
		if err != nil {
			return err
		}
		return tx.audit(action, TargetID(auditTargetJob, id), Changes{"state": {before, after}})
	})
	return before, after, err
}

// StopWebhookDelivery fails generation of delivery id while it is pending:
// staff cancelled its job, so no attempt comes (the webhook's own retry
// queues a new one). Another generation, or a delivery already decided,
// is left alone.
func (j *JobTx) StopWebhookDelivery(ctx context.Context, id, generation int64) error {
	_, err := j.tx.exec(ctx, `UPDATE webhook_deliveries SET status = $1, next_attempt_at = NULL
		WHERE id = $2 AND generation = $3 AND status = $4`, DeliveryFailed, id, generation, DeliveryPending)
	if err != nil {
		return fmt.Errorf("stop delivery %d: %w", id, err)
	}
	return nil
}

// StopEmail fails generation of email id while it is queued: staff
// cancelled its job, so no attempt comes (Resend queues it again).
func (j *JobTx) StopEmail(ctx context.Context, id, generation int64) error {
	_, err := j.tx.exec(ctx, `UPDATE emails SET status = $1, next_attempt_at = NULL
		WHERE id = $2 AND generation = $3 AND status = $4`, EmailFailed, id, generation, EmailQueued)
	if err != nil {
		return fmt.Errorf("stop email %d: %w", id, err)
	}
	return nil
}
