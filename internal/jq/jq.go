// Package jq is the one home of jq evaluation in kubectl-drift: Argo CD's
// jqPathExpressions compiled the way Argo CD compiles them, and every run
// bounded by a time limit, as Argo CD bounds it.
package jq

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/itchyny/gojq"
)

// DefaultTimeout is Argo CD's default ignore.normalizer.jq.timeout
// (argo-cd util/argo/normalizers/diff_normalizer.go
// DefaultJQExecutionTimeout; docs/user-guide/diffing.md).
const DefaultTimeout = time.Second

// ErrTimeout is returned (wrapped with the limit) when a run does not
// finish within its limit. The text is Argo CD's own
// (diff_normalizer.go jqNormalizerPatch.Apply).
var ErrTimeout = errors.New("JQ patch execution timed out")

// CompileDelete compiles a jq path expression as Argo CD's ignore
// normalizer does: del(EXPR) (diff_normalizer.go NewIgnoreNormalizer,
// gojq.Parse("del(" + expr + ")")).
func CompileDelete(expr string) (*gojq.Code, error) {
	return compile("del(" + expr + ")")
}

// CompilePath compiles path(EXPR): it yields the paths expr reaches, the
// fields del(EXPR) would remove.
func CompilePath(expr string) (*gojq.Code, error) {
	return compile("path(" + expr + ")")
}

func compile(src string) (*gojq.Code, error) {
	q, err := gojq.Parse(src)
	if err != nil {
		return nil, err
	}
	return gojq.Compile(q)
}

// Run evaluates code on v within limit (DefaultTimeout when limit <= 0).
// It calls each with every result, in order, until each returns false or
// the results end. An error result ends the run and is returned: ErrTimeout
// (wrapped, with the limit) when the limit was hit, else gojq's error as
// it is (it may quote values: callers that hold Secrets redact it). It also
// returns how long the run took.
func Run(code *gojq.Code, v any, limit time.Duration, each func(result any) bool) (time.Duration, error) {
	if limit <= 0 {
		limit = DefaultTimeout
	}
	// start is taken before the deadline is set, so that the time reported
	// for a timeout is never shorter than the limit.
	start := time.Now()
	ctx, cancel := context.WithDeadline(context.Background(), start.Add(limit))
	defer cancel()
	iter := code.RunWithContext(ctx, v)
	for {
		out, ok := iter.Next()
		if !ok {
			return time.Since(start), nil
		}
		if err, isErr := out.(error); isErr {
			if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) {
				return time.Since(start), fmt.Errorf("%w (%s)", ErrTimeout, limit)
			}
			return time.Since(start), err
		}
		if !each(out) {
			return time.Since(start), nil
		}
	}
}
