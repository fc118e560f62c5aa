package scan

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// ExplainFunc is the per-object pipeline that `scan --watch` and `serve`
// share: the report of obj's drift, judged by its engines, or nil when obj
// is not GitOps-owned or nothing drifted. It is the one switch point for
// issue 14's drift.Explain: when that lands, Inspector.Explain calls it and
// neither caller changes. Calls must not overlap (adapters' caches are
// filled as they judge); callers serialize them.
type ExplainFunc func(ctx context.Context, kind Kind, obj *unstructured.Unstructured) (*model.Report, error)

// ExplainObject is the ExplainFunc of an Inspector: precheck (owned,
// written by another manager), then Inspector.Explain, the per-object
// pipeline scan uses (issue 14). Warnings become notes on the report.
func (in *Inspector) ExplainObject(ctx context.Context, kind Kind, obj *unstructured.Unstructured) (*model.Report, error) {
	cand, _ := in.PrecheckObject(kind, obj)
	if cand == nil {
		return nil, nil
	}
	var mu sync.Mutex // callers of an ExplainFunc serialize already
	rep, warns, err := in.Explain(ctx, &mu, cand, obj)
	if err != nil || rep == nil {
		return nil, err
	}
	for _, w := range warns {
		rep.Notes = append(rep.Notes, model.Note{Level: model.NoteWarning, Reason: "verdicts-unknown", Message: w})
	}
	return rep, nil
}

// Culprit is the manager a drifted field is attributed to in events and
// metrics: the most recent relevant non-GitOps owner.
func (in *Inspector) Culprit(fd model.FieldDrift) model.ManagerRef { return in.culprit(fd) }
