// Package enginetest is a third GitOps engine written only for tests: a toy
// "labels-only" engine that proves the engine registry. Adding it is this
// one package plus one registration line (a blank import of this package,
// whose init calls engine.Register); no command names it, yet it shows in
// explain, scan, rules, compare, normalize and audit.
//
// The toy engine:
//   - owns every object labelled toy.example.com/app=NAME; its owner is the
//     ToyApp NAME in the object's namespace;
//   - applies as the field manager "toy-controller";
//   - reverts drift of labels, and leaves every other field alone;
//   - has one rule kind: a ToyApp's spec.ignoreLabels lists label keys it
//     does not revert (nor compare: normalize removes them);
//   - has one audit check of its own: a ToyApp with spec.suspend: true
//     reverts nothing (DRIFT008, drift detection off).
package enginetest

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kubectl-drift/kubectl-drift/internal/audit/auditapi"
	"github.com/kubectl-drift/kubectl-drift/internal/engine"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/model/jsonpointer"
	"github.com/kubectl-drift/kubectl-drift/internal/source"
	"github.com/kubectl-drift/kubectl-drift/internal/suggest/suggestapi"
)

// The one registration line.
func init() { engine.Register(Descriptor()) }

// The toy engine's names.
const (
	Name     model.Engine = "toy"
	Group    string       = "toy.example.com"
	Kind     string       = "ToyApp"
	Manager  string       = "toy-controller"
	OwnLabel string       = "toy.example.com/app"
	// RuleIgnoreLabel is the toy engine's one rule kind.
	RuleIgnoreLabel model.RuleType = "toy.ignoreLabel"
)

// Descriptor describes the toy engine to the registry.
func Descriptor() engine.Descriptor {
	return engine.Descriptor{
		Name:               Name,
		Title:              "Toy",
		RuleObjects:        "Toy ToyApp",
		IsManager:          func(m string) bool { return m == Manager },
		APIGroups:          []string{Group},
		IsEngineObject:     func(o *unstructured.Unstructured) bool { return o.GroupVersionKind().Group == Group },
		OwnerLabels:        []string{OwnLabel},
		RulesFromDocuments: RulesFromDocuments,
		Audit:              auditSemantics(),
		New:                New,
		Suggest:            suggestSemantics(),
	}
}

// auditSemantics tells the audit that the toy rules remove fields, and adds
// the toy engine's one check.
func auditSemantics() *auditapi.Engine {
	return &auditapi.Engine{
		Kinds:  map[model.RuleType]auditapi.Kind{RuleIgnoreLabel: auditapi.Field},
		Checks: []auditapi.Check{{ID: auditapi.CheckDriftDetectionOff, Run: checkSuspended}},
	}
}

// checkSuspended reports the ToyApps with spec.suspend: true, whose labels
// the toy engine never reverts.
func checkSuspended(in auditapi.Input) []auditapi.Finding {
	var out []auditapi.Finding
	for _, d := range in.Documents {
		o := d.Object
		if o == nil || o.GroupVersionKind().GroupKind() != gvk.GroupKind() {
			continue
		}
		if suspend, _, _ := unstructured.NestedBool(o.Object, "spec", "suspend"); !suspend {
			continue
		}
		f := auditapi.Finding{
			Message: auditapi.ObjectOf(o) + " is suspended: the toy engine never reverts its objects' labels",
			Hint:    "Remove spec.suspend and list the labels that may drift in spec.ignoreLabels.",
			File:    d.File, Line: d.Line, Column: 1, Object: auditapi.ObjectOf(o), Field: ".spec.suspend",
		}
		if line, col := d.Position("/spec/suspend"); col > 0 {
			f.Line, f.Column = line, col
		}
		out = append(out, f)
	}
	return out
}

// Adapter is the toy engine's model.Adapter.
type Adapter struct {
	reader model.Reader
	docs   []source.Document
}

// New builds the adapter over the rule files and, when given, the cluster.
func New(_ context.Context, cfg engine.Config) (model.Adapter, []model.Note, error) {
	return &Adapter{reader: cfg.Reader, docs: cfg.Documents}, nil, nil
}

// Engine implements model.Adapter.
func (a *Adapter) Engine() model.Engine { return Name }

// Owner implements model.Adapter: the ToyApp the label names.
func (a *Adapter) Owner(obj *unstructured.Unstructured) *model.Owner {
	app := obj.GetLabels()[OwnLabel]
	if app == "" {
		return nil
	}
	return &model.Owner{Engine: Name, Kind: Kind, Namespace: obj.GetNamespace(), Name: app, Via: "label " + OwnLabel, Found: true}
}

// Judge implements model.Adapter: labels are reverted unless a rule of the
// owner ignores them; every other field is left alone.
func (a *Adapter) Judge(ctx context.Context, in model.JudgeInput) error {
	ow := a.Owner(in.Live)
	if ow == nil {
		return nil
	}
	in.Report.Owners = append(in.Report.Owners, *ow)
	rules, err := a.Rules(ctx)
	if err != nil {
		return err
	}
	for i := range in.Report.Drifts {
		d := &in.Report.Drifts[i]
		v := model.Verdict{Engine: Name, Kind: model.LeftAlone, Reason: "the toy engine only reverts labels"}
		if strings.HasPrefix(d.Path, "/metadata/labels/") {
			v = model.Verdict{Engine: Name, Kind: model.Reverted, Reason: "the toy engine reverts labels"}
			for _, r := range rules {
				if owns(r, ow) && slices.Contains(r.JSONPointers, d.Path) {
					origin := r.Origin
					v = model.Verdict{Engine: Name, Kind: model.Ignored, Reason: "ignored by " + r.Origin.String(), Rule: &origin}
				}
			}
		}
		d.Verdicts = append(d.Verdicts, v)
	}
	return nil
}

// Rules implements model.Adapter: the rules of the files, then of the
// cluster's ToyApps.
func (a *Adapter) Rules(ctx context.Context) ([]model.Rule, error) {
	rules, _ := RulesFromDocuments(a.docs)
	if a.reader == nil {
		return rules, nil
	}
	items, err := a.reader.List(ctx, gvk, "", "")
	if err != nil {
		return rules, nil // the toy engine is not installed
	}
	for i := range items {
		rules = append(rules, rulesOf(&items[i], model.Origin{Object: Kind + " " + items[i].GetNamespace() + "/" + items[i].GetName()})...)
	}
	return rules, nil
}

// Normalize implements engine.Normalizer: the ignored labels are removed.
func (a *Adapter) Normalize(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	out := obj.DeepCopy()
	ow := a.Owner(obj)
	if ow == nil {
		return out, nil
	}
	rules, err := a.Rules(ctx)
	if err != nil {
		return nil, err
	}
	labels := out.GetLabels()
	for _, r := range rules {
		if !owns(r, ow) {
			continue
		}
		for _, p := range r.JSONPointers {
			delete(labels, strings.TrimPrefix(p, "/metadata/labels/"))
		}
	}
	out.SetLabels(labels)
	return out, nil
}

// RulesFromDocuments returns one rule per spec.ignoreLabels entry of the
// ToyApps in docs; a ToyApp whose ignoreLabels is not a list of strings is
// an error.
func RulesFromDocuments(docs []source.Document) ([]model.Rule, []error) {
	var rules []model.Rule
	var errs []error
	for _, d := range docs {
		o := d.Object
		if o == nil || o.GroupVersionKind().GroupKind() != gvk.GroupKind() {
			continue
		}
		if _, _, err := unstructured.NestedStringSlice(o.Object, "spec", "ignoreLabels"); err != nil {
			errs = append(errs, fmt.Errorf("%s:%d: %s %s: spec.ignoreLabels: %w", d.File, d.Line, Kind, o.GetName(), err))
			continue
		}
		rules = append(rules, rulesOf(o, model.Origin{File: d.File, Line: d.Line, Object: Kind + " " + o.GetNamespace() + "/" + o.GetName()})...)
	}
	return rules, errs
}

func rulesOf(app *unstructured.Unstructured, at model.Origin) []model.Rule {
	keys, _, _ := unstructured.NestedStringSlice(app.Object, "spec", "ignoreLabels")
	var out []model.Rule
	for i, k := range keys {
		o := at
		o.Field = fmt.Sprintf(".spec.ignoreLabels[%d]", i)
		out = append(out, model.Rule{
			Engine: Name, Type: RuleIgnoreLabel, Origin: o, Scope: model.ScopeDiffAndApply,
			Target:       model.Selector{Namespace: app.GetNamespace(), LabelSelector: OwnLabel + "=" + app.GetName()},
			JSONPointers: []string{jsonpointer.Join("metadata", "labels", k)},
		})
	}
	return out
}

// owns reports whether rule r is one of owner ow's: its ToyApp's objects
// carry the label naming it, in its namespace.
func owns(r model.Rule, ow *model.Owner) bool {
	return r.Target.LabelSelector == OwnLabel+"="+ow.Name && r.Target.Namespace == ow.Namespace
}

var gvk = schema.GroupVersionKind{Group: Group, Version: "v1", Kind: Kind}

// suggestSemantics is the toy engine's part of `suggest`: a label a
// controller owns gets a spec.ignoreLabels entry in the ToyApp; other
// fields need none (the toy engine leaves them alone).
func suggestSemantics() *suggestapi.Semantics {
	return &suggestapi.Semantics{
		Holders: []suggestapi.Holder{{GVK: gvk, Rules: []string{"spec", "ignoreLabels"}}},
		Suggest: func(f suggestapi.Field) (suggestapi.Rule, []string) {
			p, err := jsonpointer.Parse(f.Drift.Path)
			if err != nil || len(p) != 3 || p[0] != "metadata" || p[1] != "labels" {
				return nil, nil
			}
			return SuggestedRule{IgnoreLabel: p[2]}, nil
		},
		Judge: func(docs []source.Document, _ *unstructured.Unstructured, _ func(schema.GroupVersion) (map[string]*spec.Schema, error)) (model.Adapter, error) {
			return &Adapter{docs: docs}, nil
		},
	}
}

// SuggestedRule is a suggested spec.ignoreLabels entry: a label key.
type SuggestedRule struct {
	IgnoreLabel string `json:"ignoreLabel"`
}

// Entry implements suggestapi.Rule.
func (r SuggestedRule) Entry() any { return r.IgnoreLabel }

// Settings implements suggestapi.Rule.
func (r SuggestedRule) Settings() []suggestapi.Setting { return nil }
