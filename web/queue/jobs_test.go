package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/riverqueue/river"

	"petstore/db"
	"petstore/db/dbtest"
)

// TestJobsFailuresAndMetrics, on both databases: the counts by queue and
// state and the lag of a queue whose oldest job has waited an hour; then,
// worked, a job whose work returned an error (River's own record) and one
// whose kind noted a failure and snoozed (RecordFailure) are the failed
// jobs, newest first, with their errors and attempts, a completed one is
// not; the metrics say the same; Cancel tells the kind of a job it
// cancelled, not of one already finished; Retry and Cancel answer
// not_found for a job that does not exist.
func TestJobsFailuresAndMetrics(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s := open(t)
		q := New(s, Config{PollInterval: 50 * time.Millisecond})
		var stopped []int // the others' jobs cancelled, by their N
		for _, err := range []error{
			Register(q, Kind{Queue: "probes", Workers: 1, Timeout: time.Minute, MaxAttempts: 1}, func(context.Context, *river.Job[probeArgs]) error {
				return errors.New("boom")
			}),
			Register(q, Kind{Queue: "others", Workers: 1, Timeout: time.Minute, Cancelled: func(_ context.Context, _ *db.JobTx, args []byte) error {
				var a otherArgs
				err := json.Unmarshal(args, &a)
				stopped = append(stopped, a.N)
				return err
			}}, func(ctx context.Context, job *river.Job[otherArgs]) error {
				if job.Args.N == 1 {
					RecordFailure(ctx, 3, "refused_address")
					return river.JobSnooze(time.Hour)
				}
				return nil
			}),
		} {
			if err != nil {
				t.Fatal(err)
			}
		}
		tx, err := s.DB().Begin()
		if err != nil {
			t.Fatal(err)
		}
		if err := q.InsertTx(ctx, tx, probeArgs{EventID: 1}, otherArgs{N: 1}, otherArgs{N: 2}); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		// The first of the others due an hour ago (as a stalled queue
		// leaves it), before any worker runs.
		due := `now() - interval '1 hour'`
		if s.Dialect() == db.DialectSQLite {
			due = `datetime('now', 'subsec', '-3600 seconds')`
		}
		if _, err := s.DB().ExecContext(ctx, `UPDATE river_job SET scheduled_at = `+due+` WHERE id = 2`); err != nil {
			t.Fatal(err)
		}
		qs, err := q.Jobs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(queueCounts(qs)); got != "[probes map[available:1] others map[available:2]]" {
			t.Fatalf("counts before work = %s", got)
		}
		if lag := qs[1].Lag; lag < time.Hour-time.Second || lag > time.Hour+time.Minute { // SQLite's julianday is a float: a hair under
			t.Errorf("others' lag = %v, want an hour", lag)
		}

		if err := q.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = q.Stop(ctx) }()
		want := "[probes map[discarded:1] others map[completed:1 scheduled:1]]"
		for i := 0; ; i++ {
			if qs, err = q.Jobs(ctx); err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(queueCounts(qs)) == want {
				break
			}
			if i == 3000 {
				t.Fatalf("counts = %v, want %s", queueCounts(qs), want)
			}
			time.Sleep(20 * time.Millisecond)
		}
		fs, err := q.Failures(ctx, 50)
		if err != nil {
			t.Fatal(err)
		}
		got := make([]string, len(fs))
		for i, f := range fs {
			got[i] = fmt.Sprintf("%d %s %s %d %s retry=%t cancel=%t", f.ID, f.Queue, f.State, f.Attempts, f.Error, f.CanRetry, f.CanCancel)
		}
		if fmt.Sprint(got) != "[2 others scheduled 3 refused_address retry=true cancel=true 1 probes discarded 1 boom retry=true cancel=false]" {
			t.Fatalf("failures = %q", got)
		}

		reg := prometheus.NewRegistry()
		reg.MustRegister(q.Collector())
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		series := map[string]float64{}
		for _, mf := range mfs {
			for _, m := range mf.GetMetric() {
				name := mf.GetName()
				for _, l := range m.GetLabel() {
					name += " " + l.GetValue()
				}
				series[name] = m.GetGauge().GetValue()
			}
		}
		for name, want := range map[string]float64{
			"petstore_jobs probes discarded": 1, "petstore_jobs probes available": 0, "petstore_jobs others scheduled": 1,
			"petstore_jobs others completed": 1, "petstore_queue_lag_seconds others": 0, "petstore_jobs_read_ok": 1,
		} {
			if got, ok := series[name]; !ok || got != want {
				t.Errorf("%s = %v (present %t), want %v", name, got, ok, want)
			}
		}

		// Cancel: the waiting job at once, its kind told; the completed one
		// stays as it was, its kind not told.
		for _, c := range []struct {
			id            int64
			before, after string
		}{{2, "scheduled", "cancelled"}, {3, "completed", "completed"}} {
			before, after, err := q.Cancel(ctx, c.id)
			if err != nil || before != c.before || after != c.after {
				t.Errorf("cancel job %d: %s → %s (%v), want %s → %s", c.id, before, after, err, c.before, c.after)
			}
		}
		if fmt.Sprint(stopped) != "[1]" {
			t.Errorf("the kind was told of the cancelled jobs %v, want [1]", stopped)
		}

		for _, change := range []func(context.Context, int64) (string, string, error){q.Retry, q.Cancel} {
			if _, _, err := change(ctx, 999); db.ErrorCode(err) != db.ENotFound {
				t.Errorf("a change of a missing job: %v, want not_found", err)
			}
		}
	})
}

// queueCounts is each queue's name and counts, to compare at a glance.
func queueCounts(qs []QueueJobs) []any {
	var out []any
	for _, q := range qs {
		out = append(out, q.Queue, q.Counts)
	}
	return out
}
