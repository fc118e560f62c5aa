// Package suggest proposes, for drifted fields that a controller owns
// (HPA, VPA, operators, webhooks), the smallest rule that makes each GitOps
// engine leave them alone, in every engine's syntax (issue 19).
//
// The package is engine-neutral, like internal/compare: it picks the
// fields, asks each engine for its rule (suggestapi.Semantics, from the engine's
// Descriptor.Suggest in the registry), writes the rule into the engine's
// object, and checks it by judging the drift again with the engine's own
// adapter and auditing the engine object. The rule shapes and their
// upstream semantics live with each engine (internal/argocd/suggest.go,
// internal/flux/suggest.go).
package suggest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kubectl-drift/kubectl-drift/internal/audit"
	"github.com/kubectl-drift/kubectl-drift/internal/managedfields"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/suggest/suggestapi"
)

// Suggestion is what to declare for one drifted field: the field's facts,
// each engine's rule, and what is said beside them.
type Suggestion struct {
	Facts
	// Rules are the engines' rules, printed under each engine's name.
	Rules map[model.Engine]suggestapi.Rule `json:"-"`
	Beside
}

// Facts are what a suggestion knows of its field.
type Facts struct {
	Pointer   string           `json:"path"`
	FieldPath string           `json:"fieldPath"`
	Manager   string           `json:"manager"`
	Cause     model.CauseClass `json:"cause"`
	// Reason is the justification comment written above each rule.
	Reason string `json:"reason"`
	// InGit: the desired state holds the field (Field.InGit).
	InGit bool `json:"inGit"`
}

// Beside is what is said beside the rules.
type Beside struct {
	// Advice is said in words: what a rule cannot do.
	Advice []string `json:"advice,omitempty"`
	// Checks are the proofs of the rules (Check), and NotChecked says why
	// an engine's rule could not be checked; CheckAll fills them.
	Checks     []Checked `json:"checks,omitempty"`
	NotChecked []string  `json:"notChecked,omitempty"`
}

// MarshalJSON prints each engine's rule under the engine's name
// ("argocd": {...}), sorted by name as the registry is.
func (s Suggestion) MarshalJSON() ([]byte, error) {
	head, err := json.Marshal(s.Facts)
	if err != nil {
		return nil, err
	}
	tail, err := json.Marshal(s.Beside)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.Write(bytes.TrimSuffix(head, []byte("}")))
	for _, e := range s.Engines() {
		name, _ := json.Marshal(string(e))
		rule, err := json.Marshal(s.Rules[e])
		if err != nil {
			return nil, err
		}
		b.WriteString(",")
		b.Write(name)
		b.WriteString(":")
		b.Write(rule)
	}
	if t := bytes.TrimPrefix(tail, []byte("{")); len(t) > 1 {
		b.WriteString(",")
		b.Write(t)
	} else {
		b.WriteString("}")
	}
	return b.Bytes(), nil
}

// Engines returns the engines that have a rule, sorted.
func (s Suggestion) Engines() []model.Engine {
	var out []model.Engine
	for e := range s.Rules {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Build returns a suggestion for every drift whose latest writer is a
// controller (autoscaler, built-in controller, operator) and that some
// engine would still revert or report, with each engine's rule. Manual
// edits are not suggested: adopt them into Git or let the engine revert
// them.
func Build(r *model.Report, engines []suggestapi.Semantics) []Suggestion {
	var out []Suggestion
	for _, d := range r.Drifts {
		if !controllerOwned(d.Cause) || !acted(d) {
			continue
		}
		out = append(out, forDrift(r.Resource, d, engines))
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

func forDrift(id model.ResourceID, d model.FieldDrift, engines []suggestapi.Semantics) Suggestion {
	s := Suggestion{Facts: Facts{Pointer: d.Path, FieldPath: d.FieldPath, Cause: d.Cause, InGit: d.Change != model.Added}, Rules: map[model.Engine]suggestapi.Rule{}}
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
	f := suggestapi.Field{Resource: id, Drift: d, Manager: s.Manager, InGit: s.InGit, StableManager: stableManager(s.Manager)}
	for _, e := range engines {
		if e.Suggest == nil {
			continue
		}
		rule, advice := e.Suggest(f)
		if rule != nil {
			s.Rules[e.Engine] = rule
		}
		s.Advice = append(s.Advice, advice...)
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

// CheckOptions carry what the judges need from the cluster and the
// registry.
type CheckOptions struct {
	// Schema reads the cluster's OpenAPI definitions of a group-version,
	// for an engine that NeedsSchema; without it (inferred drift) such
	// rules may not be evaluated.
	Schema func(gv schema.GroupVersion) (map[string]*spec.Schema, error)
	// Extractors read the rules of every engine, for audit.
	Extractors []audit.Extractor
}
