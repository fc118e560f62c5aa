// Package suggest proposes, for drifted fields that a controller owns
// (HPA, VPA, operators, webhooks), the smallest rule that makes each GitOps
// engine leave them alone, in both engines' syntax (issue 19).
//
// Rule shapes follow the engines' documented semantics
// (/work/shared/reference/engines.md §1, §2a, §2b):
//   - Argo CD spec.ignoreDifferences (argo-cd util/argo/diff/ignore.go):
//     managedFieldsManagers when the writer's manager name is stable and
//     Git does not hold the field; jqPathExpressions for an item of a keyed
//     list (items move), jsonPointers otherwise. When Git holds the field,
//     syncOptions RespectIgnoreDifferences=true too, since a sync would
//     write Git's value anyway. That option works through
//     controller/sync.go normalizeTargetResources, which copies into the
//     target the live values of what diff.Normalize removes: the
//     jsonPointers/jq ignore normalizer, not the managedFieldsManagers
//     step of the diff itself. So a field in Git gets a path rule.
//   - Flux Kustomization spec.ignore (kustomize-controller >= v1.9.0): the
//     path is left out of drift detection and apply.
//   - Flux HelmRelease spec.driftDetection.ignore: drift correction only;
//     a Helm upgrade still applies the chart's value, so a field the chart
//     sets should leave the chart (replicas with an HPA: autoscaling.enabled).
package suggest

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/kubectl-drift/kubectl-drift/internal/managedfields"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// Suggestion is what to declare for one drifted field.
type Suggestion struct {
	Pointer   string           `json:"path"`
	FieldPath string           `json:"fieldPath"`
	Manager   string           `json:"manager"`
	Cause     model.CauseClass `json:"cause"`
	// Reason is the justification comment written above each rule.
	Reason string `json:"reason"`
	// InGit: the desired state holds the field, so an apply/sync would
	// write Git's value unless the rule also covers apply.
	InGit bool `json:"inGit"`

	Argo ArgoRule `json:"argocd"`
	Flux FluxRule `json:"flux"`
	// Advice is said in words: what a rule cannot do.
	Advice []string `json:"advice,omitempty"`
}

// ArgoRule is one spec.ignoreDifferences entry of an Application.
type ArgoRule struct {
	Group                 string   `json:"group,omitempty"`
	Kind                  string   `json:"kind"`
	Name                  string   `json:"name,omitempty"`
	Namespace             string   `json:"namespace,omitempty"`
	JSONPointers          []string `json:"jsonPointers,omitempty"`
	JQPathExpressions     []string `json:"jqPathExpressions,omitempty"`
	ManagedFieldsManagers []string `json:"managedFieldsManagers,omitempty"`
	// RespectIgnoreDifferences: add syncOptions RespectIgnoreDifferences=true.
	RespectIgnoreDifferences bool `json:"respectIgnoreDifferences,omitempty"`
}

// FluxTarget is a Flux ignore rule's target (anchored regexes).
type FluxTarget struct {
	Group     string `json:"group,omitempty"`
	Kind      string `json:"kind"`
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
}

// FluxRule is one Kustomization spec.ignore / HelmRelease
// spec.driftDetection.ignore entry (the same shape).
type FluxRule struct {
	Paths  []string   `json:"paths"`
	Target FluxTarget `json:"target"`
}

// Build returns a suggestion for every drift whose latest writer is a
// controller (autoscaler, built-in controller, operator) and that some
// engine would still revert or report. Manual edits are not suggested:
// adopt them into Git or let the engine revert them.
func Build(r *model.Report) []Suggestion {
	var out []Suggestion
	for _, d := range r.Drifts {
		if !controllerOwned(d.Cause) || !acted(d) {
			continue
		}
		out = append(out, forDrift(r.Resource, d))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Pointer < out[j].Pointer })
	return out
}

func controllerOwned(c model.CauseClass) bool {
	return c == model.CauseAutoscaler || c == model.CauseController || c == model.CauseOperator
}

func acted(d model.FieldDrift) bool {
	if len(d.Verdicts) == 0 {
		return true
	}
	for _, v := range d.Verdicts {
		if v.Kind == model.Reverted || v.Kind == model.Reported {
			return true
		}
	}
	return false
}

func forDrift(id model.ResourceID, d model.FieldDrift) Suggestion {
	s := Suggestion{Pointer: d.Path, FieldPath: d.FieldPath, Cause: d.Cause, InGit: d.Change != model.Added}
	for _, m := range d.Managers {
		if !managedfields.IsGitOpsManager(m.Manager) {
			s.Manager = m.Manager
			break
		}
	}
	who := s.Manager
	if who == "" {
		who = "a controller"
	}
	s.Reason = fmt.Sprintf("%s (%s) owns %s of %s %s", who, d.Cause, d.FieldPath, id.Kind, id.Name)
	s.Argo = ArgoRule{Group: id.Group, Kind: id.Kind, Name: id.Name, Namespace: id.Namespace, RespectIgnoreDifferences: s.InGit}
	switch {
	case stableManager(s.Manager) && !s.InGit:
		// Only the diff matters (a sync does not write a field Git lacks):
		// trusting the manager covers whatever it writes next.
		s.Argo.ManagedFieldsManagers = []string{s.Manager}
	case keyedItem(d.FieldPath):
		s.Argo.JQPathExpressions = []string{JQPath(d.FieldPath)}
	default:
		s.Argo.JSONPointers = []string{d.Path}
	}
	s.Flux = FluxRule{Paths: []string{d.Path}, Target: FluxTarget{Group: id.Group, Kind: id.Kind, Name: regexp.QuoteMeta(id.Name), Namespace: regexp.QuoteMeta(id.Namespace)}}
	if keyedItem(d.FieldPath) {
		s.Advice = append(s.Advice, fmt.Sprintf("Flux ignore paths are JSON pointers with list indices: %s follows the item's position, so reordering the list in Git moves the rule", d.Path))
	}
	if s.InGit {
		s.Advice = append(s.Advice, "HelmRelease: driftDetection.ignore covers drift correction only, a Helm upgrade still applies the chart's value: make the chart leave the field out")
	}
	if d.Path == "/spec/replicas" && d.Cause == model.CauseAutoscaler && s.InGit {
		s.Advice = append(s.Advice, "replicas is managed by an autoscaler: remove spec.replicas from Git (with a chart, its autoscaling.enabled switch usually does), so no engine ever writes it back")
	}
	return s
}

// stableManager: a field manager name that names one controller for good.
// Generic names (kubebuilder's "manager", client-go's default
// "Go-http-client"), manual tools, and names carrying a pod or hash suffix
// change or are shared, so the rule would cover the wrong writer.
func stableManager(m string) bool {
	lm := strings.ToLower(m)
	if lm == "" || lm == "manager" || strings.Contains(lm, "go-http-client") || managedfields.IsGitOpsManager(m) {
		return false
	}
	switch managedfields.Classify(m, "Update", "") {
	case model.CauseAutoscaler, model.CauseController, model.CauseOperator:
		return !podSuffix.MatchString(lm)
	}
	return false
}

var podSuffix = regexp.MustCompile(`-[a-z0-9]{8,10}-[a-z0-9]{5}$|-[a-f0-9]{12,}$`)

// keyedItem reports whether a field path goes through an associative list
// item named by its key: .spec.template.spec.containers[name=app].image.
func keyedItem(fieldPath string) bool {
	return strings.Contains(fieldPath, "[") && strings.Contains(fieldPath, "=") && !strings.Contains(fieldPath, "[=")
}

var element = regexp.MustCompile(`\.([A-Za-z0-9_-]+)|\[([^\]=]+)=([^\]]*)\]|\["((?:[^"\\]|\\.)*)"\]|\[(\d+)\]`)

// JQPath turns a field path into an Argo CD jq path expression selecting
// list items by their keys: .spec.template.spec.containers[name=app].image
// becomes .spec.template.spec.containers[] | select(.name == "app") | .image.
func JQPath(fieldPath string) string {
	var b strings.Builder
	for _, m := range element.FindAllStringSubmatch(fieldPath, -1) {
		switch {
		case m[1] != "":
			b.WriteString("." + m[1])
		case m[2] != "":
			var conds []string
			keys := strings.Split(m[2]+"="+m[3], ",")
			for _, kv := range keys {
				k, v, _ := strings.Cut(kv, "=")
				conds = append(conds, fmt.Sprintf(".%s == %s", k, jqLiteral(v)))
			}
			b.WriteString("[] | select(" + strings.Join(conds, " and ") + ") | ")
		case m[4] != "":
			if b.Len() == 0 || strings.HasSuffix(b.String(), "| ") {
				b.WriteString(".")
			}
			fmt.Fprintf(&b, "[%q]", m[4])
		case m[5] != "":
			b.WriteString("[" + m[5] + "]")
		}
	}
	return strings.TrimSuffix(b.String(), " | ")
}

var integer = regexp.MustCompile(`^-?\d+$`)

// jqLiteral writes a key value: numbers stay numbers (containerPort=80).
func jqLiteral(v string) string {
	if integer.MatchString(v) {
		return v
	}
	return fmt.Sprintf("%q", strings.Trim(v, `"`))
}
