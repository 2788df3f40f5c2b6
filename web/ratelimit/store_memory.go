package ratelimit

import (
	"context"
	"hash/maphash"
	"sync"
	"time"
)

// memoryShards spreads subjects over independent locks so that parallel
// requests for different subjects rarely wait on each other.
const memoryShards = 64

// MemoryStore is the in-process Store: exact within one process, useless
// across several (use Redis for that). Entries nobody has touched for an
// hour and whose day is over are dropped, at most once a minute per shard.
type MemoryStore struct {
	seed   maphash.Seed
	shards [memoryShards]memoryShard
}

type memoryShard struct {
	mu       sync.Mutex
	subjects map[string]*memoryEntry
	swept    int64 // minute id of the last sweep
}

// memoryEntry holds one subject's counters. Each bucket remembers which
// window it counts, so a stale bucket reads as zero without any timer.
type memoryEntry struct {
	minutes       [historyMinutes]bucket // ring indexed by minute id
	day           bucket                 // units used today
	minuteRejects bucket                 // 429s in the minute window
	dayRejects    bucket                 // 429s with the day exhausted
	limited       bucket                 // all 429s today
	last          int64                  // minute id of the last Take
}

type bucket struct{ id, n int64 }

// at returns the count of window id.
func (b bucket) at(id int64) int64 {
	if b.id != id {
		return 0
	}
	return b.n
}

// add adds d to window id, starting from zero when the bucket held an older
// window, and returns the new count.
func (b *bucket) add(id, d int64) int64 {
	if b.id != id {
		b.id, b.n = id, 0
	}
	b.n += d
	return b.n
}

// NewMemoryStore returns an empty in-process Store.
func NewMemoryStore() *MemoryStore {
	s := &MemoryStore{seed: maphash.MakeSeed()}
	for i := range s.shards {
		s.shards[i].subjects = make(map[string]*memoryEntry)
	}
	return s
}

func (s *MemoryStore) shard(subject string) *memoryShard {
	return &s.shards[maphash.String(s.seed, subject)%memoryShards]
}

// Take implements Store.
func (s *MemoryStore) Take(_ context.Context, subject string, lim Limits, strikes int, now time.Time) (TakeResult, error) {
	mid, did := minuteID(now), dayID(now)
	sh := s.shard(subject)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	sh.sweep(mid)
	e := sh.subjects[subject]
	if e == nil {
		e = &memoryEntry{}
		sh.subjects[subject] = e
	}
	e.last = max(e.last, mid)

	slot := &e.minutes[floorMod(mid, historyMinutes)]
	c := Counts{Minute: slot.at(mid), Day: e.day.at(did)}
	if c.Minute < lim.PerMinute && c.Day < lim.PerDay {
		c.Minute = slot.add(mid, 1)
		c.Day = e.day.add(did, 1)
		return TakeResult{Allowed: true, Counts: c}, nil
	}

	rejects, id := &e.minuteRejects, mid
	if c.Day >= lim.PerDay {
		rejects, id = &e.dayRejects, did
	}
	r := TakeResult{Counts: c, Strikes: rejects.add(id, 1) - 1}
	if strikes > 0 && r.Strikes >= int64(strikes) {
		r.StartBan = true
		// Keep the first 429 but drop the strikes: after this ban ends,
		// the next one needs a full set of strikes again.
		*rejects = bucket{id: id, n: 1}
	} else {
		// The request that starts a ban is answered 403, not 429.
		e.limited.add(did, 1)
	}
	return r, nil
}

// Peek implements Store.
func (s *MemoryStore) Peek(_ context.Context, subject string, now time.Time) (Counts, error) {
	mid, did := minuteID(now), dayID(now)
	sh := s.shard(subject)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	e := sh.subjects[subject]
	if e == nil {
		return Counts{}, nil
	}
	return Counts{Minute: e.minutes[floorMod(mid, historyMinutes)].at(mid), Day: e.day.at(did)}, nil
}

// History implements Store.
func (s *MemoryStore) History(_ context.Context, subject string, now time.Time) (History, error) {
	mid, did := minuteID(now), dayID(now)
	sh := s.shard(subject)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	var h History
	e := sh.subjects[subject]
	if e == nil {
		return h, nil
	}
	for i := range historyMinutes {
		id := mid - historyMinutes + 1 + int64(i)
		h.PerMinute[i] = e.minutes[floorMod(id, historyMinutes)].at(id)
	}
	h.Day = e.day.at(did)
	h.Limited429 = e.limited.at(did)
	return h, nil
}

// ClearStrikes implements Store.
func (s *MemoryStore) ClearStrikes(_ context.Context, subject string, _ time.Time) error {
	sh := s.shard(subject)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if e := sh.subjects[subject]; e != nil {
		e.minuteRejects, e.dayRejects = bucket{}, bucket{}
	}
	return nil
}

// sweep drops entries that hold nothing current: no minute in the history
// and no count for today. It runs at most once per minute per shard, which
// keeps its cost proportional to the subjects seen, without a goroutine.
// The caller holds sh.mu.
func (sh *memoryShard) sweep(mid int64) {
	if mid <= sh.swept {
		return
	}
	sh.swept = mid
	today := floorDiv(mid, daySeconds/minuteSeconds)
	for subject, e := range sh.subjects {
		if e.last <= mid-historyMinutes && floorDiv(e.last, daySeconds/minuteSeconds) < today {
			delete(sh.subjects, subject)
		}
	}
}

// floorMod is the remainder matching floorDiv, always in [0, b).
func floorMod(a, b int64) int64 { return a - floorDiv(a, b)*b }

// len reports the number of subjects held; tests use it to see sweeps.
func (s *MemoryStore) len() int {
	n := 0
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		n += len(sh.subjects)
		sh.mu.Unlock()
	}
	return n
}
