package audit

import (
	"errors"
	"fmt"
	"time"

	"github.com/itchyny/gojq"

	"github.com/kubectl-drift/kubectl-drift/internal/audit/auditapi"
	"github.com/kubectl-drift/kubectl-drift/internal/jq"
)

// jqRun evaluates code on v with a deadline and returns how long it took
// and whether it hit the deadline. A runtime error is not slowness: Argo CD
// logs it and skips the rule.
func jqRun(code *gojq.Code, v any, limit time.Duration) (time.Duration, bool) {
	d, err := jq.Run(code, v, limit, func(any) bool { return true })
	return d, errors.Is(err, jq.ErrTimeout)
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
		if !r.isFieldRule() || r.problem != "" || len(r.JQPathExpressions) == 0 {
			continue
		}
		targets := a.ix.largestTargets(r.m, jqSample)
		for _, e := range r.JQPathExpressions {
			code, err := jq.CompileDelete(e)
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
			out = append(out, ruleFinding(auditapi.CheckSlowJQ, r, msg))
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
