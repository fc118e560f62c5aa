package flux

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kubectl-drift/kubectl-drift/internal/audit/auditapi"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// A Kustomization and a HelmRelease of one namespace are peers; the same
// object's rules reach each other; other namespaces are apart.
func TestAuditKindAndReach(t *testing.T) {
	ks := model.Rule{Type: RuleKustomizeIgnore, Origin: model.Origin{Object: "Kustomization flux-system/apps"}}
	hr := model.Rule{Type: RuleHelmIgnore, Origin: model.Origin{Object: "HelmRelease flux-system/redis"}}
	kinds := AuditSemantics().Kinds
	if kinds[ks.Type] != auditapi.Field || kinds[hr.Type] != auditapi.RenderedField || kinds[RuleSSAAnnotation] != auditapi.Other {
		t.Errorf("kinds: %v", kinds)
	}
	other := hr
	other.Origin.Object = "HelmRelease shop/redis"
	otherKs := ks
	otherKs.Origin.Object = "Kustomization flux-system/infra"
	for _, tc := range []struct {
		name string
		s, r model.Rule
		want auditapi.Reach
	}{
		{"same holder", ks, ks, auditapi.Same},
		{"kustomization and helmrelease of one namespace", hr, ks, auditapi.Peer},
		{"two kustomizations", otherKs, ks, auditapi.Apart},
		{"another namespace", other, ks, auditapi.Apart},
	} {
		if got := auditReach(tc.s, tc.r); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestAuditUnknownKey(t *testing.T) {
	docs := testutil.Documents(t, "flux/ks.yaml", `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: a, namespace: flux-system}
spec:
  ignore:
  - paths: [/spec/replicas]
    target: {kind: Deployment, name: web}
  - paths: [/spec/replicas]
    target: {kind: Deployment, nmae: web}
  - path: [/spec/replicas]
`)
	for field, want := range map[string]string{
		".spec.ignore[0]": "",
		".spec.ignore[1]": `unknown key "target.nmae": the engine drops it silently (did you mean "target.name"?)`,
		".spec.ignore[2]": `unknown key "path": the engine drops it silently (did you mean "paths"?)`,
	} {
		r := model.Rule{Type: RuleKustomizeIgnore, Origin: model.Origin{Object: "Kustomization flux-system/a", Field: field}}
		if got := unknownKey(r, docs[0]); got != want {
			t.Errorf("%s: got %q, want %q", field, got, want)
		}
	}
}

func TestAuditDriftOff(t *testing.T) {
	docs := testutil.Documents(t, "flux/releases.yaml", `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: unset, namespace: flux-system}
spec: {}
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: off, namespace: flux-system}
spec:
  driftDetection:
    mode: disabled
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: on, namespace: flux-system}
spec:
  driftDetection: {mode: enabled}
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: ruled, namespace: flux-system}
spec: {}
`)
	rules := []model.Rule{
		{Type: RuleDriftDisabled, Origin: model.Origin{Object: "HelmRelease flux-system/ruled", Line: 21},
			Target: model.Selector{Group: "helm.toolkit.fluxcd.io", Kind: "HelmRelease", Name: "ruled"}},
		{Type: RuleReconcileDisabled, Target: model.Selector{Group: "apps", Kind: "Deployment", Name: "web"}},
		{Type: RuleSSAAnnotation, Value: "Ignore", Target: model.Selector{Group: "apps", Kind: "Deployment", Name: "web"}},
		{Type: RuleSSAAnnotation, Value: "Merge", Target: model.Selector{Group: "apps", Kind: "Deployment", Name: "api"}},
	}
	var got []string
	for _, f := range checkDriftOff(auditapi.Input{Documents: docs, Rules: rules}) {
		at := fmt.Sprintf("%s:%d:%d", f.File, f.Line, f.Column)
		if f.Rule != nil {
			at = "rule " + string(f.Rule.Type)
		}
		got = append(got, at+" "+f.Message)
	}
	want := []string{
		"rule flux.driftDetectionDisabled HelmRelease drift detection is off",
		"rule flux.reconcileDisabled kustomize.toolkit.fluxcd.io/reconcile: disabled: Flux never applies",
		"rule flux.ssa kustomize.toolkit.fluxcd.io/ssa: Ignore: Flux never applies",
		"flux/releases.yaml:1:1 HelmRelease flux-system/unset: driftDetection.mode is unset",
		"flux/releases.yaml:11:5 HelmRelease flux-system/off: driftDetection.mode is disabled",
	}
	if len(got) != len(want) {
		t.Fatalf("got %q, want %d findings", got, len(want))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("finding %d: got %q, want %q...", i, got[i], want[i])
		}
	}
}

// TestDriftOffByKustomizationPatch: a strategic-merge patch without target
// (it patches the HelmRelease of its own kind and name) that disables
// drift detection is reported at the patch, although the release's own
// manifest enables it; a release of another name keeps its own mode.
func TestDriftOffByKustomizationPatch(t *testing.T) {
	docs := append(testutil.Documents(t, "clusters/prod/apps.yaml", `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: apps, namespace: flux-system}
spec:
  interval: 10m
  path: ./apps
  sourceRef: {kind: GitRepository, name: flux-system}
  patches:
  - patch: |
      apiVersion: helm.toolkit.fluxcd.io/v2
      kind: HelmRelease
      metadata: {name: podinfo, namespace: podinfo}
      spec:
        driftDetection:
          mode: disabled
`), testutil.Documents(t, "apps/releases.yaml", `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: podinfo, namespace: podinfo}
spec:
  driftDetection: {mode: enabled}
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: redis, namespace: podinfo}
spec:
  driftDetection: {mode: enabled}
`)...)
	got := checkDriftOff(auditapi.Input{Documents: docs})
	if len(got) != 1 || got[0].File != "clusters/prod/apps.yaml" || got[0].Line != 15 || !strings.Contains(got[0].Message, "disabled by Kustomization flux-system/apps .spec.patches[0]") {
		t.Fatalf("want one finding at the patch's mode (clusters/prod/apps.yaml:15), got %+v", got)
	}
}
