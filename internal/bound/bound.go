// Package bound runs work that Go cannot interrupt (a template that
// loops, a library that fetches without a deadline) within a time limit
// and a memory limit, so that a hostile or broken input ends a command
// with one line instead of hanging it or exhausting the machine.
package bound

import (
	"context"
	"errors"
	"fmt"
	"runtime/metrics"
	"time"
)

// Defaults of Limits.
const (
	// DefaultTimeout bounds one run in time: a chart's rendering, a
	// kustomize build that fetches remote bases.
	DefaultTimeout = 30 * time.Second
	// DefaultHeapGrowth bounds the memory a run may take: the heap may
	// grow this much past where it stood when the run started (the
	// process stays well under 1 GB with the garbage collector's slack).
	DefaultHeapGrowth = 384 << 20
)

// ErrBound is wrapped by every error that stops a run at a bound.
var ErrBound = errors.New("rendering stopped at a bound")

// Limits bound one run; zero fields take the defaults.
type Limits struct {
	Timeout    time.Duration
	HeapGrowth int64
	// Hint ends the time-limit error: what probably kept the run busy
	// ("a template that loops without end?", "fetching URL").
	Hint string
	// Where, when set, says where the work is when Run gives up (the
	// template a chart was rendering): the error names it after what.
	Where func() string
	// OnStop, when set, is called when Run gives up on the work, before
	// it returns: the work, left running, can then stop itself (a
	// rendering's bounded functions fail from then on).
	OnStop func()
}

// Run runs work and returns its result, or an error naming what when it
// runs past the time limit or its heap grows past the memory limit. The
// work is left behind in its goroutine (Go cannot stop it): the command
// prints the error and exits, which ends it.
func Run[T any](ctx context.Context, what string, limits Limits, work func(context.Context) (T, error)) (T, error) {
	timeout, growth := limits.Timeout, limits.HeapGrowth
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	if growth <= 0 {
		growth = DefaultHeapGrowth
	}
	hint := limits.Hint
	if hint == "" {
		hint = "a template that loops without end?"
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := work(ctx)
		done <- result{v, err}
	}()
	start := heapBytes()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	var zero T
	// stopped names where the work was and lets it know it is given up.
	stopped := func() string {
		if limits.OnStop != nil {
			limits.OnStop()
		}
		if limits.Where != nil {
			if where := limits.Where(); where != "" {
				return what + ", " + where
			}
		}
		return what
	}
	for {
		select {
		case r := <-done:
			return r.v, r.err
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return zero, fmt.Errorf("%s: %w: still running after %s (%s)", stopped(), ErrBound, timeout, hint)
			}
			stopped()
			return zero, ctx.Err()
		case <-tick.C:
			if grown := heapBytes() - start; grown > growth {
				return zero, fmt.Errorf("%s: %w: it took more than %d MiB of memory (a template that builds a huge output?)", stopped(), ErrBound, growth>>20)
			}
		}
	}
}

// heapBytes is the memory held by heap objects now (runtime/metrics:
// cheap, no stop-the-world as runtime.ReadMemStats).
func heapBytes() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64())
}
