package queue

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"petstore/db"
	"petstore/db/dbtest"
	"petstore/web/events"
)

// TestMain removes the migrated templates the tests' stores are copied from.
func TestMain(m *testing.M) { dbtest.Main(m) }

// probeArgs is a test kind: one job per event relayed.
type probeArgs struct {
	EventID int64 `json:"eventId"`
}

func (probeArgs) Kind() string { return "queue_probe" }

// otherArgs is a second test kind.
type otherArgs struct {
	N int `json:"n"`
}

func (otherArgs) Kind() string { return "queue_other" }

// worked counts the jobs worked, by key, across queues.
type worked struct {
	mu sync.Mutex
	n  map[int64]int
}

func (w *worked) add(key int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.n == nil {
		w.n = map[int64]int{}
	}
	w.n[key]++
}

func (w *worked) snapshot() map[int64]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[int64]int, len(w.n))
	for k, v := range w.n {
		out[k] = v
	}
	return out
}

// probeKind is a kind that makes one job per event relayed and records
// each job worked in w.
func probeKind(t *testing.T, q *Queue, w *worked) {
	t.Helper()
	// A minute: no job of these tests is rescued while they run. (Under a
	// busy machine's -race, River's note that a job completed can reach
	// SQLite's one writer seconds after the job ended; with a second's
	// timeout, the rescue took such jobs for cut off and ran them again.)
	k := Kind{Queue: "probes", Workers: 4, Timeout: time.Minute, FromEvents: func(ctx context.Context, b *db.RelayBatch) ([]river.JobArgs, error) {
		evs, err := b.Events(ctx)
		if err != nil {
			return nil, err
		}
		jobs := make([]river.JobArgs, len(evs))
		for i, e := range evs {
			jobs[i] = probeArgs{EventID: e.ID}
		}
		return jobs, nil
	}}
	err := Register(q, k, func(_ context.Context, job *river.Job[probeArgs]) error {
		w.add(job.Args.EventID)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// start starts q until the test ends.
func start(t *testing.T, q *Queue) {
	t.Helper()
	if err := q.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := q.Stop(ctx); err != nil {
			t.Errorf("stop queue: %v", err)
		}
	})
}

// count counts rows of query straight from the database.
func count(t *testing.T, s *db.Store, query string, args ...any) int {
	t.Helper()
	var n int
	if err := s.DB().GetContext(context.Background(), &n, query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// TestRegisterRefuses: a kind needs a queue of its own, workers and a
// timeout, and registers once, before the client is built (by the first
// insert or Start).
func TestRegisterRefuses(t *testing.T) {
	s := dbtest.SQLite(t)
	q := New(s, Config{})
	work := func(context.Context, *river.Job[otherArgs]) error { return nil }
	for name, k := range map[string]Kind{
		"no queue":   {Workers: 1, Timeout: time.Second},
		"no workers": {Queue: "others", Timeout: time.Second},
		"no timeout": {Queue: "others", Workers: 1},
	} {
		if err := Register(q, k, work); err == nil {
			t.Errorf("%s: registered", name)
		}
	}
	if err := Register(q, Kind{Queue: "others", Workers: 1, Timeout: time.Second}, work); err != nil {
		t.Fatal(err)
	}
	if err := Register(q, Kind{Queue: "others2", Workers: 1, Timeout: time.Second}, work); err == nil {
		t.Error("a kind registered twice")
	}
	probe := func(context.Context, *river.Job[probeArgs]) error { return nil }
	if err := Register(q, Kind{Queue: "others", Workers: 1, Timeout: time.Second}, probe); err == nil {
		t.Error("two kinds share a queue")
	}
	tx, err := s.DB().Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if err := q.InsertTx(context.Background(), tx, probeArgs{}); err == nil {
		t.Error("a job of a kind never registered was inserted")
	}
	if err := Register(q, Kind{Queue: "probes", Workers: 1, Timeout: time.Second}, probe); err == nil {
		t.Error("a kind registered after the client was built")
	}
}

// TestRelayEachEventOnceAcrossInstances: two instances on one database,
// each with its queue started, while pets are created through both: every
// event becomes exactly one job, worked exactly once.
func TestRelayEachEventOnceAcrossInstances(t *testing.T) {
	dbtest.EachURL(t, func(t *testing.T, url string) {
		ctx := context.Background()
		stores := []*db.Store{dbtest.OpenURL(t, url), dbtest.OpenURL(t, url)}
		var w worked
		for _, s := range stores {
			q := New(s, Config{PollInterval: 20 * time.Millisecond, RelayPoll: 50 * time.Millisecond})
			probeKind(t, q, &w)
			start(t, q)
		}
		cat, err := stores[0].CreateCategory(ctx, db.NewCategory{Name: ptr("Dogs")})
		if err != nil {
			t.Fatal(err)
		}
		const writers, pets = 4, 15
		var wg sync.WaitGroup
		for i := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s := stores[i%2]
				for j := range pets {
					if _, err := s.CreatePet(ctx, db.NewPet{Name: ptr(fmt.Sprintf("Pet %d-%d", i, j)), CategoryID: &cat.ID}); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		events := count(t, stores[0], `SELECT count(*) FROM events`)
		if events < writers*pets {
			t.Fatalf("%d events for %d pets", events, writers*pets)
		}
		deadline := time.Now().Add(30 * time.Second)
		for len(w.snapshot()) < events && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		got := w.snapshot()
		var twice []string
		for id, n := range got {
			if n != 1 {
				twice = append(twice, fmt.Sprintf("%d×%d", id, n))
			}
		}
		jobs := count(t, stores[0], `SELECT count(*) FROM river_job WHERE kind = $1`, probeArgs{}.Kind())
		if len(got) != events || len(twice) > 0 || jobs != events {
			t.Fatalf("%d events: %d worked, %d jobs, these more than once: %v", events, len(got), jobs, twice)
		}
	})
}

// TestRescueEveryKind: jobs of every registered kind left running past
// their kind's Timeout and RescueGrace (their instance died) are made
// available again; a job running for less is left alone.
func TestRescueEveryKind(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s := open(t)
		q := New(s, Config{})
		for _, err := range []error{
			Register(q, Kind{Queue: "probes", Workers: 1, Timeout: time.Second}, func(context.Context, *river.Job[probeArgs]) error { return nil }),
			Register(q, Kind{Queue: "others", Workers: 1, Timeout: time.Minute}, func(context.Context, *river.Job[otherArgs]) error { return nil }),
		} {
			if err != nil {
				t.Fatal(err)
			}
		}
		tx, err := s.DB().Begin()
		if err != nil {
			t.Fatal(err)
		}
		if err := q.InsertTx(ctx, tx, probeArgs{EventID: 1}, probeArgs{EventID: 2}, otherArgs{N: 1}, otherArgs{N: 2}); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		// As a crashed instance leaves them: the first job of each kind
		// began an hour ago, the second ago a little over the probe's
		// Timeout and grace (but under the other kind's).
		ago := func(d time.Duration) string {
			if s.Dialect() == db.DialectSQLite {
				return fmt.Sprintf("datetime('now', 'subsec', '-%d seconds')", int(d.Seconds()))
			}
			return fmt.Sprintf("now() - interval '%d seconds'", int(d.Seconds()))
		}
		for _, u := range []struct {
			id  int
			ago time.Duration
		}{{1, time.Hour}, {2, 10 * time.Second}, {3, time.Hour}, {4, 10 * time.Second}} {
			_, err := s.DB().ExecContext(ctx, `UPDATE river_job SET state = 'running', attempt = 1, attempted_at = `+ago(u.ago)+` WHERE id = $1`, u.id)
			if err != nil {
				t.Fatal(err)
			}
		}
		q.rescue(ctx)
		var states []string
		if err := s.DB().SelectContext(ctx, &states, `SELECT state FROM river_job ORDER BY id`); err != nil {
			t.Fatal(err)
		}
		if want := "available available available running"; fmt.Sprint(states) != "["+want+"]" {
			t.Fatalf("states after the rescue %v, want [%s]", states, want)
		}
	})
}

// TestNoSQLWritesRiverJobs: jobs enter through the queue alone; no
// trigger on the store's own tables writes River's (migration 00016
// dropped the ones that did).
func TestNoSQLWritesRiverJobs(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		s := open(t)
		q := `SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND sql LIKE '%river%'`
		if s.Dialect() == db.DialectPostgres {
			q = `SELECT count(*) FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_proc p ON p.oid = t.tgfoid
				WHERE c.relnamespace = current_schema()::regnamespace AND c.relname NOT LIKE 'river%' AND p.prosrc LIKE '%river%'`
		}
		if n := count(t, s, q); n != 0 {
			t.Fatalf("%d triggers on the store's tables write River's", n)
		}
	})
}

func ptr[T any](v T) *T { return &v }

// TestRelayWokenByAnotherInstance: on PostgreSQL an instance's commit
// wakes the relay of another instance through its NOTIFY (the event hub's
// listener), not only the relay's poll, which this test makes an hour:
// events committed by a second store become jobs all the same.
func TestRelayWokenByAnotherInstance(t *testing.T) {
	url := dbtest.PostgresURL(t)
	dbtest.RequirePostgres(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	relaying, writing := dbtest.OpenURL(t, url), dbtest.OpenURL(t, url)
	var w worked
	q := New(relaying, Config{PollInterval: 20 * time.Millisecond, RelayPoll: time.Hour})
	probeKind(t, q, &w)
	hub := events.NewHub(relaying, slog.New(slog.DiscardHandler))
	t.Cleanup(hub.Close)
	hub.Notified = q.Wake
	_, dsn, err := db.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = hub.ListenPostgres(ctx, dsn) }()
	start(t, q)

	cat, err := writing.CreateCategory(ctx, db.NewCategory{Name: ptr("Dogs")})
	if err != nil {
		t.Fatal(err)
	}
	// Until the listener is in, a NOTIFY finds nobody: a pet every 200 ms
	// until one is relayed.
	deadline := time.Now().Add(15 * time.Second)
	for i := 0; len(w.snapshot()) == 0; i++ {
		if time.Now().After(deadline) {
			t.Fatal("no event committed by the other store was relayed within 15 s")
		}
		if _, err := writing.CreatePet(ctx, db.NewPet{Name: ptr(fmt.Sprintf("Pet %d", i)), CategoryID: &cat.ID}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond) // the pace of the writes
	}
}
