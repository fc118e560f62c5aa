package argocd

import (
	"testing"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// Argo CD's own diff is the truth per field: what it shows is OutOfSync
// (reverted under selfHeal), what it does not show is left alone, and a
// rule our computation named stays named.
func TestApplyArgoDiff(t *testing.T) {
	ignored := model.Verdict{Engine: Engine, Kind: model.Ignored, Reason: "ignored by rule", Rule: &model.Origin{Object: "Application argocd/shop"}}
	rep := &model.Report{Drifts: []model.FieldDrift{
		{Path: "/spec/replicas", Verdicts: []model.Verdict{ignored}},
		{Path: "/spec/template/spec/containers/0/image", Verdicts: []model.Verdict{{Engine: Engine, Kind: model.LeftAlone, Reason: "local"}}},
		{Path: "/metadata/labels/hotfix", Verdicts: []model.Verdict{{Engine: Engine, Kind: model.Reported, Reason: "local"}}},
		// A list item edited in place: two drifts at one path.
		{Path: "/spec/ports/0", Change: model.Removed},
		{Path: "/spec/ports/0", Change: model.Added},
		{Path: "/metadata/annotations/x", Verdicts: []model.Verdict{ignored}},
	}}
	api := &argoAnswer{item: &ResourceDiff{Modified: true}, from: "https://argocd/api/v1/applications/shop/managed-resources",
		paths: []string{"/spec/template/spec/containers/0/image", "/spec/ports"}}
	app := &Application{}
	app.Spec.SyncPolicy = &SyncPolicy{Automated: &SyncPolicyAutomated{SelfHeal: true}}
	applyArgoDiff(rep, api, app)
	want := []model.VerdictKind{model.Ignored, model.Reverted, model.LeftAlone, model.Reverted, model.Reverted, model.Ignored}
	for i, d := range rep.Drifts {
		v := verdictOf(d, Engine)
		if v == nil || v.Kind != want[i] {
			t.Errorf("%s (%d): verdict %+v, want %s", d.Path, i, v, want[i])
		}
	}
	if v := verdictOf(rep.Drifts[0], Engine); v.Rule == nil {
		t.Error("the rule that hid /spec/replicas was dropped")
	}
}
