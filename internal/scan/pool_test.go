package scan

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Bounded runs every index once, never more than limit at once; after
// ctx ended it runs none and says so for each.
func TestBounded(t *testing.T) {
	var running, most, ran atomic.Int32
	seen := make([]atomic.Int32, 20)
	Bounded(context.Background(), len(seen), 3, func(i int) {
		n := running.Add(1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		time.Sleep(time.Millisecond)
		seen[i].Add(1)
		ran.Add(1)
		running.Add(-1)
	}, func(int) { t.Error("cancelled without a cancelled context") })
	if ran.Load() != 20 || most.Load() > 3 || most.Load() < 2 {
		t.Errorf("ran %d, at most %d at once; want 20 runs, 2 or 3 at once", ran.Load(), most.Load())
	}
	for i := range seen {
		if seen[i].Load() != 1 {
			t.Errorf("index %d ran %d times", i, seen[i].Load())
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var mu sync.Mutex
	var cancelled []int
	Bounded(ctx, 5, 1, func(int) { t.Error("ran with ctx done") }, func(i int) {
		mu.Lock()
		cancelled = append(cancelled, i)
		mu.Unlock()
	})
	if len(cancelled) != 5 {
		t.Errorf("cancelled %v with ctx done: want all 5", cancelled)
	}
}
