// Package lru keeps least-recently-used values within a memory budget:
// the remembered answers of the API and the compressed bytes of the app.
package lru

import (
	"sync"

	"github.com/hashicorp/golang-lru/v2/simplelru"
)

// Sized is a least-recently-used cache bounded both by its number of
// entries and by the total size of its keys and values (size), so a cache
// of response bodies stays within a known share of memory whatever the
// clients ask for (the keys are theirs too: a query string). It is safe for
// concurrent use.
type Sized[V any] struct {
	size   func(V) int
	budget int // most total size kept

	mu   sync.Mutex
	lru  *simplelru.LRU[string, V]
	used int
}

// NewSized keeps at most entries values, of at most budget bytes in
// all with their keys; an entry larger than budget/8 is not kept, so one
// answer cannot empty the cache.
func NewSized[V any](entries, budget int, size func(V) int) *Sized[V] {
	c := &Sized[V]{size: size, budget: budget}
	// The eviction callback runs inside the LRU's methods, which are only
	// called with c.mu held.
	lru, err := simplelru.NewLRU(entries, func(k string, v V) { c.used -= len(k) + c.size(v) })
	if err != nil {
		panic(err) // entries < 1: a programming error
	}
	c.lru = lru
	return c
}

// Get returns the value kept under key and marks it recently used.
func (c *Sized[V]) Get(key string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Get(key)
}

// Add keeps v under key, replacing what was there, and drops the least
// recently used values until the total is within the budget.
func (c *Sized[V]) Add(key string, v V) {
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

// Len is the number of values kept.
func (c *Sized[V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}
