package cli

import (
	"testing"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

func TestExplainExitCodeFollowsArgoSyncStatus(t *testing.T) {
	// A live-only label Argo CD leaves alone: shown, but Synced.
	r := &model.Report{Drifts: []model.FieldDrift{{Path: "/metadata/labels/hotfix",
		Verdicts: []model.Verdict{{Engine: model.Engine("argocd"), Kind: model.LeftAlone}}}}}
	if got := explainExitCode("argocd", r); got != 0 {
		t.Fatalf("without an object status, only a left-alone field: exit %d, want 0 (field verdicts decide)", got)
	}
	// A field Argo CD shows as drift (reported: OutOfSync) makes exit 1
	// when no object status is known ...
	r.Drifts = append(r.Drifts, model.FieldDrift{Path: "/spec/replicas",
		Verdicts: []model.Verdict{{Engine: model.Engine("argocd"), Kind: model.Reported}}})
	if got := explainExitCode("argocd", r); got != 1 {
		t.Fatalf("without an object status, a reported field: exit %d, want 1", got)
	}
	// ... but Argo CD's own sync status wins with --engine argocd.
	r.SetStatus(model.ObjectStatus{Engine: model.Engine("argocd"), Drift: false, Status: "Synced"})
	if got := explainExitCode("argocd", r); got != 0 {
		t.Errorf("--engine argocd, Synced: exit %d, want 0", got)
	}
	if got := explainExitCode("auto", r); got != 1 {
		t.Errorf("--engine auto: exit %d, want 1 (field verdicts)", got)
	}
	r.SetStatus(model.ObjectStatus{Engine: model.Engine("argocd"), Drift: true, Status: "OutOfSync"})
	if len(r.Status) != 1 {
		t.Fatalf("SetStatus appended instead of replacing: %+v", r.Status)
	}
	if got := explainExitCode("argocd", r); got != 1 {
		t.Errorf("--engine argocd, OutOfSync: exit %d, want 1", got)
	}
}
