// Package suggestapi is what an engine tells `suggest` (its
// Descriptor.Suggest): which of its objects hold rules, its rule for a
// controller-owned field, and how to judge with the rule added. It is its
// own package, imported by the registry and the engines, so that they do
// not depend on suggest's checking machinery (which runs audit).
package suggestapi

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/source"
)

// Semantics is what an engine tells suggest (its Descriptor.Suggest):
// which of its objects hold rules, its rule for a field, and how to judge
// with a rule added.
type Semantics struct {
	// Engine and Title are filled by the registry from the Descriptor.
	Engine model.Engine
	Title  string
	// Holders are the kinds of the engine's objects a rule is written
	// into, the one to name when no object of the engine reconciles the
	// drifted object first.
	Holders []Holder
	// Suggest returns the engine's rule for field f and what to say in
	// words besides; a nil rule when the engine needs none (it leaves
	// the field alone) or cannot say it.
	Suggest func(f Field) (Rule, []string)
	// Judge builds the engine's adapter over docs (the holder with the
	// rule, as it would be committed), to judge the drift again.
	Judge func(docs []source.Document, holder *unstructured.Unstructured, openAPI func(gv schema.GroupVersion) (map[string]*spec.Schema, error)) (model.Adapter, error)
	// NeedsSchema: the engine judges some rules with the cluster's
	// OpenAPI schema (Judge's schema; nil when it cannot be read).
	NeedsSchema bool
}

// Holder is a kind of engine object that holds rules.
type Holder struct {
	GVK schema.GroupVersionKind
	// Rules is the path of its rule list (spec, ignore).
	Rules []string
}

// Holder returns the engine's holder of kind, if it has one.
func (e Semantics) Holder(kind string) (Holder, bool) {
	for _, h := range e.Holders {
		if h.GVK.Kind == kind {
			return h, true
		}
	}
	return Holder{}, false
}

// Rule is one engine's rule for one field, in the engine's own shape: it
// is printed (-o json|yaml) as its JSON under the engine's name.
type Rule interface {
	// Entry is the rule as one entry of its holder's rule list.
	Entry() any
	// Settings are what the rule needs in its holder besides its entry.
	Settings() []Setting
}

// Setting is a value a rule needs in a string list of its holder (Argo
// CD's spec.syncPolicy.syncOptions RespectIgnoreDifferences=true).
type Setting struct {
	Path  []string
	Value string
	// Has reports an item that already says Value, spelled otherwise;
	// nil: only Value itself.
	Has func(item string) bool
}

// Field is one drifted field a rule is asked for.
type Field struct {
	Resource model.ResourceID
	Drift    model.FieldDrift
	// Manager is the controller's field manager ("" unknown).
	Manager string
	// InGit: the desired state holds the field, so an apply/sync would
	// write Git's value unless the rule also covers apply.
	InGit bool
	// StableManager: Manager names one controller for good (not a
	// generic, manual, GitOps or pod-suffixed name), so a rule may trust
	// it.
	StableManager bool
}

// KeyedItem reports whether the field goes through an associative list
// item named by its key: .spec.template.spec.containers[name=app].image.
// Its index in a JSON pointer follows the item's position.
func (f Field) KeyedItem() bool {
	p := f.Drift.FieldPath
	return strings.Contains(p, "[") && strings.Contains(p, "=") && !strings.Contains(p, "[=")
}

// Entry is an engine's rule type (a struct with JSON tags) as a rule list
// entry, for Rule.Entry.
func Entry(rule any) map[string]any {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(rule)
	if err != nil {
		// Rules are structs of strings and string lists: they convert.
		panic(fmt.Sprintf("suggestapi.Entry(%T): %v", rule, err))
	}
	return m
}
