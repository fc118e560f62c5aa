package flux

import (
	"fmt"
	"strings"

	"github.com/kubectl-drift/kubectl-drift/internal/audit/auditapi"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/source"
)

// AuditSemantics describes Flux's rules to the audit (Descriptor.Audit).
func AuditSemantics() *auditapi.Engine {
	return &auditapi.Engine{
		Kinds: map[model.RuleType]auditapi.Kind{
			RuleKustomizeIgnore: auditapi.Field,
			// Their targets are the chart's objects, rendered outside the
			// repository.
			RuleHelmIgnore: auditapi.RenderedField,
		},
		Reach:      auditReach,
		PeerHint:   "Keep the rule where the object is applied: in the HelmRelease for the chart's objects, in the Kustomization for the manifests it applies.",
		UnknownKey: unknownKey,
		Checks:     []auditapi.Check{{ID: auditapi.CheckDriftDetectionOff, Run: checkDriftOff}},
	}
}

// auditReach: Flux rules only reach the objects their own Kustomization or
// HelmRelease applies. A Kustomization and a HelmRelease of one namespace
// are peers: the same rule in both is a duplicate, one copy of which
// cannot reach the objects the author meant.
func auditReach(s, r model.Rule) auditapi.Reach {
	so, ro := s.Origin.Object, r.Origin.Object
	switch {
	case so == ro:
		return auditapi.Same
	case auditapi.ObjectNamespace(so) == auditapi.ObjectNamespace(ro) && auditapi.ObjectKind(so) != auditapi.ObjectKind(ro):
		return auditapi.Peer
	}
	return auditapi.Apart
}

// The keys of kustomize-controller api/v1 IgnoreRule and fluxcd/pkg/apis/kustomize
// Selector; helm-controller api/v2 IgnoreRule has the same shape.
var (
	ignoreKeys   = []string{"paths", "target"}
	selectorKeys = []string{"group", "version", "kind", "name", "namespace", "labelSelector", "annotationSelector"}
)

// unknownKey finds a key of an ignore rule that Flux's decoder drops
// silently.
func unknownKey(r model.Rule, d source.Document) string {
	if r.Type != RuleKustomizeIgnore && r.Type != RuleHelmIgnore {
		return ""
	}
	item := auditapi.MapAt(d, r.Origin.Field)
	if t, ok := item["target"].(map[string]any); ok {
		if p := auditapi.UnknownKey(t, selectorKeys, "target."); p != "" {
			return p
		}
	}
	return auditapi.UnknownKey(item, ignoreKeys, "")
}

// checkDriftOff finds objects whose drift Flux never looks for or never
// corrects: the rules that switch it off, and HelmReleases without drift
// detection.
func checkDriftOff(in auditapi.Input) []auditapi.Finding {
	var out []auditapi.Finding
	// Releases already reported through a rule.
	reported := map[string]bool{}
	for i := range in.Rules {
		r := &in.Rules[i]
		var msg string
		switch r.Type {
		case RuleDriftDisabled:
			reported[r.Origin.Object] = true
			msg = "HelmRelease drift detection is off (driftDetection.mode unset or disabled): helm-controller never looks for drift"
			if r.Target.Kind != "" && r.Target.Kind != "HelmRelease" || r.Target.Name != "" && auditapi.ObjectKind(r.Origin.Object) != "HelmRelease" {
				msg = fmt.Sprintf("drift detection is disabled for %s", r.Target.Describe())
			}
		case RuleReconcileDisabled:
			msg = fmt.Sprintf("kustomize.toolkit.fluxcd.io/reconcile: disabled: Flux never applies %s", r.Target.Describe())
		case RuleSSAAnnotation:
			if strings.EqualFold(r.Value, "Ignore") {
				msg = fmt.Sprintf("kustomize.toolkit.fluxcd.io/ssa: Ignore: Flux never applies %s", r.Target.Describe())
			}
		}
		if msg != "" {
			out = append(out, auditapi.Finding{Message: msg, Rule: r})
		}
	}
	// helm-controller's default is no drift detection at all
	// (api/v2 helmrelease_types.go DriftDetection: mode "disabled" when
	// unset). The adapter models per-object opt-outs as rules; a release
	// without the setting is read from its manifest unless the adapter
	// already reported it as a rule.
	// A Kustomization's spec.patches may set the mode of the releases it
	// applies: the release has the mode kustomize-controller applies.
	patches := driftPatches(fromDocuments(in.Documents))
	for _, d := range in.Documents {
		u := d.Object
		if u == nil || u.GetKind() != "HelmRelease" || u.GroupVersionKind().Group != "helm.toolkit.fluxcd.io" {
			continue
		}
		ref := auditapi.ObjectOf(u)
		hr := doc{obj: u, file: d.File, pos: d.Position}
		mode, from := patchedMode(hr, patchesFor(hr, patches))
		if reported[ref] || (mode != "" && !strings.EqualFold(mode, "disabled")) {
			continue
		}
		setting := "driftDetection.mode is unset"
		if mode != "" {
			setting = "driftDetection.mode is disabled"
		}
		f := auditapi.Finding{
			Message: fmt.Sprintf("%s: %s, so helm-controller never looks for drift", ref, setting),
			File:    d.File, Line: d.Line, Column: 1, Object: ref, Field: ".spec.driftDetection.mode",
		}
		if line, col := d.Position("/spec/driftDetection/mode"); col > 0 {
			f.Line, f.Column = line, col
		}
		if from != nil {
			// The patch that disables it is what to fix.
			f.Message = fmt.Sprintf("%s: driftDetection.mode is disabled by %s .spec.patches[%d], so helm-controller never looks for drift",
				ref, objectRef(from.ks.obj), from.index)
			f.File, f.Line, f.Column = from.ks.file, from.modeLine, 1
		}
		out = append(out, f)
	}
	return out
}
