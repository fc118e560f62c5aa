package cli

import (
	"encoding/json"
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

func TestRulesCorpus(t *testing.T) {
	gp := goldenPath(t, "corpus-rules-yaml")
	out, errOut, err := inCorpus(t, newRulesCommand, "argocd-app-of-apps", "flux-repo", "-o", "yaml")
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	compareGolden(t, gp, out)
}

// TestRulesKustomizeOverlay reads rules from a kustomize build (-k): the
// overlay's patch adds a second ignore entry to the base Kustomization.
func TestRulesKustomizeOverlay(t *testing.T) {
	out, errOut, err := inCorpus(t, newRulesCommand, "-k", "kustomize-overlay/overlays/prod", "-o", "json")
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	var l RuleList
	if err := json.Unmarshal([]byte(out), &l); err != nil {
		t.Fatal(err)
	}
	if len(l.Items) != 2 || l.Items[1].JSONPointers[0] != "/spec/template/spec/containers/0/resources" ||
		l.Items[1].Origin.Field != ".spec.ignore[1]" || l.Items[1].Origin.File != "kustomize-overlay/overlays/prod" {
		t.Fatalf("rules from the overlay: %+v", l.Items)
	}
}
