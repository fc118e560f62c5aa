package cli

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// reportRequest is what adopt and suggest need from explain.
type reportRequest struct {
	Filenames       []string
	Kustomize       string
	LiveFile        string
	Rules           []string
	ArgoCDNamespace string
}

// explainReport is the one seam through which adopt and suggest get a
// drift report and the live object. When internal/drift.Explain (issue 14)
// lands, this becomes a call to it and nothing else changes.
func explainReport(ctx context.Context, g *GlobalOptions, args []string, req reportRequest) (*model.Report, *unstructured.Unstructured, error) {
	eo := NewExplainOptions(g)
	eo.Filenames, eo.Kustomize, eo.LiveFile, eo.Rules = req.Filenames, req.Kustomize, req.LiveFile, req.Rules
	eo.ArgoCDNamespace = req.ArgoCDNamespace
	if eo.ArgoCDNamespace == "" {
		eo.ArgoCDNamespace = "argocd"
	}
	if err := eo.Complete(nil, args); err != nil {
		return nil, nil, err
	}
	if err := eo.Validate(); err != nil {
		return nil, nil, err
	}
	live, err := eo.live(ctx)
	if err != nil {
		return nil, nil, err
	}
	eo.remember(live)
	report, err := eo.explain(ctx, live)
	if err != nil {
		return nil, nil, err
	}
	return report, live, nil
}
