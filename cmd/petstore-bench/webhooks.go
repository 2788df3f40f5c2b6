package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"sync"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"petstore/db"
)

// Rows of the webhooks (SPEC §15).
const (
	webhookOrders  = "POST /api/store/orders, 1 webhook on order.created"
	webhookOrders5 = "POST /api/store/orders, 5 webhooks on order.created"
	webhookDrain   = "webhooks: 10,000 queued deliveries drained (p50/p99: commit to receipt at half that rate)"
	// webhookBacklog is how many events wait when the drain starts.
	webhookBacklog = 10_000
)

// Targets of the webhooks issues: orders with one endpoint subscribed at
// 85% of the rate without, with five at 75%, and an event's commit to its
// receipt within 250 ms at p99 while the queue drains at half its rate.
const (
	targetWebhookShare  = 0.85
	targetWebhookShare5 = 0.75
	targetReceiptP99    = 250 * time.Millisecond
)

// targetDrain is the delivery rate each database must drain a backlog at.
var targetDrain = map[string]float64{dbSQLite: 300, dbPostgres: 500}

// hookSink is the local receiver of the bench's deliveries: it answers 204
// at once and notes when each event first arrived and how many came
// twice.
type hookSink struct {
	url      string
	srv      *http.Server
	mu       sync.Mutex
	arrived  map[int64]time.Time // event id → first receipt
	ids      map[string]bool     // webhook-ids seen
	repeated int
	last     time.Time
}

func startSink() (*hookSink, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &hookSink{url: "http://" + ln.Addr().String() + "/hook"}
	s.reset()
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

func (s *hookSink) serve(w http.ResponseWriter, r *http.Request) {
	at := time.Now()
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	var ev struct {
		ID int64 `json:"id"`
	}
	_ = json.Unmarshal(body, &ev)
	s.mu.Lock()
	if id := r.Header.Get("webhook-id"); s.ids[id] {
		s.repeated++
	} else {
		s.ids[id] = true
		if _, ok := s.arrived[ev.ID]; !ok {
			s.arrived[ev.ID] = at
		}
		s.last = at
	}
	s.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// reset forgets what arrived.
func (s *hookSink) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.arrived, s.ids, s.repeated, s.last = map[int64]time.Time{}, map[string]bool{}, 0, time.Time{}
}

// count is how many distinct deliveries arrived, how many came again, and
// when the last new one came.
func (s *hookSink) count() (n, repeated int, last time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.ids), s.repeated, s.last
}

// countAfter is how many events after the event id first arrived, and
// when the last of them did: the backlog's alone, whatever else arrives.
func (s *hookSink) countAfter(id int64) (n int, last time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for ev, at := range s.arrived {
		if ev > id {
			n++
			if at.After(last) {
				last = at
			}
		}
	}
	return n, last
}

func (s *hookSink) receivedAt(eventID int64) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.arrived[eventID]
	return t, ok
}

// benchWebhooks measures what webhooks cost on one database, with servers
// of its own: orders with one endpoint subscribed to order.created, then
// with five (the rows to compare with the plain orders row), then the rate
// at which a backlog of webhookBacklog queued deliveries drains to a local
// receiver (one endpoint), then the time from an event's commit to its
// receipt at half that rate.
func benchWebhooks(ctx context.Context, database, bin, dir, url string, keys apiKeys, stocked []int64, o options, rep *report, logf func(string, ...any)) error {
	sink, err := startSink()
	if err != nil {
		return err
	}
	defer sink.srv.Close()
	store, err := db.Open(ctx, url, wallClock)
	if err != nil {
		return err
	}
	defer store.Close()
	srv, err := startServer(ctx, bin, dir, url, false)
	if err != nil {
		return err
	}
	api := newAPIClient(srv.base, keys.staff, 4)
	if _, err := api.do(ctx, http.MethodPost, "/api/webhooks", map[string]any{"url": sink.url, "events": []string{db.EventOrderCreated}},
		http.StatusCreated, nil); err != nil {
		srv.stop()
		return err
	}
	logf("%s: %s", database, webhookOrders)
	m, err := measure(ctx, ordersTargeter(srv.base, keys.customer, stocked), o.attackSettings)
	if err != nil {
		srv.stop()
		return err
	}
	rep.Rows = append(rep.Rows, row{Endpoint: webhookOrders, Database: database, Rate: m.Peak.Rate, P50: m.Peak.P50, P99: m.Peak.P99,
		HalfP99: m.Half.P99, Errors: m.Peak.Non2xx + m.Half.Non2xx})
	if err := drained(ctx, store, database, webhookOrders, rep); err != nil {
		srv.stop()
		return err
	}

	// Four more endpoints on the same receiver (each its own address).
	var more []int64
	for i := 2; i <= 5; i++ {
		var w struct {
			ID int64 `json:"id"`
		}
		if _, err := api.do(ctx, http.MethodPost, "/api/webhooks", map[string]any{"url": fmt.Sprintf("%s/%d", sink.url, i), "events": []string{db.EventOrderCreated}},
			http.StatusCreated, &w); err != nil {
			srv.stop()
			return err
		}
		more = append(more, w.ID)
	}
	logf("%s: %s", database, webhookOrders5)
	if m, err = measure(ctx, ordersTargeter(srv.base, keys.customer, stocked), o.attackSettings); err != nil {
		srv.stop()
		return err
	}
	rep.Rows = append(rep.Rows, row{Endpoint: webhookOrders5, Database: database, Rate: m.Peak.Rate, P50: m.Peak.P50, P99: m.Peak.P99,
		HalfP99: m.Half.P99, Errors: m.Peak.Non2xx + m.Half.Non2xx})
	err = drained(ctx, store, database, webhookOrders5, rep)
	for _, id := range more {
		if err == nil {
			_, err = api.do(ctx, http.MethodDelete, fmt.Sprintf("/api/webhooks/%d", id), nil, http.StatusNoContent, nil)
		}
	}
	if err == nil {
		// The drain row starts from an empty queue: deliveries the rows
		// above left (thousands, with five endpoints on PostgreSQL) would
		// otherwise be worked among the backlog's and delay its receipts.
		err = emptyQueue(ctx, store, database, rep, logf)
	}
	srv.stop()
	if err != nil {
		return err
	}

	var before int64
	if err := store.DB().GetContext(ctx, &before, `SELECT COALESCE(MAX(id), 0) FROM events`); err != nil {
		return err
	}
	logf("%s: queueing %d events with the server stopped", database, webhookBacklog)
	if err := queueBacklog(ctx, store, webhookBacklog); err != nil {
		return err
	}
	sink.reset()
	if srv, err = startServer(ctx, bin, dir, url, false); err != nil {
		return err
	}
	defer srv.stop()
	began := time.Now()
	deadline := began.Add(5 * time.Minute)
	for {
		n, last := sink.countAfter(before)
		if n >= webhookBacklog || time.Now().After(deadline) {
			rate := float64(n) / last.Sub(began).Seconds()
			logf("%s: drained %d deliveries in %s: %s/s", database, n, last.Sub(began).Round(time.Millisecond), thousands(rate))
			drain := row{Endpoint: webhookDrain, Database: database, Rate: rate, Errors: webhookBacklog - n}
			return commitToReceipt(ctx, store, sink, &drain, max(o.Half, 4*time.Second), rep, logf)
		}
		if err := sleep(ctx, 20*time.Millisecond); err != nil {
			return err
		}
	}
}

// commitToReceipt writes events at half the drain's rate for d, one
// transaction each, and sets the drain row's p50 and p99 to the time from
// each commit to its receipt; it adds the row to rep.
func commitToReceipt(ctx context.Context, store *db.Store, sink *hookSink, drain *row, d time.Duration, rep *report, logf func(string, ...any)) error {
	rate := max(int(drain.Rate/2), 1)
	logf("%s: commit to receipt at %d events/s for %s", drain.Database, rate, d)
	type committed struct {
		id int64
		at time.Time
	}
	var (
		mu   sync.Mutex
		done []committed
		wg   sync.WaitGroup
		fail error
	)
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	stop := time.After(d)
	q := `INSERT INTO events (type, data, created_at) VALUES ($1, '{}', $2) RETURNING id`
	sem := make(chan struct{}, 16) // a slow insert does not delay the next ones' start
loop:
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-stop:
			break loop
		case <-tick.C:
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			var id int64
			err := store.DB().GetContext(ctx, &id, q, db.EventOrderCreated, wallClock())
			at := time.Now()
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				fail = err
				return
			}
			done = append(done, committed{id, at})
		}()
	}
	wg.Wait()
	if fail != nil {
		return fmt.Errorf("write event: %w", fail)
	}
	var lat []time.Duration
	deadline := time.Now().Add(30 * time.Second)
	for _, c := range done {
		for {
			if at, ok := sink.receivedAt(c.id); ok {
				lat = append(lat, at.Sub(c.at))
				break
			}
			if time.Now().After(deadline) {
				drain.Errors++
				break
			}
			if err := sleep(ctx, 10*time.Millisecond); err != nil {
				return err
			}
		}
	}
	_, repeated, _ := sink.count()
	drain.Errors += repeated
	slices.Sort(lat)
	if len(lat) > 0 {
		drain.P50, drain.P99 = lat[len(lat)/2], lat[min(len(lat)-1, len(lat)*99/100)]
	}
	rep.Rows = append(rep.Rows, *drain)
	rep.Notes = append(rep.Notes, fmt.Sprintf("%s: webhooks: %d events at %d/s, commit to receipt p50 %s, p99 %s; %d deliveries came twice",
		drain.Database, len(done), rate, ms(drain.P50), ms(drain.P99), repeated))
	return nil
}

// queueBacklog writes n order.created events in one statement: the
// server's relay (web/queue) makes a delivery and its job of each once it
// starts.
func queueBacklog(ctx context.Context, store *db.Store, n int) error {
	_, err := store.DB().ExecContext(ctx, `INSERT INTO events (type, data, created_at)
		WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < $1)
		SELECT $2, '{"id":' || i || '}', $3 FROM g`, n, db.EventOrderCreated, wallClock())
	if err != nil {
		return fmt.Errorf("queue %d events: %w", n, err)
	}
	return nil
}

// drained waits for the deliveries of the row named to be made, noting
// in rep how many were still pending after 3 minutes.
func drained(ctx context.Context, store *db.Store, database, name string, rep *report) error {
	pending, err := waitDrained(ctx, store, 3*time.Minute)
	if err == nil && pending > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%s: %d deliveries of the row %q were still pending after 3 minutes", database, pending, name))
	}
	return err
}

// emptyQueue waits, up to 10 minutes, until no delivery is pending,
// noting in rep how many still were.
func emptyQueue(ctx context.Context, store *db.Store, database string, rep *report, logf func(string, ...any)) error {
	t0 := time.Now()
	pending, err := waitDrained(ctx, store, 10*time.Minute)
	if err != nil {
		return err
	}
	logf("%s: queue emptied before the drain row in %s (%d deliveries still pending)", database, time.Since(t0).Round(time.Second), pending)
	if pending > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%s: %d deliveries of the rows above were still pending when the drain row started", database, pending))
	}
	return nil
}

// waitDrained waits until no delivery is pending, or for at most d, and
// returns how many still are.
func waitDrained(ctx context.Context, store *db.Store, d time.Duration) (int64, error) {
	deadline := time.Now().Add(d)
	for {
		n, err := store.CountPendingWebhookDeliveries(ctx)
		if err != nil || n == 0 || time.Now().After(deadline) {
			return n, err
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return n, err
		}
	}
}

// ordersTargeter is the requests of the POST orders row.
func ordersTargeter(base, key string, ids []int64) vegeta.Targeter {
	i := slices.IndexFunc(endpoints, func(ep endpoint) bool { return ep.Name == placeOrders })
	return endpoints[i].Targeter(base, key, ids)
}

// benchWebhooksOnly is the -webhooks mode: on a fresh database, the plain
// POST orders row, then benchWebhooks, and nothing else.
func benchWebhooksOnly(ctx context.Context, database, bin, tmp string, o options, rep *report, logf func(string, ...any)) error {
	dir := filepath.Join(tmp, database)
	url, err := freshDatabase(ctx, database, dir, o)
	if err != nil {
		return err
	}
	keys, err := createKeys(ctx, bin, dir, serverEnv(url, ""))
	if err != nil {
		return err
	}
	srv, err := startServer(ctx, bin, dir, url, false)
	if err != nil {
		return err
	}
	_, stocked, err := seedPets(ctx, newAPIClient(srv.base, keys.staff, 4), url, o.Pets)
	if err == nil {
		logf("%s: %s", database, placeOrders)
		var m measurement
		if m, err = measure(ctx, ordersTargeter(srv.base, keys.customer, stocked), o.attackSettings); err == nil {
			rep.Rows = append(rep.Rows, row{Endpoint: placeOrders, Database: database, Rate: m.Peak.Rate, P50: m.Peak.P50, P99: m.Peak.P99,
				HalfP99: m.Half.P99, Errors: m.Peak.Non2xx + m.Half.Non2xx})
		}
	}
	srv.stop()
	if err != nil {
		return err
	}
	return benchWebhooks(ctx, database, bin, dir, url, keys, stocked, o, rep, logf)
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// webhookTargets judges the webhook goals from the rows.
func (r *report) webhookTargets() []target {
	var ts []target
	for _, d := range []string{dbSQLite, dbPostgres} {
		for _, w := range []struct {
			n     int
			name  string
			share float64
		}{{1, webhookOrders, targetWebhookShare}, {5, webhookOrders5, targetWebhookShare5}} {
			goal := fmt.Sprintf("orders with %d webhook%s ≥ %.0f%% of orders without on %s", w.n, map[bool]string{true: "s"}[w.n > 1], w.share*100, d)
			with, without := r.find(w.name, d), r.find(placeOrders, d)
			if with == nil || without == nil || without.Rate == 0 {
				ts = append(ts, target{goal, false, "not measured"})
				continue
			}
			share := with.Rate / without.Rate
			ts = append(ts, target{goal, share >= w.share, fmt.Sprintf("%.0f%% (%s of %s/s)", 100*share, thousands(with.Rate), thousands(without.Rate))})
		}
	}
	for _, d := range []string{dbSQLite, dbPostgres} {
		goal := fmt.Sprintf("webhook backlog drains at ≥ %s/s on %s", thousands(targetDrain[d]), d)
		drain := r.find(webhookDrain, d)
		if drain == nil {
			ts = append(ts, target{goal, false, "not measured"})
			continue
		}
		ts = append(ts, target{goal, drain.Rate >= targetDrain[d] && drain.Errors == 0,
			fmt.Sprintf("%s/s, %d lost or repeated", thousands(drain.Rate), drain.Errors)})
	}
	for _, d := range []string{dbSQLite, dbPostgres} {
		goal := fmt.Sprintf("commit to receipt p99 ≤ %d ms at half the drain rate on %s", targetReceiptP99.Milliseconds(), d)
		drain := r.find(webhookDrain, d)
		if drain == nil || drain.P99 == 0 {
			ts = append(ts, target{goal, false, "not measured"})
			continue
		}
		ts = append(ts, target{goal, drain.P99 <= targetReceiptP99, fmt.Sprintf("p50 %s, p99 %s", ms(drain.P50), ms(drain.P99))})
	}
	return ts
}
