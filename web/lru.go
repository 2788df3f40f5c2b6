package web

import (
	"sync"

	"github.com/hashicorp/golang-lru/v2/simplelru"
)

// sizedLRU is a least-recently-used cache bounded both by its number of
// entries and by the total size of its keys and values (size), so a cache
// of response bodies stays within a known share of memory whatever the
// clients ask for (the keys are theirs too: a query string). It is safe for
// concurrent use.
type sizedLRU[V any] struct {
	size   func(V) int
	budget int // most total size kept

	mu   sync.Mutex
	lru  *simplelru.LRU[string, V]
	used int
}

// newSizedLRU keeps at most entries values, of at most budget bytes in
// all with their keys; an entry larger than budget/8 is not kept, so one
// answer cannot empty the cache.
func newSizedLRU[V any](entries, budget int, size func(V) int) *sizedLRU[V] {
	c := &sizedLRU[V]{size: size, budget: budget}
	// The eviction callback runs inside the LRU's methods, which are only
	// called with c.mu held.
	lru, err := simplelru.NewLRU(entries, func(k string, v V) { c.used -= len(k) + c.size(v) })
	if err != nil {
		panic(err) // entries < 1: a programming error
	}
	c.lru = lru
	return c
}

// get returns the value kept under key and marks it recently used.
func (c *sizedLRU[V]) get(key string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Get(key)
}

// add keeps v under key, replacing what was there, and drops the least
// recently used values until the total is within the budget.
func (c *sizedLRU[V]) add(key string, v V) {
	n := len(key) + c.size(v)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lru.Remove(key) // the callback takes the old value's size off
	if n > c.budget/8 {
		return
	}
	c.lru.Add(key, v)
	c.used += n
	for c.used > c.budget {
		if _, _, ok := c.lru.RemoveOldest(); !ok {
			break
		}
	}
}

// len is the number of values kept.
func (c *sizedLRU[V]) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}
