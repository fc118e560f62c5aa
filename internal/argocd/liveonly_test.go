package argocd

import (
	"testing"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// TestKeepLiveOnly: W3 of docs/verdicts.md, as Argo CD v3.2.11 showed it
// (owner-annotation-label/w3-live-only-annotation-and-edit): a kubectl
// annotate, then a kubectl edit that patched last-applied with its own
// change; Argo CD's 3-way diff shows the edit, not the annotation.
func TestKeepLiveOnly(t *testing.T) {
	const la = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"settings","namespace":"shop"},"data":{"color":"blue","size":"small"}}`
	live := testutil.Object(t, `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: shop
  annotations:
    owner: alice
    kubectl.kubernetes.io/last-applied-configuration: '`+la+`'
  managedFields:
  - {manager: kubectl-annotate, operation: Update, apiVersion: v1, fieldsType: FieldsV1, fieldsV1: {"f:metadata": {"f:annotations": {"f:owner": {}}}}}
  - {manager: kubectl-edit, operation: Update, apiVersion: v1, fieldsType: FieldsV1, fieldsV1: {"f:data": {"f:size": {}}, "f:metadata": {"f:annotations": {"f:kubectl.kubernetes.io/last-applied-configuration": {}}}}}
data: {color: blue, size: small}
`)
	reported := model.Verdict{Engine: Engine, Kind: model.Reported, Reason: "test"}
	drifts := []model.FieldDrift{{Path: "/metadata/annotations/owner", Change: model.Added}, {Path: "/data/size", Change: model.Changed}}
	for i := range drifts {
		drifts[i].SetVerdict(reported)
	}
	keepLiveOnly(drifts, live)
	if v := verdictOf(drifts[0], Engine); v.Kind != model.LeftAlone {
		t.Errorf("live-only annotation: %s, want left-alone", v.Kind)
	}
	if v := verdictOf(drifts[1], Engine); v.Kind != model.Reported {
		t.Errorf("edited field in last-applied: %s, want reported", v.Kind)
	}

	// Argo CD's own last-applied: the 3-way diff of Judge decides, not
	// this step.
	argoLive := live.DeepCopy()
	mf := argoLive.GetManagedFields()
	mf[1].Manager = "argocd-controller"
	argoLive.SetManagedFields(mf)
	drifts[0].SetVerdict(reported)
	keepLiveOnly(drifts, argoLive)
	if v := verdictOf(drifts[0], Engine); v.Kind != model.Reported {
		t.Errorf("with Argo CD's last-applied: %s, want reported (left to the diff)", v.Kind)
	}
}
