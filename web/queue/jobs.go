package queue

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"petstore/db"
	"petstore/db/riverdb"
)

// States are River's job states in the order the console shows them:
// waiting and working first, finished last.
var States = []string{
	string(rivertype.JobStateAvailable), string(rivertype.JobStateRunning), string(rivertype.JobStateScheduled),
	string(rivertype.JobStateRetryable), string(rivertype.JobStatePending), string(rivertype.JobStateCancelled),
	string(rivertype.JobStateDiscarded), string(rivertype.JobStateCompleted),
}

// QueueJobs is one queue's jobs as the console's Jobs page and the metrics
// show them.
type QueueJobs struct {
	Queue string
	// Counts are its jobs by state (States); a state with none is absent.
	Counts map[string]int64
	// Lag is how long its oldest waiting (available) job has been due,
	// zero when none waits.
	Lag time.Duration
}

// FailedJob is a job whose last attempt failed and that has not
// completed since: it waits to try again, or was given up or cancelled.
type FailedJob struct {
	ID          int64
	Kind, Queue string
	State       string
	// Attempts are the attempts made so far, Error the last one's.
	Attempts int
	Error    string
	// AttemptedAt is when the last attempt began (River's clock).
	AttemptedAt *time.Time
	// CanRetry and CanCancel say whether Retry and Cancel would change
	// the job (a running job is not retried, a finished one not
	// cancelled).
	CanRetry, CanCancel bool
}

// failure is what a kind records on a job whose attempt failed and which
// waits to try again (RecordFailure), in River's output of the job.
type failure struct {
	Error   string `json:"error"`
	Attempt int    `json:"attempt"`
}

// RecordFailure notes on the running job that its attempt failed, why
// (cause: text fit for staff to read) and how many attempts the kind has
// made: a kind that waits to try again (JobSnooze) leaves no error in
// River's own record, so the Jobs page reads this. Outside a job (a
// kind's rules tested without the queue) it does nothing.
func RecordFailure(ctx context.Context, attempt int, cause string) {
	_ = river.RecordOutput(ctx, failure{Error: cause, Attempt: attempt})
}

// failuresWhere picks jobs with a failure: River's errors (the work
// returned one) or a failure a kind recorded. The same SQL on both
// databases: SQLite reads `->` and `->>` as PostgreSQL does on jsonb.
const failuresWhere = `(errors IS NOT NULL OR metadata->'output'->>'error' IS NOT NULL)`

// Jobs returns every queue's jobs by state, the registered queues first
// (in registration order, with none or some), then any other queue
// River's table holds. Ages are measured on the database's clock, as
// River stamps its jobs (see Start), whatever the app's clock says.
func (q *Queue) Jobs(ctx context.Context) ([]QueueJobs, error) {
	counts, err := riverdb.CountJobs(ctx, q.store.Dialect(), q.store.DB().DB)
	if err != nil {
		return nil, err
	}
	var out []QueueJobs
	at := map[string]int{}
	add := func(name string) int {
		if i, ok := at[name]; ok {
			return i
		}
		at[name] = len(out)
		out = append(out, QueueJobs{Queue: name, Counts: map[string]int64{}})
		return len(out) - 1
	}
	q.mu.Lock()
	for _, kind := range q.order {
		add(q.kinds[kind].Queue)
	}
	q.mu.Unlock()
	for _, c := range counts {
		qj := &out[add(c.Queue)]
		qj.Counts[c.State] = c.N
		if c.State == string(rivertype.JobStateAvailable) {
			qj.Lag = max(c.Age, 0)
		}
	}
	return out, nil
}

// Failures returns the newest limit jobs with a failed last attempt that
// have not completed since, newest first (River's JobList).
func (q *Queue) Failures(ctx context.Context, limit int) ([]FailedJob, error) {
	client, err := q.build()
	if err != nil {
		return nil, err
	}
	states := []rivertype.JobState{}
	for _, s := range States {
		if s != string(rivertype.JobStateCompleted) {
			states = append(states, rivertype.JobState(s))
		}
	}
	res, err := client.JobList(ctx, river.NewJobListParams().States(states...).Where(failuresWhere).
		OrderBy(river.JobListOrderByID, river.SortOrderDesc).First(limit))
	if err != nil {
		return nil, fmt.Errorf("queue: list failed jobs: %w", err)
	}
	out := make([]FailedJob, 0, len(res.Jobs))
	for _, j := range res.Jobs {
		out = append(out, failedJob(j))
	}
	return out, nil
}

// failedJob is a job's failure as the console shows it: the error River
// recorded when the work returned one (a retryable or discarded job), else
// the failure its kind recorded.
func failedJob(j *rivertype.JobRow) FailedJob {
	f := FailedJob{
		ID: j.ID, Kind: j.Kind, Queue: j.Queue, State: string(j.State), Attempts: j.Attempt,
		AttemptedAt: j.AttemptedAt,
	}
	var rec failure
	if out := j.Output(); len(out) > 0 {
		_ = json.Unmarshal(out, &rec)
	}
	if n := len(j.Errors); n > 0 && (rec.Error == "" || j.State == rivertype.JobStateRetryable || j.State == rivertype.JobStateDiscarded) {
		last := j.Errors[n-1]
		f.Error, f.Attempts = last.Error, max(f.Attempts, last.Attempt)
	} else {
		f.Error, f.Attempts = rec.Error, max(f.Attempts, rec.Attempt)
	}
	// A job available but not yet due (a short snooze) is made due now.
	f.CanRetry = j.State != rivertype.JobStateRunning
	f.CanCancel = !slices.Contains([]rivertype.JobState{rivertype.JobStateCancelled, rivertype.JobStateCompleted, rivertype.JobStateDiscarded}, j.State)
	return f
}

// Retry makes job id available to run now (River's JobRetry; a running
// job is left alone), audited as job.retry in the same transaction, and
// returns its state before and after. Errors: not_found.
func (q *Queue) Retry(ctx context.Context, id int64) (before, after string, err error) {
	return q.change(ctx, db.AuditJobRetry, id, func(c *river.Client[*sql.Tx], ctx context.Context, jt *db.JobTx, _ *rivertype.JobRow) (*rivertype.JobRow, error) {
		return c.JobRetryTx(ctx, jt.SQLTx(), id)
	})
}

// Cancel stops job id (River's JobCancel: a waiting job is cancelled at
// once and never runs again; a running one is asked to stop, and is not
// tried again), audited as job.cancel in the same transaction, and returns
// its state before and after. A job cancelled at once has its kind end
// its own record (Kind.Cancelled: a delivery or an email failed) in that
// transaction too. Errors: not_found.
func (q *Queue) Cancel(ctx context.Context, id int64) (before, after string, err error) {
	return q.change(ctx, db.AuditJobCancel, id, func(c *river.Client[*sql.Tx], ctx context.Context, jt *db.JobTx, was *rivertype.JobRow) (*rivertype.JobRow, error) {
		job, err := c.JobCancelTx(ctx, jt.SQLTx(), id)
		if err != nil || job.State != rivertype.JobStateCancelled || was.State == rivertype.JobStateCancelled {
			return job, err
		}
		if k := q.kinds[job.Kind]; k.Cancelled != nil { // read-only once built
			if err := k.Cancelled(ctx, jt, job.EncodedArgs); err != nil {
				return nil, fmt.Errorf("queue: cancel %s job %d: %w", job.Kind, id, err)
			}
		}
		return job, nil
	})
}

// change runs fn, a River change of job id (was, as it was before), in
// the store's transaction that audits it.
func (q *Queue) change(ctx context.Context, action string, id int64,
	fn func(c *river.Client[*sql.Tx], ctx context.Context, jt *db.JobTx, was *rivertype.JobRow) (*rivertype.JobRow, error)) (string, string, error) {
	client, err := q.build()
	if err != nil {
		return "", "", err
	}
	return q.store.ChangeJob(ctx, action, id, func(ctx context.Context, jt *db.JobTx) (string, string, error) {
		was, err := client.JobGetTx(ctx, jt.SQLTx(), id)
		if err != nil {
			return "", "", jobError(id, err)
		}
		now, err := fn(client, ctx, jt, was)
		if err != nil {
			return "", "", jobError(id, err)
		}
		return string(was.State), string(cmp.Or(now.State, was.State)), nil
	})
}

// jobError is River's answer about job id as the store's errors say it.
func jobError(id int64, err error) error {
	if errors.Is(err, rivertype.ErrNotFound) {
		return db.Errorf(db.ENotFound, "Job %d not found.", id)
	}
	return fmt.Errorf("queue: job %d: %w", id, err)
}
