package lru

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
	c := NewSized(100, 808, func(b []byte) int { return len(b) })
	for i := range 10 {
		c.Add(strconv.Itoa(i), make([]byte, 100))
		if c.used > c.budget {
			t.Fatalf("after %d adds: %d bytes kept, budget %d", i+1, c.used, c.budget)
		}
	}
	if c.Len() != 8 {
		t.Errorf("%d values kept, want 8 of 101 bytes in 808", c.Len())
	}
	for _, k := range []string{"0", "1"} {
		if _, ok := c.Get(k); ok {
			t.Errorf("the oldest value %s is still kept", k)
		}
	}
	c.Get("2") // now the most recently used
	c.Add("x", make([]byte, 100))
	if _, ok := c.Get("2"); !ok {
		t.Error("a value just read was dropped before older ones")
	}
	if _, ok := c.Get("3"); ok {
		t.Error("the least recently used value 3 is still kept")
	}
	c.Add("2", make([]byte, 10))
	if c.used != 7*101+11 {
		t.Errorf("after replacing a value of 100 by one of 10: %d bytes counted, want %d", c.used, 7*101+11)
	}
	c.Add("b", make([]byte, 101))
	if _, ok := c.Get("b"); ok || c.used != 7*101+11 {
		t.Errorf("an entry over budget/8 was kept (%d bytes counted)", c.used)
	}
	long := NewSized(100, 1000, func(b []byte) int { return len(b) })
	for i := range 50 {
		long.Add(strings.Repeat("k", 90)+strconv.Itoa(i), nil)
	}
	if long.used > 1000 || long.Len() > 10 {
		t.Errorf("entries with long keys: %d kept, %d bytes counted, budget 1000", long.Len(), long.used)
	}
	small := NewSized(2, 1<<20, func(b []byte) int { return len(b) })
	for i := range 5 {
		small.Add(strconv.Itoa(i), make([]byte, 7))
	}
	if small.Len() != 2 || small.used != 16 {
		t.Errorf("an LRU of 2 entries holds %d values, %d bytes counted; want 2 and 16", small.Len(), small.used)
	}
}
