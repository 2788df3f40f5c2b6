package web

import (
	"strconv"
	"testing"
)

// TestSizedLRUBudget: the cache keeps its total size within the budget,
// dropping the least recently used first, takes a replaced value's size
// off, and refuses a value over an eighth of the budget.
func TestSizedLRUBudget(t *testing.T) {
	c := newSizedLRU(100, 800, func(b []byte) int { return len(b) })
	for i := range 10 {
		c.add(strconv.Itoa(i), make([]byte, 100))
		if c.used > c.budget {
			t.Fatalf("after %d adds: %d bytes kept, budget %d", i+1, c.used, c.budget)
		}
	}
	if c.len() != 8 {
		t.Errorf("%d values kept, want 8 of 100 bytes in 800", c.len())
	}
	for _, k := range []string{"0", "1"} {
		if _, ok := c.get(k); ok {
			t.Errorf("the oldest value %s is still kept", k)
		}
	}
	c.get("2") // now the most recently used
	c.add("10", make([]byte, 100))
	if _, ok := c.get("2"); !ok {
		t.Error("a value just read was dropped before older ones")
	}
	if _, ok := c.get("3"); ok {
		t.Error("the least recently used value 3 is still kept")
	}
	c.add("2", make([]byte, 10))
	if c.used != 710 {
		t.Errorf("after replacing a value of 100 by one of 10: %d bytes counted, want 710", c.used)
	}
	c.add("big", make([]byte, 101))
	if _, ok := c.get("big"); ok || c.used != 710 {
		t.Errorf("a value over budget/8 was kept (%d bytes counted)", c.used)
	}
	small := newSizedLRU(2, 1<<20, func(b []byte) int { return len(b) })
	for i := range 5 {
		small.add(strconv.Itoa(i), make([]byte, 7))
	}
	if small.len() != 2 || small.used != 14 {
		t.Errorf("an LRU of 2 entries holds %d values, %d bytes counted; want 2 and 14", small.len(), small.used)
	}
}
