package ratelimit

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func TestFailoverRecovers(t *testing.T) {
	primary := &flakyStore{Store: NewMemoryStore()}
	s, logs, _ := newTestFailover(primary)
	var ping switchPing
	s.Ping = ping.Ping
	ctx, now, lim := context.Background(), time.Now(), Limits{PerMinute: 100, PerDay: 100}
	take := func() {
		t.Helper()
		if _, err := s.Take(ctx, "k", lim, 20, now); err != nil {
			t.Fatal(err)
		}
	}

	take()
	if !s.Healthy() || s.Fallbacks() != 0 || primary.calls.Load() != 1 {
		t.Fatalf("healthy primary: Healthy %v, Fallbacks %d, primary calls %d", s.Healthy(), s.Fallbacks(), primary.calls.Load())
	}

	// A refused ping is an outage: calls stop asking the primary.
	ping.fail(errRefused)
	if s.Probe(ctx) || s.Healthy() {
		t.Fatal("a failed ping left the primary up")
	}
	take()
	take()
	if s.Fallbacks() != 2 || primary.calls.Load() != 1 {
		t.Fatalf("during the outage: Fallbacks %d, primary calls %d; want 2, 1", s.Fallbacks(), primary.calls.Load())
	}
	ping.fail(nil)
	if !s.Probe(ctx) || !s.Healthy() {
		t.Fatal("a ping that answered did not end the outage")
	}
	take()
	if primary.calls.Load() != 2 {
		t.Fatalf("after the outage the primary was not asked (%d calls)", primary.calls.Load())
	}

	// A refused call is an outage too; Run's probes end it by themselves.
	primary.fail(errRefused)
	take()
	if s.Healthy() {
		t.Fatal("a refused call left the primary up")
	}
	primary.fail(nil)
	s.ProbeInterval = 10 * time.Millisecond
	runProbes(t, s)
	for deadline := time.Now().Add(5 * time.Second); !s.Healthy(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("Run did not bring the primary back within 5s")
		}
	}
	take()
	if s.Fallbacks() != 3 || primary.calls.Load() != 4 {
		t.Errorf("after the second outage: Fallbacks %d, primary calls %d; want 3, 4", s.Fallbacks(), primary.calls.Load())
	}
	if w, i := strings.Count(logs.String(), "unreachable"), strings.Count(logs.String(), "answers again"); w != 2 || i != 2 {
		t.Errorf("%d warnings and %d notices for two outages, want 2 and 2:\n%s", w, i, logs.String())
	}
}

func TestFailoverSilence(t *testing.T) {
	// Pings go unanswered, as on a machine too busy to read the answer in
	// time or with a Redis that hangs: that is an outage only once the
	// primary has answered nothing, ping or call, for DownAfter while this
	// process ran on time.
	primary := &flakyStore{Store: NewMemoryStore()}
	s, logs, _ := newTestFailover(primary)
	var ping switchPing
	s.Ping = ping.Ping
	s.DownAfter = 300 * time.Millisecond
	ctx := context.Background()
	ping.fail(fmt.Errorf("ping: %w", context.DeadlineExceeded))
	answered := time.Now()
	if _, err := s.Take(ctx, "k", Limits{PerMinute: 100, PerDay: 100}, 20, time.Now()); err != nil {
		t.Fatal(err)
	}
	if s.Probe(ctx) || !s.Healthy() {
		t.Fatalf("an unanswered ping right after an answered call: Healthy %v, want true", s.Healthy())
	}
	time.Sleep(time.Until(answered.Add(s.DownAfter)))
	// This process ran late a moment ago (Run saw a pause): the silence
	// counts from then.
	s.lastPause.Store(time.Now().UnixNano())
	if s.Probe(ctx) || !s.Healthy() {
		t.Fatalf("an unanswered ping right after a pause of this process: Healthy %v, want true", s.Healthy())
	}
	time.Sleep(s.DownAfter)
	if s.Probe(ctx) || s.Healthy() {
		t.Fatalf("no answer for %s: Healthy %v, want false", s.DownAfter, s.Healthy())
	}
	if !strings.Contains(logs.String(), "no answer for") {
		t.Errorf("the warning does not say the primary went silent:\n%s", logs.String())
	}
}

func TestFailoverProbeBeganBeforeOutage(t *testing.T) {
	// A ping answered just before Redis went away must not end the
	// outage a call found meanwhile.
	primary := &flakyStore{Store: NewMemoryStore()}
	s, _, _ := newTestFailover(primary)
	entered, answer := make(chan struct{}), make(chan error)
	s.Ping = func(context.Context) error {
		entered <- struct{}{}
		return <-answer
	}
	probed := make(chan bool)
	go func() { probed <- s.Probe(context.Background()) }()
	<-entered
	primary.fail(errRefused)
	if _, err := s.Take(context.Background(), "k", Limits{PerMinute: 1, PerDay: 1}, 20, time.Now()); err != nil {
		t.Fatal(err)
	}
	answer <- nil
	<-probed
	if s.Healthy() {
		t.Error("a ping that began before the outage ended it")
	}
}

func TestFailoverMaxWait(t *testing.T) {
	// The primary holds the call, yet its probe answers: the call alone is
	// answered by the fallback at MaxWait, and the primary stays up.
	primary := &flakyStore{Store: NewMemoryStore()}
	primary.hang.Store(true)
	s, logs, counted := newTestFailover(primary)
	s.Ping = func(context.Context) error { return nil }
	s.MaxWait = 100 * time.Millisecond
	lim := Limits{PerMinute: 1, PerDay: 1}
	began := time.Now()
	r, err := s.Take(context.Background(), "k", lim, 20, time.Now())
	if err != nil || !r.Allowed {
		t.Fatalf("Take = %+v, %v; want allowed by the fallback", r, err)
	}
	if took := time.Since(began); took > time.Second {
		t.Errorf("the call was held %s, beyond MaxWait", took)
	}
	// Waiting for a pooled connection is not an outage either.
	primary.hang.Store(false)
	primary.fail(redis.ErrPoolTimeout)
	if _, err := s.Take(context.Background(), "k", lim, 20, time.Now()); err != nil {
		t.Fatal(err)
	}
	if !s.Healthy() {
		t.Error("a call that waited too long marked the primary down")
	}
	if got := counted.Load(); got != 2 {
		t.Errorf("OnFallback called %d times, want 2", got)
	}
	if got := strings.Count(logs.String(), "level=WARN"); got != 1 {
		t.Errorf("%d warnings, want one for both calls:\n%s", got, logs.String())
	}
	if strings.Contains(logs.String(), "unreachable") {
		t.Errorf("a slow Redis was logged as unreachable:\n%s", logs.String())
	}
}

func TestFailoverCallerCancelled(t *testing.T) {
	primary := &flakyStore{Store: NewMemoryStore()}
	s, _, _ := newTestFailover(primary)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Take(ctx, "k", Limits{PerMinute: 1, PerDay: 1}, 20, time.Now()); err == nil {
		t.Error("Take with a cancelled context succeeded")
	}
	if !s.Healthy() || s.Fallbacks() != 0 {
		t.Errorf("a caller's cancellation marked the primary down: Healthy %v, Fallbacks %d", s.Healthy(), s.Fallbacks())
	}
}
