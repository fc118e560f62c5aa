package argocd

import (
	"context"
	"errors"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/source"
)

// FromDocuments turns documents read by internal/source into adapter
// inputs (positions come from the documents' YAML nodes).
func FromDocuments(docs []source.Document) []Input {
	out := make([]Input, 0, len(docs))
	for _, d := range source.WithObject(docs) {
		out = append(out, Input{Object: d.Object, File: d.File, Pos: d.Position})
		// ArgoCD resources and argo-cd chart values stand for an argocd-cm.
		for _, sd := range settingsDocuments(d) {
			out = append(out, Input{Object: sd.Object, File: sd.File, Pos: sd.Position})
		}
	}
	return out
}

// RulesFromDocuments returns every Argo CD rule in the documents
// (Applications, ApplicationSet templates, argocd-cm): ignoreDifferences
// from both places, ignoreResourceUpdates, knownTypeFields, the status rule
// of resource.compareoptions and resource.exclusions, each with its origin
// as file:line:col and object + field path. A rule that cannot be evaluated
// carries Error; documents that cannot be read at all are returned as errors.
func RulesFromDocuments(docs []source.Document) ([]model.Rule, []error) {
	a, err := New(Options{Inputs: FromDocuments(docs)})
	if err != nil {
		return nil, []error{err}
	}
	var errs []error
	for _, n := range a.loadNotes {
		if n.Level == model.NoteError {
			errs = append(errs, errors.New(noteText(n)))
		}
	}
	rules, err := a.Rules(context.Background())
	if err != nil {
		errs = append(errs, err)
	}
	if !a.cmFromFile {
		// Only rules written in the documents: drop the defaults an empty
		// argocd-cm would have.
		kept := rules[:0]
		for _, r := range rules {
			if r.Type == RuleCompareOptions && r.Origin.File == "" {
				continue
			}
			kept = append(kept, r)
		}
		rules = kept
	}
	return rules, errs
}

func noteText(n model.Note) string {
	if n.Rule != nil {
		return n.Rule.String() + ": " + n.Message
	}
	return n.Message
}
