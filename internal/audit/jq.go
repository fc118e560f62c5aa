package audit

import (
	"context"
	"fmt"
	"time"

	"github.com/itchyny/gojq"
)

// compileJQ compiles a jq path expression the way Argo CD does: as
// del(EXPR) (argo-cd util/argo/normalizers/diff_normalizer.go,
// jqNormalizerPatch).
func compileJQ(expr string) (*gojq.Code, error) {
	q, err := gojq.Parse("del(" + expr + ")")
	if err != nil {
		return nil, err
	}
	return gojq.Compile(q)
}

// jqRun evaluates code on v with a deadline and returns how long it took
// and whether it hit the deadline.
func jqRun(code *gojq.Code, v any, limit time.Duration) (time.Duration, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	start := time.Now()
	iter := code.RunWithContext(ctx, v)
	for {
		out, ok := iter.Next()
		if !ok {
			break
		}
		if err, isErr := out.(error); isErr {
			if ctx.Err() != nil {
				return time.Since(start), true
			}
			_ = err // a runtime error is not slowness; Argo logs and skips it
			break
		}
	}
	return time.Since(start), ctx.Err() != nil
}

// jqSample is how many of a rule's targets are measured: the largest ones,
// since jq time grows with the input. It bounds the check's cost on big
// repositories (a rule on Deployment may target thousands of manifests).
const jqSample = 8

// checkSlowJQ measures every jq path expression against each manifest it
// targets, with Argo CD's per-evaluation limit. It stops measuring an
// expression at its first timeout, so one runaway rule costs one limit, not
// one limit per manifest.
func checkSlowJQ(a *analysis) []Finding {
	var out []Finding
	limit, slow := a.cfg.jqTimeout(), a.cfg.jqSlowAfter()
	for _, r := range a.rules {
		if !isFieldRule(r.Rule) || r.problem != "" || len(r.JQPathExpressions) == 0 {
			continue
		}
		targets := a.ix.largestTargets(r.m, jqSample)
		for _, e := range r.JQPathExpressions {
			code, err := compileJQ(e)
			if err != nil {
				continue // reported as invalid
			}
			var worst time.Duration
			worstDoc, timedOut := -1, false
			var spent time.Duration
			for _, i := range targets {
				d, to := jqRun(code, a.ix.plain(i), limit)
				spent += d
				if d > worst {
					worst, worstDoc = d, i
				}
				if to {
					timedOut = true
					break
				}
				if spent > 2*limit {
					break
				}
			}
			if worstDoc < 0 || (!timedOut && worst < slow) {
				continue
			}
			doc := a.ix.docs[worstDoc]
			where := fmt.Sprintf("%s %s", doc.Object.GetKind(), qualifiedName(doc.Object.GetNamespace(), doc.Object.GetName()))
			var msg string
			if timedOut {
				msg = fmt.Sprintf("jq %q did not finish within Argo CD's %s limit on %s: Argo CD skips the rule and the field shows as drift", e, limit, where)
			} else {
				msg = fmt.Sprintf("jq %q took %s on %s, close to Argo CD's %s limit", e, worst.Round(time.Millisecond), where, limit)
			}
			out = append(out, ruleFinding(CheckSlowJQ, r, msg))
			break
		}
	}
	return out
}

func qualifiedName(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}
