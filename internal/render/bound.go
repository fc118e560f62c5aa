package render

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/metrics"
	"strconv"
	"text/template"
	"time"

	"github.com/kubectl-drift/kubectl-drift/internal/source"
)

// Bounds on rendering a chart: a template is a program (loops, recursion,
// string repetition), and a hostile or broken chart must end the command
// with one line, not hang it or exhaust the machine.
const (
	// DefaultTimeout bounds one chart's rendering in time.
	DefaultTimeout = 30 * time.Second
	// DefaultHeapGrowth bounds the memory a rendering may take: the heap
	// may grow this much past where it stood when rendering started (the
	// process stays well under 1 GB with the garbage collector's slack).
	DefaultHeapGrowth = 384 << 20
	// MaxLoopItems bounds the items until, untilStep and seq may produce
	// in one rendering, all calls together: real charts loop over a few
	// replicas or ports; a nested `until` of a million each is an attack.
	MaxLoopItems = 1_000_000
	// MaxRepeatBytes bounds one repeat's result.
	MaxRepeatBytes = 16 << 20
)

// Limits bound one rendering; zero fields take the defaults.
type Limits struct {
	Timeout    time.Duration
	HeapGrowth int64
}

// ErrBound is wrapped by every error that stops a rendering at a bound.
var ErrBound = errors.New("rendering stopped at a bound")

// Bounded runs render and returns its result, or an error naming what
// when it runs past the time limit or its heap grows past the memory
// limit. Go cannot stop a running template, so the rendering is left
// behind in its goroutine: the command prints the error and exits, which
// ends it.
func Bounded[T any](ctx context.Context, what string, limits Limits, render func(context.Context) (T, error)) (T, error) {
	timeout, growth := limits.Timeout, limits.HeapGrowth
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	if growth <= 0 {
		growth = DefaultHeapGrowth
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := render(ctx)
		done <- result{v, err}
	}()
	start := heapBytes()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	var zero T
	for {
		select {
		case r := <-done:
			return r.v, r.err
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return zero, fmt.Errorf("%s: %w: still rendering after %s (a template that loops without end?)", what, ErrBound, timeout)
			}
			return zero, ctx.Err()
		case <-tick.C:
			if grown := heapBytes() - start; grown > growth {
				return zero, fmt.Errorf("%s: %w: rendering took more than %d MiB of memory (a template that builds a huge output?)", what, ErrBound, growth>>20)
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

// TemplateFuncs are bounded versions of the sprig functions that make
// work from a number alone (Helm's CustomTemplateFuncs take precedence
// over sprig's: helm.sh/helm/v4 pkg/engine/engine.go initFunMap). Their
// results are those of sprig v3 (until, untilStep, seq, repeat) until a
// bound is passed; then the template stops with an error naming the
// function, which text/template prefixes with the template's name and
// line. One map per rendering: the loop budget is shared by its calls.
func TemplateFuncs() template.FuncMap {
	left := MaxLoopItems
	take := func(fn string, n int) error {
		if n < 0 {
			n = 0
		}
		if n > left {
			return fmt.Errorf("%w: %s would make %d items, past the %d a rendering may loop over", ErrBound, fn, n, MaxLoopItems)
		}
		left -= n
		return nil
	}
	untilStep := func(fn string, start, stop, step int) ([]int, error) {
		if step == 0 || (step > 0 && start >= stop) || (step < 0 && start <= stop) {
			return []int{}, nil
		}
		n := (stop - start + step - sign(step)) / step
		if err := take(fn, n); err != nil {
			return nil, err
		}
		out := make([]int, 0, n)
		for i := start; (step > 0 && i < stop) || (step < 0 && i > stop); i += step {
			out = append(out, i)
		}
		return out, nil
	}
	return template.FuncMap{
		"until": func(count int) ([]int, error) {
			step := 1
			if count < 0 {
				step = -1
			}
			return untilStep("until", 0, count, step)
		},
		"untilStep": func(start, stop, step int) ([]int, error) { return untilStep("untilStep", start, stop, step) },
		// seq mirrors sprig's seq (1 to N, or start to end by step,
		// end included) on the bounded untilStep.
		"seq": func(params ...int) (string, error) {
			var start, end, step, incr int
			switch len(params) {
			case 1:
				start, end, step, incr = 1, params[0], 1, 1
				if end < start {
					step, incr = -1, -1
				}
			case 2:
				start, end, step = params[0], params[1], 1
				if end < start {
					step = -1
				}
				incr = step
			case 3:
				start, step, end, incr = params[0], params[1], params[2], 1
				if end < start {
					incr = -1
					if step > 0 {
						return "", nil
					}
				}
			default:
				return "", nil
			}
			items, err := untilStep("seq", start, end+incr, step)
			if err != nil {
				return "", err
			}
			b := make([]byte, 0, len(items)*4)
			for i, v := range items {
				if i > 0 {
					b = append(b, ' ')
				}
				b = strconv.AppendInt(b, int64(v), 10)
			}
			return string(b), nil
		},
		"repeat": func(count int, str string) (string, error) {
			if count < 0 {
				return "", errors.New("repeat: negative count") // sprig's strings.Repeat panics
			}
			if count == 0 || str == "" {
				return "", nil
			}
			if count > MaxRepeatBytes/len(str) {
				return "", fmt.Errorf("%w: repeat would make more than %d MiB", ErrBound, MaxRepeatBytes>>20)
			}
			b := make([]byte, 0, count*len(str))
			for range count {
				b = append(b, str...)
			}
			return string(b), nil
		},
	}
}

func sign(n int) int {
	if n < 0 {
		return -1
	}
	return 1
}

// CheckTree checks a directory before a loader reads it whole (Helm's
// LoadDir follows symlinks and reads every file without a limit): every
// regular file at most source.DefaultMaxFileBytes, and every symlink
// resolving inside root (the checkout: nothing outside --source is read).
// A link to a directory is checked through.
func CheckTree(dir, root string) error {
	rootReal, err := filepath.EvalSymlinks(root)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	var walk func(dir, shown string) error
	walk = func(dir, shown string) error {
		if seen[dir] {
			return nil
		}
		seen[dir] = true
		return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			name := filepath.Join(shown, rel)
			if d.Type()&fs.ModeSymlink != 0 {
				real, err := filepath.EvalSymlinks(p)
				if err != nil {
					return fmt.Errorf("%s: %w", name, err)
				}
				if r, err := filepath.Rel(rootReal, real); err != nil || !filepath.IsLocal(r) {
					return fmt.Errorf("%s is a symlink to %s, outside the checkout %s: not read", name, real, root)
				}
				st, err := os.Stat(real)
				if err != nil {
					return fmt.Errorf("%s: %w", name, err)
				}
				if st.IsDir() {
					return walk(real, name)
				}
				return checkSize(name, st)
			}
			if d.Type().IsRegular() {
				st, err := d.Info()
				if err != nil {
					return err
				}
				return checkSize(name, st)
			}
			return nil
		})
	}
	return walk(dir, dir)
}

func checkSize(name string, st fs.FileInfo) error {
	if st.Size() > source.DefaultMaxFileBytes {
		return fmt.Errorf("%s is %d MiB, over the %d MiB limit on a file: not read", name, st.Size()>>20, source.DefaultMaxFileBytes>>20)
	}
	return nil
}
