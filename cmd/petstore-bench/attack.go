package main

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"petstore/web"
)

// endpoint is one row's request mix.
type endpoint struct {
	Name string // as the table shows it
	// Page marks a browser page: asked without a key, and skipped when the
	// tree has no such page yet (404).
	Page bool
	// Stocked asks for the pets with a large stock only (orders).
	Stocked bool
	// Photos asks for the seeded photos' ids instead of pets'.
	Photos bool
	// Customer sends the customer key instead of the staff key (orders).
	Customer bool
	// Targeter builds the requests against base with key; ids are the
	// pets (or photos) to pick from at random.
	Targeter func(base, key string, ids []int64) vegeta.Targeter
}

// seeded are the rows the bench made for the requests to pick from.
type seeded struct {
	pets, stocked, photos []int64
}

// pick is the ids ep's requests choose from.
func pick(ep endpoint, s seeded) []int64 {
	switch {
	case ep.Stocked:
		return s.stocked
	case ep.Photos:
		return s.photos
	}
	return s.pets
}

// endpoints are the measured operations, in table order.
var endpoints = []endpoint{
	{Name: "GET /api/pets?limit=20", Targeter: func(base, key string, _ []int64) vegeta.Targeter {
		return vegeta.NewStaticTargeter(vegeta.Target{Method: http.MethodGet, URL: base + "/api/pets?limit=20", Header: keyHeader(key)})
	}},
	// Pages from a random place in the catalog: 10,000 queries, more than
	// the instance keeps answers for (web.Conditional), so most run the
	// list query. What a list costs when it was not just answered.
	{Name: petsListCold, Targeter: func(base, key string, ids []int64) vegeta.Targeter {
		h := keyHeader(key)
		return func(t *vegeta.Target) error {
			*t = vegeta.Target{Method: http.MethodGet, URL: base + "/api/pets?limit=20&cursor=" + web.EncodeCursor(randomID(ids)), Header: h}
			return nil
		}
	}},
	{Name: "GET /api/store/inventory/{id}", Targeter: func(base, key string, ids []int64) vegeta.Targeter {
		h := keyHeader(key)
		return func(t *vegeta.Target) error {
			*t = vegeta.Target{Method: http.MethodGet, URL: base + "/api/store/inventory/" + strconv.FormatInt(randomID(ids), 10), Header: h}
			return nil
		}
	}},
	{Name: homeBefore, Page: true, Targeter: homeTargeter},
	// A pet's page as a new visitor asks for it (no cookie): its order form
	// needs a CSRF token, so every answer also starts a session and seals
	// its cookie. The pets are the first popularPets seeded, as a shop's
	// visitors mostly open the pets its catalog and searches show first;
	// the instance keeps the pet part of about a thousand pages
	// (handlers/shop/rendered.go), so this row measures a page's frame,
	// session and compression, as GET / does. A page not kept costs its
	// query and render too, as the cursor row shows for the API.
	{Name: petPage, Page: true, Targeter: func(base, _ string, ids []int64) vegeta.Targeter {
		popular := ids[:min(len(ids), popularPets)]
		return func(t *vegeta.Target) error {
			*t = vegeta.Target{Method: http.MethodGet, URL: base + "/pets/" + strconv.FormatInt(randomID(popular), 10)}
			return nil
		}
	}},
	{Name: "POST /api/store/orders", Stocked: true, Customer: true, Targeter: func(base, key string, ids []int64) vegeta.Targeter {
		h := keyHeader(key)
		h.Set("Content-Type", "application/json")
		return func(t *vegeta.Target) error {
			body := fmt.Appendf(nil, `{"petId":%d,"quantity":1}`, randomID(ids))
			*t = vegeta.Target{Method: http.MethodPost, URL: base + "/api/store/orders", Body: body, Header: h}
			return nil
		}
	}},
	// The storefront's home after the orders row: its queries on plans
	// made before tens of thousands of orders arrived (no ANALYZE since).
	{Name: homeAfter, Page: true, Targeter: homeTargeter},
	// A photo's thumbnail as a browser without it cached asks for it: no
	// key, no If-None-Match.
	{Name: mediaThumb, Photos: true, Targeter: func(base, _ string, ids []int64) vegeta.Targeter {
		return func(t *vegeta.Target) error {
			*t = vegeta.Target{Method: http.MethodGet, URL: base + "/media/photos/" + strconv.FormatInt(randomID(ids), 10) + "/thumb.jpg"}
			return nil
		}
	}},
}

// popularPets is how many pets the pet page row asks for.
const popularPets = 500

// homeTargeter asks for the storefront's home as a new visitor does: no
// cookie (the catalog sets none: it has no form to post).
func homeTargeter(base, _ string, _ []int64) vegeta.Targeter {
	return vegeta.NewStaticTargeter(vegeta.Target{Method: http.MethodGet, URL: base + "/"})
}

// key is the key ep's requests send.
func (k apiKeys) key(ep endpoint) string {
	if ep.Customer {
		return k.customer
	}
	return k.staff
}

func keyHeader(key string) http.Header {
	h := http.Header{}
	h.Set("X-API-Key", key)
	return h
}

// randomID picks one of ids; math/rand/v2's top-level functions are safe
// for the attacker's concurrent workers.
func randomID(ids []int64) int64 { return ids[rand.IntN(len(ids))] }

// phase is what one attack measured.
type phase struct {
	Requests int
	Rate     float64 // completed requests per second of wall time
	P50, P99 time.Duration
	Non2xx   int    // answers outside 200–299, and requests that got no answer
	FirstErr string // the first failure, for the notes
}

// collector gathers an attack's results. It keeps every latency, so its
// percentiles are exact rather than estimated.
type collector struct {
	latencies []time.Duration
	non2xx    int
	firstErr  string
}

func (c *collector) add(code int, latency time.Duration, errText string) {
	c.latencies = append(c.latencies, latency)
	if code < 200 || code > 299 {
		c.non2xx++
		if c.firstErr == "" {
			c.firstErr = strconv.Itoa(code) + " " + errText
		}
	}
}

// phase summarises the results gathered over elapsed wall time.
func (c *collector) phase(elapsed time.Duration) phase {
	p := phase{Requests: len(c.latencies), Non2xx: c.non2xx, FirstErr: c.firstErr}
	if elapsed > 0 {
		p.Rate = float64(len(c.latencies)) / elapsed.Seconds()
	}
	slices.Sort(c.latencies)
	p.P50 = percentile(c.latencies, 0.50)
	p.P99 = percentile(c.latencies, 0.99)
	return p
}

// percentile is the nearest-rank q-quantile (0 < q ≤ 1) of sorted; 0 when
// sorted is empty.
func percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// attackSettings are the generator's knobs, shared by every attack.
type attackSettings struct {
	Workers  int
	Warmup   time.Duration
	Duration time.Duration // the peak phase
	Half     time.Duration // the half-peak phase; 0 skips it
	// OnPeak, when set, is called as the peak phase starts; the function
	// it returns is called when it ends (a profile of the server).
	OnPeak func() (done func())
}

// measurement is one endpoint's figures: its peak, then the half-peak phase.
type measurement struct {
	Peak     phase
	Half     phase
	HalfRate int // the rate the half phase asked for
	// HalfStall is the longest the generator itself was kept from running
	// during the half phase (see stallProbe).
	HalfStall time.Duration
}

// measure warms tr up, attacks it at the maximum rate the workers can
// drive, then at half the rate that reached.
func measure(ctx context.Context, tr vegeta.Targeter, s attackSettings) (measurement, error) {
	var m measurement
	if s.Warmup > 0 {
		attack(ctx, tr, vegeta.Rate{}, s.Warmup, s.Workers, s.Workers)
	}
	done := func() {}
	if s.OnPeak != nil {
		done = s.OnPeak()
	}
	m.Peak = attack(ctx, tr, vegeta.Rate{}, s.Duration, s.Workers, s.Workers)
	done()
	if err := ctx.Err(); err != nil {
		return m, err
	}
	if m.HalfRate = int(m.Peak.Rate / 2); s.Half > 0 && m.HalfRate > 0 {
		// A fixed rate needs spare workers: when answers slow down, vegeta
		// adds workers instead of sending late, up to this bound.
		stop := stallProbe()
		m.Half = attack(ctx, tr, vegeta.Rate{Freq: m.HalfRate, Per: time.Second}, s.Half, s.Workers, 4*s.Workers)
		m.HalfStall = stop()
	}
	return m, ctx.Err()
}

// attack runs one vegeta attack: rate.Freq 0 means as fast as workers
// allow (then maxWorkers must equal workers).
func attack(ctx context.Context, tr vegeta.Targeter, rate vegeta.Rate, d time.Duration, workers, maxWorkers int) phase {
	// A transport of our own, so the attack's connections are closed when it
	// ends instead of idling into the next measurement.
	transport := &http.Transport{MaxIdleConnsPerHost: maxWorkers, IdleConnTimeout: 30 * time.Second}
	defer transport.CloseIdleConnections()
	a := vegeta.NewAttacker(
		vegeta.Client(&http.Client{Transport: transport}),
		vegeta.Workers(uint64(workers)), vegeta.MaxWorkers(uint64(maxWorkers)),
		vegeta.Timeout(10*time.Second),
		vegeta.MaxBody(0), // read and drop the bodies: the generator's CPU is the server's too
		vegeta.Redirects(vegeta.NoFollow),
	)
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-ctx.Done():
			a.Stop()
		case <-done:
		}
	}()
	var c collector
	start := time.Now()
	for r := range a.Attack(tr, rate, d, "") {
		c.add(int(r.Code), r.Latency, r.Error)
	}
	return c.phase(time.Since(start))
}

// stallProbe measures how late the generator's own timers fire: a
// goroutine sleeps 1 ms in a loop and keeps the worst overshoot, which stop
// returns. On a quiet machine it stays around a millisecond; when other work
// takes the CPUs it grows, and every latency measured meanwhile grows with
// it whatever the server does.
func stallProbe() (stop func() time.Duration) {
	quit, done := make(chan struct{}), make(chan time.Duration)
	go func() {
		var worst time.Duration
		for {
			select {
			case <-quit:
				done <- worst
				return
			default:
			}
			t0 := time.Now()
			time.Sleep(time.Millisecond)
			worst = max(worst, time.Since(t0)-time.Millisecond)
		}
	}()
	return func() time.Duration {
		close(quit)
		return <-done
	}
}
