package argocd

import (
	"testing"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// TestLiveOnlyVerdict: W3 of docs/verdicts.md, as Argo CD v3.2.11 showed it
// (owner-annotation-label/w3-live-only-annotation-and-edit): a kubectl
// annotate, then a kubectl edit that patched last-applied with its own
// change; Argo CD's 3-way diff shows the edit, not the annotation. The one
// rule decides only where no comparison ran and the sync is client-side.
func TestLiveOnlyVerdict(t *testing.T) {
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
	noLA := live.DeepCopy()
	noLA.SetAnnotations(map[string]string{"owner": "alice"})
	owner := model.FieldDrift{Path: "/metadata/annotations/owner", Change: model.Added}
	csa, ssa := &compareConfig{}, &compareConfig{structuredMerge: true}
	cases := []struct {
		name   string
		d      model.FieldDrift
		cfg    *compareConfig
		cmp    *comparison
		noLA   bool
		decide bool
	}{
		{name: "live-only annotation, kubectl's last-applied", d: owner, cfg: csa, cmp: &comparison{}, decide: true},
		{name: "live-only annotation, no last-applied (TwoWayDiff)", d: owner, cfg: csa, cmp: &comparison{}, noLA: true, decide: true},
		{name: "edited field the last-applied holds", d: model.FieldDrift{Path: "/data/size", Change: model.Changed}, cfg: csa, cmp: &comparison{}},
		{name: "added key the last-applied holds", d: model.FieldDrift{Path: "/data/color", Change: model.Added}, cfg: csa, cmp: &comparison{}},
		{name: "Argo CD's last sync: its diff decides", d: owner, cfg: csa, cmp: &comparison{ok: true}},
		{name: "ServerSideApply: managers decide", d: owner, cfg: ssa, cmp: &comparison{}},
	}
	for _, c := range cases {
		obj := live
		if c.noLA {
			obj = noLA
		}
		d := c.d
		v, ok := liveOnlyVerdict(obj, &d, c.cfg, c.cmp, nil)
		if ok != c.decide || ok && v.Kind != model.LeftAlone {
			t.Errorf("%s: decided %v (%s), want decided %v (left-alone)", c.name, ok, v.Kind, c.decide)
		}
	}
}
