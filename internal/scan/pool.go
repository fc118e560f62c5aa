package scan

import (
	"context"
	"sync"
)

// Bounded runs fn(i) for every i below n, at most limit at once, and
// waits for them all: scan's kinds, a fleet scan's clusters. An i whose
// turn comes after ctx ended is not run; cancelled(i) is called for it
// instead (cancelled may be nil).
func Bounded(ctx context.Context, n, limit int, fn func(i int), cancelled func(i int)) {
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				if cancelled != nil {
					cancelled(i)
				}
				return
			}
			defer func() { <-sem }()
			if ctx.Err() != nil {
				// select picks at random when a slot is free too.
				if cancelled != nil {
					cancelled(i)
				}
				return
			}
			fn(i)
		}()
	}
	wg.Wait()
}
