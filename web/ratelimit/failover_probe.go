package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"
)

// Healthy reports whether the primary is up: no outage found, or the last
// one over. For /readyz.
func (s *FailoverStore) Healthy() bool {
	_, up := s.state()
	return up
}

// state returns whether the primary is up and the channel that closes when
// it goes down.
func (s *FailoverStore) state() (outage <-chan struct{}, up bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.outage, !s.down
}

// Probe pings the primary once and records the answer: a ping that answers
// ends an outage; one refused or cut starts one; one that gets no answer
// within ProbeTimeout (or fails otherwise) starts one if the primary has
// answered nothing for DownAfter (since the store was made, if it never
// did). An outage releases the calls waiting on the primary at once.
// Probe reports whether the primary answered. Call it at start, so that a
// Redis that refuses connections is known (and logged) before the first
// request; without Ping it changes nothing.
func (s *FailoverStore) Probe(ctx context.Context) bool {
	if s.Ping == nil {
		return s.Healthy()
	}
	s.mu.Lock()
	outages := s.outages
	s.mu.Unlock()
	err := s.ping(ctx)
	switch {
	case err == nil:
		s.answered()
		s.markUp(outages)
		return true
	case ctx.Err() != nil:
		// Shutting down: not the primary's fault.
	case unreachable(err) && !timedOut(err):
		s.markDown(err)
	default:
		// No answer in time, or a dial that timed out: on a starved
		// machine that happens to a Redis that is there. Only silence
		// for DownAfter makes it an outage.
		downAfter := s.DownAfter
		if downAfter <= 0 {
			downAfter = DefaultDownAfter
		}
		// Silence counts from the last answer, or from the last time
		// this process was seen running late, whichever is later: a
		// process starved of CPU does not hear answers that came.
		since := max(s.lastAnswer.Load(), s.lastPause.Load())
		if beat := s.lastBeat.Load(); beat != 0 && time.Since(time.Unix(0, beat)) > pauseTick+pauseTolerance {
			since = time.Now().UnixNano() // a pause right now: the watcher is late too
		}
		if silent := time.Since(time.Unix(0, since)); silent >= downAfter {
			s.markDown(fmt.Errorf("no answer for %s: %w", silent.Round(time.Millisecond), err))
		}
	}
	return false
}

// answered records that the primary answered just now.
func (s *FailoverStore) answered() { s.lastAnswer.Store(time.Now().UnixNano()) }

// How Run tells that this process itself runs late (a machine so busy
// that its goroutines wait seconds for a CPU): a tick of pauseTick that
// comes more than pauseTolerance late is a pause. Failure detectors that
// must not mistake their own stalls for a peer's (JVM pause monitors,
// phi-accrual detectors) do the same.
const (
	pauseTick      = 100 * time.Millisecond
	pauseTolerance = 250 * time.Millisecond
)

// Run probes the primary every ProbeInterval until ctx ends, and watches
// for pauses of this process (see Probe).
func (s *FailoverStore) Run(ctx context.Context) {
	if s.Ping == nil {
		return
	}
	watching := make(chan struct{})
	go func() {
		defer close(watching)
		s.watchPauses(ctx)
	}()
	defer func() { <-watching }()
	interval := s.ProbeInterval
	if interval <= 0 {
		interval = DefaultProbeInterval
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			s.Probe(ctx)
		}
	}
}

// watchPauses records each tick, and when one came late, until ctx ends.
func (s *FailoverStore) watchPauses(ctx context.Context) {
	tick := time.NewTicker(pauseTick)
	defer tick.Stop()
	last := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			now := time.Now()
			if now.Sub(last) > pauseTick+pauseTolerance {
				s.lastPause.Store(now.UnixNano())
			}
			s.lastBeat.Store(now.UnixNano())
			last = now
		}
	}
}

// ping runs Ping in its own goroutine, so that ProbeTimeout holds even if
// the client ignores its context.
func (s *FailoverStore) ping(ctx context.Context) error {
	timeout := s.ProbeTimeout
	if timeout <= 0 {
		timeout = DefaultProbeTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	errc := make(chan error, 1) // buffered: a late answer must not block
	go func() { errc <- s.Ping(ctx) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		return fmt.Errorf("ping: %w", context.DeadlineExceeded)
	}
}

// markDown starts an outage, unless one is on: calls waiting on the
// primary are released and the warning is logged, once per outage.
func (s *FailoverStore) markDown(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down {
		return
	}
	s.down = true
	s.outages++
	close(s.outage)
	s.logger.Warn("rate-limit counters: Redis unreachable, counting in process until it answers; check REDIS_URL",
		slog.Any("err", err))
}

// markUp ends the outage after a ping that answered, unless that ping
// began before the outage did: it would tell of a Redis that has gone
// since.
func (s *FailoverStore) markUp(outagesBeforePing int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.down || s.outages != outagesBeforePing {
		return
	}
	s.down = false
	s.outage = make(chan struct{})
	s.logger.Info("rate-limit counters: Redis answers again, counting shared (REDIS_URL)")
}

// timedOut reports whether err is a deadline that passed, the client's
// (net.Error) or the probe's own.
func timedOut(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}
