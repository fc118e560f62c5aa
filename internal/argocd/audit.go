package argocd

import (
	"path"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/audit/auditapi"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/source"
)

// AuditSemantics describes Argo CD's rules to the audit (Descriptor.Audit).
func AuditSemantics() *auditapi.Engine {
	return &auditapi.Engine{
		Kinds: map[model.RuleType]auditapi.Kind{
			RuleIgnoreDifferences: auditapi.Field,
			RuleResourceExclusion: auditapi.Exclusion,
		},
		Global:       isGlobalRule,
		Reach:        auditReach,
		UnknownKey:   unknownKey,
		RenderedFrom: remoteChart,
		// With it gitops-engine's normalizeRole (pkg/diff/diff.go) sets the
		// rules of a ClusterRole with an aggregationRule to nil on both
		// sides (settings.go GetResourceCompareOptions; engines.md 1a).
		AggregatedRoles: "argocd-cm resource.compareoptions: ignoreAggregatedRoles: true makes Argo CD ignore the rules of every aggregated ClusterRole itself",
		Checks:          []auditapi.Check{{ID: auditapi.CheckDriftDetectionOff, Run: checkSelfHeal}},
	}
}

// isGlobalRule reports whether a rule comes from argocd-cm and so applies
// to every Application of its instance. Settings read from an
// argocd-operator ArgoCD resource or from argo-cd chart values (field
// "...configs.cm[key]") are an argocd-cm too.
func isGlobalRule(r model.Rule) bool {
	k := auditapi.ObjectKind(r.Origin.Object)
	return k == "ConfigMap" || k == "ArgoCD" || strings.Contains(r.Origin.Field, "configs.cm[") ||
		r.Type == RuleCompareOptions // argocd-cm's /status rule, whatever holds it
}

// auditInstance names the Argo CD instance of an argocd-cm rule: each
// argocd-cm (or ArgoCD resource, or chart values) in a tree is its own
// instance, so its rules never cover another's.
func auditInstance(r model.Rule) string {
	return r.Origin.File + "|" + r.Origin.Object
}

// auditReach: Argo CD merges argocd-cm rules into every Application's rules
// (util/argo/diff/ignore.go HasIgnoreDifference), so an argocd-cm rule
// reaches every Application of its instance; an Application's rules reach
// only its own objects. Two Applications of one namespace/name in two files
// are two environments' copies (one per cluster or instance), not one
// holder: their rules are apart.
func auditReach(s, r model.Rule) auditapi.Reach {
	sg, rg := isGlobalRule(s), isGlobalRule(r)
	if sg && rg && auditInstance(s) != auditInstance(r) {
		return auditapi.Apart // two Argo CD instances
	}
	if sg || s.Origin.Object == r.Origin.Object && s.Origin.File == r.Origin.File {
		return auditapi.Same
	}
	return auditapi.Apart
}

// The keys each rule shape accepts.
var (
	// argo-cd pkg/apis/application/v1alpha1/types.go ResourceIgnoreDifferences.
	ignoreKeys = []string{"group", "kind", "name", "namespace", "jsonPointers", "jqPathExpressions", "managedFieldsManagers"}
	// argo-cd util/settings/settings.go: an ignoreDifferences customization
	// value is an OverrideIgnoreDiff.
	cmIgnoreKeys = []string{"jsonPointers", "jqPathExpressions", "managedFieldsManagers"}
)

// unknownKey finds a key of an ignoreDifferences entry (an Application's,
// or an argocd-cm value) that Argo CD's decoder drops silently.
func unknownKey(r model.Rule, d source.Document) string {
	if r.Type != RuleIgnoreDifferences {
		return ""
	}
	if !isGlobalRule(r) {
		return auditapi.UnknownKey(auditapi.MapAt(d, r.Origin.Field), ignoreKeys, "")
	}
	key, ok := strings.CutPrefix(r.Origin.Field, "data[")
	if !ok || !strings.HasSuffix(key, "]") || strings.Contains(key, "][") {
		return ""
	}
	key = strings.TrimSuffix(key, "]")
	data, _ := d.Object.Object["data"].(map[string]any)
	v, _ := data[key].(string)
	var item map[string]any
	if err := yaml.Unmarshal([]byte(v), &item); err != nil {
		return ""
	}
	return auditapi.UnknownKey(item, cmIgnoreKeys, "")
}

// remoteChart names the Helm chart an Application (or ApplicationSet
// template) holding r installs from a chart repository (source.chart, in
// source or sources, or the helmCharts of the kustomization at a source's
// path), or "".
func remoteChart(r model.Rule, tree auditapi.Tree) string {
	find := tree.Find
	d, ok := find(r.Origin)
	if !ok {
		// Applications without a namespace are cited in Argo CD's.
		kind, rest, _ := strings.Cut(r.Origin.Object, " ")
		_, name, _ := strings.Cut(rest, "/")
		d, ok = find(model.Origin{File: r.Origin.File, Object: kind + " " + name})
		if !ok {
			return ""
		}
	}
	spec, _ := d.Object.Object["spec"].(map[string]any)
	if d.Object.GetKind() == "ApplicationSet" {
		tmpl, _ := spec["template"].(map[string]any)
		spec, _ = tmpl["spec"].(map[string]any)
	}
	sources := []any{spec["source"]}
	if l, ok := spec["sources"].([]any); ok {
		sources = append(sources, l...)
	}
	for _, src := range sources {
		m, _ := src.(map[string]any)
		if c, _ := m["chart"].(string); c != "" {
			return "the remote Helm chart " + c
		}
		// A kustomize source with helmCharts: the repo-server inflates
		// them (kustomize build --enable-helm, with
		// kustomize.buildOptions), so the objects come from the chart.
		if p, _ := m["path"].(string); p != "" && tree.RemoteCharts != nil {
			if charts := tree.RemoteCharts(p); len(charts) > 0 {
				return "the remote Helm chart " + strings.Join(charts, ", ") + " through the helmCharts of the kustomization in " + p
			}
		}
		// A path holding Chart.yaml is a Helm source (argo-cd
		// reposerver/repository/repository.go GetAppSourceType, through
		// util/app/discovery Discover): its objects are the templates'
		// output, which the audit does not render.
		if p, _ := m["path"].(string); p != "" && tree.Chart != nil && tree.Chart(path.Clean(p)) {
			return "the Helm chart templates in " + path.Clean(p)
		}
	}
	return ""
}

// checkSelfHeal (policy requireSelfHeal): an Application, or an
// ApplicationSet's template, without syncPolicy.automated.selfHeal reports
// drift but never reverts it.
func checkSelfHeal(in auditapi.Input) []auditapi.Finding {
	if !in.Policy.RequireSelfHeal {
		return nil
	}
	var out []auditapi.Finding
	for _, d := range in.Documents {
		u := d.Object
		if u.GroupVersionKind().Group != "argoproj.io" {
			continue
		}
		// An ApplicationSet's template is what its Applications get.
		var spec []string
		switch u.GetKind() {
		case "Application":
			spec = []string{"spec"}
		case "ApplicationSet":
			spec = []string{"spec", "template", "spec"}
		default:
			continue
		}
		selfHeal, _, _ := unstructured.NestedBool(u.Object, append(spec, "syncPolicy", "automated", "selfHeal")...)
		if selfHeal {
			continue
		}
		ref := auditapi.ObjectOf(u)
		field := "." + strings.Join(spec, ".") + ".syncPolicy.automated.selfHeal"
		f := auditapi.Finding{
			Message: ref + " has no " + field + ": drift is reported but never reverted (policy requireSelfHeal)",
			File:    d.File, Line: d.Line, Column: 1, Object: ref, Field: field,
		}
		// Point at the sync policy when there is one.
		if line, col := d.Position("/" + strings.Join(append(spec, "syncPolicy"), "/")); col > 0 {
			f.Line, f.Column = line, col
		}
		out = append(out, f)
	}
	return out
}
