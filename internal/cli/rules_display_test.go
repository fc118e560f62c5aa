package cli

import (
	"testing"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

func TestIgnoreResourceUpdatesIsNotListedAsIgnoreDifferences(t *testing.T) {
	r := model.Rule{Engine: model.Engine("argocd"), Type: "argocd.ignoreDifferences", Scope: model.ScopeRefresh}
	if got := displayType(r); got != "argocd.ignoreResourceUpdates" {
		t.Errorf("refresh rule listed as %q", got)
	}
	r.Scope = model.ScopeDiff
	if got := displayType(r); got != "argocd.ignoreDifferences" {
		t.Errorf("diff rule listed as %q", got)
	}
}
