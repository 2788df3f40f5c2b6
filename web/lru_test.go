package web

import (
	"strconv"
	"strings"
	"testing"
)

// TestSizedLRUBudget: the cache keeps its total size (keys and values)
// within the budget, dropping the least recently used first, takes a
// replaced value's size off, and refuses an entry over an eighth of the
// budget.
func TestSizedLRUBudget(t *testing.T) {
	c := newSizedLRU(100, 808, func(b []byte) int { return len(b) })
	for i := range 10 {
		c.add(strconv.Itoa(i), make([]byte, 100))
		if c.used > c.budget {
			t.Fatalf("after %d adds: %d bytes kept, budget %d", i+1, c.used, c.budget)
		}
	}
	if c.len() != 8 {
		t.Errorf("%d values kept, want 8 of 101 bytes in 808", c.len())
	}
	for _, k := range []string{"0", "1"} {
		if _, ok := c.get(k); ok {
			t.Errorf("the oldest value %s is still kept", k)
		}
	}
	c.get("2") // now the most recently used
	c.add("x", make([]byte, 100))
	if _, ok := c.get("2"); !ok {
		t.Error("a value just read was dropped before older ones")
	}
	if _, ok := c.get("3"); ok {
		t.Error("the least recently used value 3 is still kept")
	}
	c.add("2", make([]byte, 10))
	if c.used != 7*101+11 {
		t.Errorf("after replacing a value of 100 by one of 10: %d bytes counted, want %d", c.used, 7*101+11)
	}
	c.add("b", make([]byte, 101))
	if _, ok := c.get("b"); ok || c.used != 7*101+11 {
		t.Errorf("an entry over budget/8 was kept (%d bytes counted)", c.used)
	}
	long := newSizedLRU(100, 1000, func(b []byte) int { return len(b) })
	for i := range 50 {
		long.add(strings.Repeat("k", 90)+strconv.Itoa(i), nil)
	}
	if long.used > 1000 || long.len() > 10 {
		t.Errorf("entries with long keys: %d kept, %d bytes counted, budget 1000", long.len(), long.used)
	}
	small := newSizedLRU(2, 1<<20, func(b []byte) int { return len(b) })
	for i := range 5 {
		small.add(strconv.Itoa(i), make([]byte, 7))
	}
	if small.len() != 2 || small.used != 16 {
		t.Errorf("an LRU of 2 entries holds %d values, %d bytes counted; want 2 and 16", small.len(), small.used)
	}
}
