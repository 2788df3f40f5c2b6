package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"petstore/db"
	"petstore/db/dbtest"
	"petstore/web/queue"
	"petstore/web/webhooks"
)

// hookReceiver is a webhook receiver that de-duplicates by webhook-id, as
// SPEC §15 tells receivers to, and counts how often each id came.
type hookReceiver struct {
	URL string
	mu  sync.Mutex
	ids map[string]int
	// order lists the ids in the order they first came.
	order []string
	// arrived is signalled (without blocking) on every request.
	arrived chan string
	// hold, when set, is waited on before answering a request.
	hold func(id string)
}

func newHookReceiver(t *testing.T) *hookReceiver {
	t.Helper()
	r := &hookReceiver{ids: map[string]int{}, arrived: make(chan string, 1024)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		_, _ = io.Copy(io.Discard, req.Body)
		id := req.Header.Get("webhook-id")
		r.mu.Lock()
		if r.ids[id] == 0 {
			r.order = append(r.order, id)
		}
		r.ids[id]++
		hold := r.hold
		r.mu.Unlock()
		select {
		case r.arrived <- id:
		default:
		}
		if hold != nil {
			hold(id)
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	r.URL = srv.URL + "/hook"
	return r
}

// counts returns how many distinct ids came and those that came more than
// once.
func (r *hookReceiver) counts() (distinct int, twice []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, n := range r.ids {
		if n > 1 {
			twice = append(twice, fmt.Sprintf("%s×%d", id, n))
		}
	}
	return len(r.ids), twice
}

func TestWebhookAllowPrivateConfig(t *testing.T) {
	t.Parallel() // the command line and configuration only: no shared state, no timing
	for v, want := range map[string]bool{"": false, "true": true, "false": false, "1": true} {
		cfg, err := LoadConfig(env(map[string]string{"PETSTORE_WEBHOOK_ALLOW_PRIVATE": v}))
		if err != nil || cfg.WebhookAllowPrivate != want {
			t.Errorf("%q: %v, %v; want %v", v, cfg, err, want)
		}
	}
	_, err := LoadConfig(env(map[string]string{"PETSTORE_WEBHOOK_ALLOW_PRIVATE": "yes please"}))
	if err == nil || !strings.HasPrefix(err.Error(), "PETSTORE_WEBHOOK_ALLOW_PRIVATE: ") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("error = %v, want one line naming the variable", err)
	}
}

// TestMultiInstanceWebhooksEachOnce: two instances on one PostgreSQL, 200
// orders placed through both: the receiver gets every order.created once,
// none twice, and every delivery succeeded at its first attempt.
func TestMultiInstanceWebhooksEachOnce(t *testing.T) {
	a, b := startPair(t, map[string]string{"PETSTORE_WEBHOOK_ALLOW_PRIVATE": "true"})
	c := newClient(t)
	staff, _ := issueKey(t, a.srv.Store, "staff", db.RoleStaff, 1_000_000, 10_000_000)
	rec := newHookReceiver(t)
	var hook db.Webhook
	call(c, "POST", a.base+"/api/webhooks", staff, map[string]any{"url": rec.URL, "events": []string{"order.created"}}).must(t, 201, &hook)
	pet := seedPet(t, c, b, staff, 1000)

	const orders = 200
	var wg sync.WaitGroup
	errs := make(chan string, orders)
	for i := range orders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := []*node{a, b}[i%2]
			ans := call(c, "POST", n.base+"/api/store/orders", staff, map[string]any{"petId": pet.ID, "quantity": 1})
			if ans.err != nil || ans.status != 201 {
				errs <- fmt.Sprintf("order %d on %s: %d %v %s", i, n.name, ans.status, ans.err, ans.body)
			}
		}()
		if i%8 == 7 {
			wg.Wait() // eight at a time
		}
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}

	deadline := time.Now().Add(60 * time.Second)
	for {
		if n, _ := rec.counts(); n >= orders || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Time for a second copy of any delivery to show up.
	time.Sleep(time.Second)
	distinct, twice := rec.counts()
	if distinct != orders || len(twice) > 0 {
		t.Fatalf("receiver got %d distinct deliveries (want %d), these more than once: %v", distinct, orders, twice)
	}
	ctx := context.Background()
	var succeeded, attempts int
	err := a.srv.Store.DB().GetContext(ctx, &succeeded, `SELECT count(*) FROM webhook_deliveries WHERE status = 'succeeded'`)
	if err == nil {
		err = a.srv.Store.DB().GetContext(ctx, &attempts, `SELECT count(*) FROM webhook_attempts`)
	}
	if err != nil || succeeded != orders || attempts != orders {
		t.Fatalf("%d deliveries succeeded with %d attempts (%v), want %d and %d", succeeded, attempts, err, orders, orders)
	}
	perInstance := map[string]float64{}
	for _, n := range []*node{a, b} {
		perInstance[n.name] = metric(t, c, n, `petstore_webhook_deliveries_total{outcome="succeeded"}`)
	}
	t.Logf("deliveries made per instance: %v", perInstance)
	if perInstance["A"]+perInstance["B"] != orders {
		t.Fatalf("instances counted %v deliveries, want %d in all", perInstance, orders)
	}
}

// TestWebhookRefusesPrivateAddress: without PETSTORE_WEBHOOK_ALLOW_PRIVATE
// a receiver on 127.0.0.1 gets nothing; the attempt says refused_address.
func TestWebhookRefusesPrivateAddress(t *testing.T) {
	cfg := testConfig(t, map[string]string{"DATABASE_URL": dbtest.SQLiteURL(t), "SESSION_KEYS": testSessionKey})
	n := startNode(t, "A", cfg, nil, nil)
	c := newClient(t)
	staff, _ := issueKey(t, n.srv.Store, "staff", db.RoleStaff, 1000, 100000)
	rec := newHookReceiver(t)
	var hook db.Webhook
	call(c, "POST", n.base+"/api/webhooks", staff, map[string]any{"url": rec.URL, "events": []string{"*"}}).must(t, 201, &hook)
	var d db.WebhookDelivery
	path := fmt.Sprintf("%s/api/webhooks/%d", n.base, hook.ID)
	call(c, "POST", path+"/test", staff, nil).must(t, 202, &d)
	deadline := time.Now().Add(20 * time.Second)
	for len(d.Attempts) == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		var ds []db.WebhookDelivery
		call(c, "GET", path+"/deliveries", staff, nil).must(t, 200, &ds)
		d = ds[0]
	}
	if len(d.Attempts) == 0 || d.Attempts[0].Error == nil || *d.Attempts[0].Error != db.AttemptRefusedAddress || d.Attempts[0].HTTPStatus != nil {
		t.Fatalf("delivery = %+v, want an attempt refused_address", d)
	}
	if got, _ := rec.counts(); got != 0 {
		t.Fatalf("the receiver got %d deliveries", got)
	}
}

// TestWebhookSurvivesKill: SIGKILL of the real binary while the receiver
// holds an attempt's answer; after a restart the delivery is made again,
// with the same webhook-id, within 30 s.
func TestWebhookSurvivesKill(t *testing.T) {
	t.Parallel() // mostly waiting (on a restart, a rescue, a job): beside the browser tests
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildBinary(t)
	dbtest.EachURL(t, func(t *testing.T, dbURL string) {
		// Most of each run is River noticing the killed attempt (about
		// 10 s): the two databases wait side by side.
		t.Parallel()
		if strings.HasPrefix(dbURL, "sqlite:") {
			dbURL = "sqlite:" + filepath.Join(t.TempDir(), "store.db")
		}
		// The binary runs on the real clock; so does the store opened here.
		ctx := context.Background()
		store, err := db.Open(ctx, dbURL, systemClock)
		if err != nil {
			t.Fatal(err)
		}
		defer store.Close()
		store.Secrets = dbtest.Keyring() // the process below seals and opens with dbtest.SecretKey
		if err := store.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		rec := newHookReceiver(t)
		release := make(chan struct{})
		held := make(chan struct{}, 1)
		var once sync.Once
		rec.hold = func(string) {
			first := false
			once.Do(func() { first = true })
			if first {
				held <- struct{}{}
				<-release
			}
		}
		defer close(release)
		// Subscribed to what the first start's seeding does not do: the
		// test event alone comes.
		url, events := rec.URL, []string{db.EventOrderCancelled}
		hook, err := store.CreateWebhook(ctx, db.NewWebhook{URL: &url, Events: &events})
		if err != nil {
			t.Fatal(err)
		}

		addr := freeAddr(t)
		start := func() *serveProcess {
			return startServeProcess(t, bin, dbURL, addr)
		}
		p := start()
		// The test event is queued from this process, as from another
		// instance: its job, inserted by a queue never started here, is
		// worked by the server's.
		deliveries, err := webhooks.New(queue.New(store, queue.Config{}), webhooks.Config{Store: store, Now: systemClock})
		if err != nil {
			t.Fatal(err)
		}
		d, err := deliveries.Test(ctx, hook.ID)
		if err != nil {
			t.Fatal(err)
		}
		select {
		case <-held:
		case <-time.After(30 * time.Second):
			t.Fatalf("the first attempt never came\n%s", p.logs())
		}
		p.kill()
		restarted := time.Now()
		p = start()
		defer p.stop(t)
		for {
			if _, twice := rec.counts(); len(twice) > 0 {
				break
			}
			if time.Since(restarted) > 30*time.Second {
				t.Fatalf("not delivered again within 30 s of the restart\n%s", p.logs())
			}
			time.Sleep(50 * time.Millisecond)
		}
		again := time.Since(restarted)
		t.Logf("delivered again %v after the restart", again.Round(100*time.Millisecond))
		rec.mu.Lock()
		ids := append([]string(nil), rec.order...)
		rec.mu.Unlock()
		if len(ids) != 1 || ids[0] != d.MessageID() {
			t.Fatalf("webhook-ids %v, want %s alone", ids, d.MessageID())
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			got, err := store.FindWebhookDelivery(ctx, hook.ID, d.ID)
			if err == nil && got.Status == db.DeliverySucceeded {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("delivery = %+v, %v; want succeeded", got, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
}

// serveProcess is `petstore serve` running as a subprocess.
type serveProcess struct {
	cmd    *exec.Cmd
	stderr *syncBuffer
	exited chan error
}

// startServeProcess runs bin serve on dbURL at addr, with private webhook
// addresses allowed and the variables env (KEY=value) added, and waits
// until it is ready.
func startServeProcess(t *testing.T, bin, dbURL, addr string, env ...string) *serveProcess {
	t.Helper()
	cmd := exec.Command(bin, "serve")
	cmd.Env = append(os.Environ(), "DATABASE_URL="+dbURL, "PETSTORE_ADDR="+addr, "SESSION_KEYS="+testSessionKey,
		"PETSTORE_SECRET_KEYS="+dbtest.SecretKey(), "REDIS_URL=", "LOG_LEVEL=warn", "PETSTORE_WEBHOOK_ALLOW_PRIVATE=true")
	cmd.Env = append(cmd.Env, env...)
	p := &serveProcess{cmd: cmd, stderr: &syncBuffer{}, exited: make(chan error, 1)}
	cmd.Stdout, cmd.Stderr = io.Discard, p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.exited <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	waitReady(t, "http://"+addr)
	return p
}

// kill ends the process with SIGKILL: nothing of it runs on.
func (p *serveProcess) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.exited
}

// stop ends the process with SIGTERM and waits for it.
func (p *serveProcess) stop(t *testing.T) {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(20 * time.Second):
		t.Errorf("petstore serve did not stop within 20 s of SIGTERM")
	}
}

func (p *serveProcess) logs() string { return lastLines(p.stderr.String(), 40) }
