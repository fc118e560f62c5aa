package flux

import (
	"fmt"
	"regexp"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/source"
	"github.com/kubectl-drift/kubectl-drift/internal/suggest/suggestapi"
)

// SuggestSemantics is Flux's part of `suggest`
// (/work/shared/reference/engines.md §2a, §2b):
//   - Kustomization spec.ignore (kustomize-controller >= v1.9.0): the path
//     is left out of drift detection and apply;
//   - HelmRelease spec.driftDetection.ignore: drift correction only; a
//     Helm upgrade still applies the chart's value, so a field the chart
//     sets should leave the chart (replicas with an HPA:
//     autoscaling.enabled).
//
// Both take the same entry: JSON pointers and a target of anchored
// regexes naming the object.
func SuggestSemantics() *suggestapi.Semantics {
	return &suggestapi.Semantics{
		Holders: []suggestapi.Holder{
			{GVK: KustomizationGVK, Rules: []string{"spec", "ignore"}},
			{GVK: HelmReleaseGVK, Rules: []string{"spec", "driftDetection", "ignore"}},
		},
		Suggest: suggestRule,
		Judge: func(docs []source.Document, _ *unstructured.Unstructured, _ func(schema.GroupVersion) (map[string]*spec.Schema, error)) (model.Adapter, error) {
			return New(Options{Documents: docs})
		},
	}
}

// SuggestedTarget is a suggested ignore rule's target (anchored regexes).
type SuggestedTarget struct {
	Group     string `json:"group,omitempty"`
	Kind      string `json:"kind"`
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
}

// SuggestedRule is one suggested Kustomization spec.ignore /
// HelmRelease spec.driftDetection.ignore entry (the same shape).
type SuggestedRule struct {
	Paths  []string        `json:"paths"`
	Target SuggestedTarget `json:"target"`
}

// Entry implements suggestapi.Rule.
func (r SuggestedRule) Entry() any { return suggestapi.Entry(&r) }

// Settings implements suggestapi.Rule: the entry is all.
func (r SuggestedRule) Settings() []suggestapi.Setting { return nil }

func suggestRule(f suggestapi.Field) (suggestapi.Rule, []string) {
	id := f.Resource
	r := SuggestedRule{Paths: []string{f.Drift.Path}, Target: SuggestedTarget{Group: id.Group, Kind: id.Kind, Name: regexp.QuoteMeta(id.Name), Namespace: regexp.QuoteMeta(id.Namespace)}}
	var advice []string
	if f.KeyedItem() {
		advice = append(advice, fmt.Sprintf("Flux ignore paths are JSON pointers with list indices: %s follows the item's position, so reordering the list in Git moves the rule", f.Drift.Path))
	}
	if f.InGit {
		advice = append(advice, "HelmRelease: driftDetection.ignore covers drift correction only, a Helm upgrade still applies the chart's value: make the chart leave the field out")
	}
	return r, advice
}
