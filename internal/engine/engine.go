// Package engine is the registry of GitOps engines. Each engine package
// (internal/argocd, internal/flux, and internal/enginetest's toy engine in
// tests) describes itself with one Descriptor and registers it from its
// init function; the binaries pull the engines in with one blank import
// each (internal/engines). Commands and the pipeline ask the registry,
// never an engine package by name: which managers are GitOps engines,
// which API groups hold the engines' own kinds, which objects are rule
// sources, how to build an adapter for a command.
//
// The registry is written only while the program initializes (like
// database/sql drivers) and read afterwards; Register after the first
// lookup panics, so no command can see it change.
package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kubectl-drift/kubectl-drift/internal/audit/auditapi"
	"github.com/kubectl-drift/kubectl-drift/internal/compare"
	"github.com/kubectl-drift/kubectl-drift/internal/managedfields"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/redact"
	"github.com/kubectl-drift/kubectl-drift/internal/render"
	"github.com/kubectl-drift/kubectl-drift/internal/source"
	"github.com/kubectl-drift/kubectl-drift/internal/suggest/suggestapi"
)

// Auto selects every registered engine (--engine auto).
const Auto = "auto"

// Purpose says which command an adapter is built for; engines read only
// what that command needs (explain reads the engine's settings and maybe
// the OpenAPI schema, a bystander nothing).
type Purpose string

// The purposes of Factory calls.
const (
	// ForExplain judges one object (explain).
	ForExplain Purpose = "explain"
	// ForScan judges many objects through a caching reader (scan).
	ForScan Purpose = "scan"
	// ForRules lists rules (rules, compare).
	ForRules Purpose = "rules"
	// ForNormalize normalizes objects (normalize).
	ForNormalize Purpose = "normalize"
	// ForOwner only names owners (an engine --engine left out).
	ForOwner Purpose = "owner"
)

// Config is what a command gives an engine to build its adapter.
type Config struct {
	Purpose Purpose
	// Reader reads the cluster; nil offline.
	Reader model.Reader
	// Documents are rule sources (--rules, PATH..., -k), with positions.
	Documents []source.Document
	// Manifests are the desired-state documents (explain -f), read once by
	// the command; an engine may read marks written on them.
	Manifests []source.Document
	// Live is the object explain explains (nil otherwise).
	Live *unstructured.Unstructured
	// Offline is set when the live object came from a file.
	Offline bool
	// ServerDryRun asks for a server-side apply dry-run as the engine's
	// controller (explain --server-dry-run); RESTConfig gives the client.
	ServerDryRun bool
	RESTConfig   func() (*rest.Config, error)
	// RESTMapper is the command's disk-cached RESTMapper, for the
	// dry-run clients built from RESTConfig: with it a dry-run adds its
	// PATCH and no discovery request. nil: the client discovers itself.
	RESTMapper func() (meta.RESTMapper, error)
	// Schema reads the OpenAPI definitions of one group-version (the
	// cluster's per group-version OpenAPI v3 document; only on need); nil
	// offline.
	Schema func(gv schema.GroupVersion) (map[string]*spec.Schema, error)
	// Named is set when --engine named this engine rather than auto
	// selecting every engine: the user asked for its verdict, so explain
	// reads its settings even for an object that carries none of its marks.
	Named bool
	// Flags are the values of the engine's own flags (Descriptor.Flags)
	// for this command, or nil.
	Flags Flags
	// Server is the API server URL, as the kubeconfig names it, of the
	// cluster Reader reads when Remote is nil: the live object's (explain)
	// or the scanned one's (scan, serve); "" offline. An engine that runs
	// on that cluster matches its own cluster registrations against it
	// (Argo CD: an Application deploying to another cluster owns nothing
	// here).
	Server string
	// Remote is set when the engine's objects and settings live on another
	// cluster than the live object (--engine-context, --engine-kubeconfig):
	// Reader then reads the engine's cluster, Schema and RESTConfig stay
	// the live object's.
	Remote *Remote
}

// Remote describes a hub-and-spoke (Argo CD) or management-and-remote
// (Flux) setup: where the engine runs and where the live object is.
type Remote struct {
	// EngineContext and EngineServer name the engine's cluster.
	EngineContext, EngineServer string
	// LiveContext and LiveServer name the live object's cluster.
	LiveContext, LiveServer string
	// Contexts maps each API server URL of the live kubeconfig to the
	// contexts that point at it, to match an engine's cluster
	// registrations (Argo CD cluster Secrets) against.
	Contexts map[string][]string
}

// Flags are an engine's own flags on one command (--argocd-namespace...).
type Flags interface {
	// Complete resolves and checks them once, before the command reads
	// anything else (an input file named by a flag fails early).
	Complete() error
}

// Factory builds an engine's adapter for one command. Notes are problems
// that leave the engine partly blind (no OpenAPI schema); an error means
// the engine cannot work at all.
type Factory func(ctx context.Context, cfg Config) (model.Adapter, []model.Note, error)

// Descriptor is everything the commands need to know about one engine.
type Descriptor struct {
	// Name is the --engine value and model.Engine of its verdicts.
	Name model.Engine
	// Title is how messages name it ("Argo CD").
	Title string
	// RuleObjects names the objects that hold its rules, for messages
	// ("Argo CD Application/argocd-cm").
	RuleObjects string
	// OwnershipRules names its rules that work on field ownership, for
	// the no-managedFields warning ("Argo CD managedFieldsManagers").
	OwnershipRules string
	// IsManager reports the field managers the engine writes with.
	IsManager func(manager string) bool
	// APIGroups are the groups of the engine's own kinds and of the
	// sources its objects name: a scan reads them with one LIST each
	// instead of a GET per object.
	APIGroups []string
	// IsEngineObject reports the engine's own objects (rule sources such
	// as Applications and argocd-cm), which are not workloads to compare.
	IsEngineObject func(obj *unstructured.Unstructured) bool
	// OwnerAnnotations and OwnerLabels are the marks by which the engine
	// ties a live object to its owner, as a default install writes them
	// (an adapter may know more: OwnerMarker).
	OwnerAnnotations, OwnerLabels []string
	// RulesFromDocuments extracts the rules written in files (audit, and
	// rules/compare without a cluster).
	RulesFromDocuments func(docs []source.Document) ([]model.Rule, []error)
	// SettingsFile reads a file that is no Kubernetes object but holds the
	// engine's settings (Argo CD's chart values) as documents; none when
	// the file is not one. nil when the engine has no such files.
	SettingsFile func(path string) ([]source.Document, error)
	// ComparesStatus: the engine compares a status the desired state holds.
	ComparesStatus bool
	// StatusDecidesExit: with --engine NAME, explain's exit code is the
	// engine's own status of the object (Argo CD's sync status).
	StatusDecidesExit bool
	// Flags adds the engine's own flags to a command (by name) and returns
	// their values; nil when it has none there.
	Flags func(command string, fs *pflag.FlagSet) Flags
	// ControlPlane is the engine's control-plane namespace flag, which
	// adopt and suggest take without the engine's other flags (Argo CD's
	// --argocd-namespace); nil when the engine has none.
	ControlPlane *ControlPlane
	// New builds the adapter.
	New Factory
	// Renderer renders the engine's owner objects from a checkout as the
	// engine would (render, explain --source); nil when it cannot.
	Renderer render.Renderer
	// RendererFor builds Renderer for the values of the engine's own flags
	// (Flags) when they change where its owner objects are (Argo CD's
	// --argocd-namespace: the Applications and argocd-cm); nil: Renderer
	// serves every command.
	RendererFor func(flags Flags) render.Renderer
	// DisplayType names a rule's mechanism as the user wrote it, for
	// listings (`rules`), when that is not its Type; nil or "": its Type.
	DisplayType func(r model.Rule) string
	// Compare describes the engine's rules to `compare` (what they hide,
	// what the engine cannot say of other engines' rules, translation to
	// it); Engine and Title are filled from the Descriptor. nil: its rules
	// are compared by selector and paths only, and cannot be translated to.
	Compare *compare.Semantics
	// Host is the engine's CLI that runs kubectl-drift as its plugin,
	// `<Host> drift` (Argo CD >= 3.1, Flux >= 2.9): a door whose --engine
	// default is this engine. "" for none.
	Host string
	// Suggest gives the engine's rule for a controller-owned field and
	// how to check it (`suggest`); Engine and Title are filled from the
	// Descriptor. nil: suggest proposes nothing for the engine.
	Suggest *suggestapi.Semantics
	// Audit describes the engine's rules to `audit` (which count as ignore
	// rules, which reach which, the keys of its rule shapes) and adds its
	// own checks; Name is filled from the Descriptor. nil: its rules are
	// audited as settings (no ignore rules) with the neutral checks only.
	Audit *auditapi.Engine
	// OwnerKinds are the engine's own kinds that own workloads, in the
	// order the engine lists them: its adapter judges with them, serve and
	// scan --watch cache them, render names them with a flag each.
	OwnerKinds []OwnerKind
	// Example returns the engine's lines of a command's example text
	// (bin is the command name the user types, "kubectl drift"); "" for
	// none. nil: no examples.
	Example func(command, bin string) string
}

// OwnerKind is one kind of an engine's objects that own workloads (an
// Argo CD Application, a Flux Kustomization): the commands that render
// from a checkout name such objects with a flag of their own, and the
// long-running modes cache them, so the kind, its flag and where a name
// without a namespace points are the engine's to say.
type OwnerKind struct {
	// GVK is the kind at the version the engine reads and renders.
	GVK schema.GroupVersionKind
	// Flag is the repeatable flag naming objects of this kind,
	// NAMESPACE/NAME (kustomization); Usage is its help text. "": no flag.
	Flag, Usage string
	// Namespace is where NAME alone is; "": the engine's control plane
	// (ControlPlane: the value of its flag, else its Default).
	Namespace string
}

// OwnerKindOf returns the owner kind that engine e names kind (an owner's
// model.Owner.Kind), if e has one.
func OwnerKindOf(e model.Engine, kind string) (OwnerKind, bool) {
	if d, ok := Lookup(string(e)); ok {
		for _, k := range d.OwnerKinds {
			if k.GVK.Kind == kind {
				return k, true
			}
		}
	}
	return OwnerKind{}, false
}

// ControlPlane declares an engine's control-plane namespace: where its own
// objects are when a name comes without a namespace (an Argo CD tracking
// id, render's --app NAME).
type ControlPlane struct {
	// Flag is the flag's name (argocd-namespace) and Usage its help text
	// on the commands that take it alone.
	Flag, Usage string
	// Default is the namespace of a default install (argocd).
	Default string
	// Group is the API group of the objects that live there.
	Group string
}

// ControlPlaneOf returns the control plane of the engine whose own kinds
// are in group, if it has one.
func ControlPlaneOf(group string) (*ControlPlane, bool) {
	for _, d := range reg.read() {
		if d.ControlPlane != nil && d.ControlPlane.Group == group {
			return d.ControlPlane, true
		}
	}
	return nil, false
}

// registry is the process-wide table; see the package comment.
type registry struct {
	mu     sync.Mutex
	sealed bool
	byName map[model.Engine]Descriptor
	sorted []Descriptor
}

var reg = &registry{byName: map[model.Engine]Descriptor{}}

// Register adds an engine. Call it from the engine package's init.
func Register(d Descriptor) {
	reg.mu.Lock()
	defer reg.mu.Unlock()
	switch {
	case reg.sealed:
		panic(fmt.Sprintf("engine.Register(%q) after the registry was read", d.Name))
	case d.Name == "" || d.Name == Auto || d.New == nil || d.IsManager == nil:
		panic(fmt.Sprintf("engine.Register(%q): a name (not auto), New and IsManager are required", d.Name))
	}
	if _, dup := reg.byName[d.Name]; dup {
		panic(fmt.Sprintf("engine.Register(%q) twice", d.Name))
	}
	reg.byName[d.Name] = d
	reg.sorted = append(reg.sorted, d)
	sort.Slice(reg.sorted, func(i, j int) bool { return reg.sorted[i].Name < reg.sorted[j].Name })
	managedfields.RegisterGitOpsManagers(d.IsManager)
}

func (r *registry) read() []Descriptor {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sealed = true
	return r.sorted
}

// All returns the registered engines sorted by name (stable output).
func All() []Descriptor { return slices.Clone(reg.read()) }

// Renderers returns the renderers of the registered engines that render
// from a checkout, in the registry's order; flags are the values of the
// engines' own flags of the command, by engine (nil: defaults), for the
// engines whose renderer depends on them (Descriptor.RendererFor).
func Renderers(flags map[model.Engine]Flags) []render.Renderer {
	var out []render.Renderer
	for _, d := range reg.read() {
		switch f := flags[d.Name]; {
		case f != nil && d.RendererFor != nil:
			if r := d.RendererFor(f); r != nil {
				out = append(out, r)
			}
		case d.Renderer != nil:
			out = append(out, d.Renderer)
		}
	}
	return out
}

// DisplayType names rule r's mechanism as its engine's listings do
// (Descriptor.DisplayType), else its Type.
func DisplayType(r model.Rule) string {
	if d, ok := Lookup(string(r.Engine)); ok && d.DisplayType != nil {
		if s := d.DisplayType(r); s != "" {
			return s
		}
	}
	return string(r.Type)
}

// CompareEngines returns the compare semantics of every registered engine,
// in the registry's order.
func CompareEngines() compare.Engines {
	var out compare.Engines
	for _, d := range reg.read() {
		var s compare.Semantics
		if d.Compare != nil {
			s = *d.Compare
		}
		s.Engine, s.Title = d.Name, d.Title
		out = append(out, s)
	}
	return out
}

// SuggestEngines returns the suggest semantics of the engines that have
// them, in the registry's order.
func SuggestEngines() []suggestapi.Semantics {
	var out []suggestapi.Semantics
	for _, d := range reg.read() {
		if s, ok := d.SuggestSemantics(); ok {
			out = append(out, s)
		}
	}
	return out
}

// AuditEngines returns what every registered engine tells the audit, in the
// registry's order.
func AuditEngines() []auditapi.Engine {
	var out []auditapi.Engine
	for _, d := range reg.read() {
		var a auditapi.Engine
		if d.Audit != nil {
			a = *d.Audit
		}
		a.Name = d.Name
		if a.Title == "" {
			a.Title = d.Title
		}
		out = append(out, a)
	}
	return out
}

// SuggestSemantics returns d.Suggest with the engine's name and title.
func (d Descriptor) SuggestSemantics() (suggestapi.Semantics, bool) {
	if d.Suggest == nil {
		return suggestapi.Semantics{}, false
	}
	s := *d.Suggest
	s.Engine, s.Title = d.Name, d.Title
	return s, true
}

// Lookup returns the engine named name.
func Lookup(name string) (Descriptor, bool) {
	for _, d := range reg.read() {
		if string(d.Name) == name {
			return d, true
		}
	}
	return Descriptor{}, false
}

// Names returns the engine names, sorted.
func Names() []string {
	var out []string
	for _, d := range reg.read() {
		out = append(out, string(d.Name))
	}
	return out
}

// Choices are the --engine values: auto, then every engine.
func Choices() []string { return append([]string{Auto}, Names()...) }

// Validate checks an --engine value.
func Validate(value string) error {
	if value == Auto {
		return nil
	}
	if _, ok := Lookup(value); ok {
		return nil
	}
	return fmt.Errorf("invalid --engine %q: must be %s", value, Or(Choices()))
}

// Selected returns the engines an --engine value selects (auto: all).
func Selected(value string) []Descriptor {
	if value == Auto || value == "" {
		return All()
	}
	if d, ok := Lookup(value); ok {
		return []Descriptor{d}
	}
	return nil
}

// Others returns the engines an --engine value leaves out.
func Others(value string) []Descriptor {
	if value == Auto || value == "" {
		return nil
	}
	var out []Descriptor
	for _, d := range reg.read() {
		if string(d.Name) != value {
			out = append(out, d)
		}
	}
	return out
}

// Enabled says whether an --engine value selects engine e.
func Enabled(value string, e model.Engine) bool {
	return value == "" || value == Auto || value == string(e)
}

// OwnsGroup reports whether group holds an engine's own kinds or sources
// (Descriptor.APIGroups).
func OwnsGroup(group string) bool {
	for _, d := range reg.read() {
		if slices.Contains(d.APIGroups, group) {
			return true
		}
	}
	return false
}

// EngineOf returns the engine whose own object obj is (an Application,
// a Kustomization...), if any.
func EngineOf(obj *unstructured.Unstructured) (Descriptor, bool) {
	for _, d := range reg.read() {
		if d.IsEngineObject != nil && d.IsEngineObject(obj) {
			return d, true
		}
	}
	return Descriptor{}, false
}

// SettingsDocuments reads path as every engine's settings file (audit's
// Values loader, rule directories).
func SettingsDocuments(path string) ([]source.Document, error) {
	var out []source.Document
	var errs []error
	for _, d := range reg.read() {
		if d.SettingsFile == nil {
			continue
		}
		docs, err := d.SettingsFile(path)
		out = append(out, docs...)
		if err != nil {
			errs = append(errs, err)
		}
	}
	return out, errors.Join(errs...)
}

// OwnerMarks returns every engine's owner marks: the controllers add them
// at apply time, so they are drift for no engine.
func OwnerMarks() (annotations, labels []string) {
	for _, d := range reg.read() {
		annotations = append(annotations, d.OwnerAnnotations...)
		labels = append(labels, d.OwnerLabels...)
	}
	return annotations, labels
}

// OwnershipRules names every engine's ownership-based rules, for messages.
func OwnershipRules() string {
	var parts []string
	for _, d := range reg.read() {
		if d.OwnershipRules != "" {
			parts = append(parts, d.OwnershipRules)
		}
	}
	return strings.Join(parts, ", ")
}

// Or joins values as "a, b or c".
func Or(values []string) string {
	switch len(values) {
	case 0:
		return ""
	case 1:
		return values[0]
	}
	return strings.Join(values[:len(values)-1], ", ") + " or " + values[len(values)-1]
}

// Normalizer is an adapter that shows an object as its engine sees it
// before diffing (normalize).
type Normalizer interface {
	Normalize(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error)
}

// DesiredBuilder is an adapter whose controller builds the desired state
// before applying it: kustomize-controller runs the Kustomization's own
// patches, images, name prefix/suffix, targetNamespace and postBuild
// substitution over what Git holds, and adds its ownership labels and
// commonMetadata. A manifest read from a file (explain -f, -k) is Git as
// written, so the pipeline asks the owning engine what its controller would
// apply and compares live with that instead (a field the Kustomization's
// patch sets is not drift).
type DesiredBuilder interface {
	// BuildDesired returns what the controller reconciling live would apply
	// for desired, or nil when this engine does not reconcile live. Notes
	// say what it could not build (then desired is used as written); the
	// values of Secrets the build read are added to secrets.
	BuildDesired(ctx context.Context, live, desired *unstructured.Unstructured, secrets *redact.Scrubber) (*unstructured.Unstructured, []model.Note)
}

// OwnerMarker is an adapter that names the labels and annotations by which
// it ties an object to its owner, with the engine's settings applied (a
// customized instance label). normalize copies them from live to desired:
// the controllers add them at apply time, so the desired state lacks them.
type OwnerMarker interface {
	OwnerMarks() (annotations, labels []string)
}

// RuleReader is an adapter that reads rules from files and the cluster and
// says how many cluster sources answered and what failed, each error
// naming its source: rules must not vanish silently.
type RuleReader interface {
	ReadRules(ctx context.Context) (rules []model.Rule, read int, errs []error)
}

// FileOwner is an adapter whose engine objects render the manifests of a
// source path of the checkout (Argo CD Applications): it names the
// holders a manifest file is rendered from, so that a holder's rules are
// compared by effect on its own objects only (compare). An empty answer
// means "unknown": the object may be any holder's.
type FileOwner interface {
	FileOwners(file string) []model.Owner
}

// FileNoter is an adapter with warnings about its rule files.
type FileNoter interface {
	FileNotes() []model.Note
}

// InventoryJudge is an adapter whose Judge can find drift that inference
// from managedFields cannot see: a field deleted live (nobody owns what is
// gone), or a verdict the engine's controller recorded elsewhere (a commit
// not synced yet). Inventory mode (scan, scan --watch, serve) otherwise
// judges only objects another manager wrote and inference found drifted;
// an adapter without it (the toy engine) is judged on those alone.
//
// Why an interface and not "judge every object an engine wrote, drop
// clean reports afterwards": the clean majority of a scan is never even
// decoded in full (its precheck reads metadata only), and judging each
// would cost a full decode plus the engine's diff per object. The adapter
// knows which of its objects can hide such drift and can tell cheaply.
type InventoryJudge interface {
	// JudgeClean says whether Judge may find drift on obj although no
	// relevant manager wrote it or inference found none. obj may hold
	// only metadata (a scan's precheck: name, namespace, labels,
	// annotations), or be the whole live object: then the answer may be
	// finer. It is asked for every object the adapter owns, so it must be
	// cheap, read nothing from the cluster, and answer true when unsure.
	JudgeClean(obj *unstructured.Unstructured) bool
}

// OwnerFollower is an adapter that judges with engine objects it read when
// it was built (Argo CD Applications with their recorded status, Flux
// Kustomizations and HelmReleases with their suspension and ignore rules).
// The long-running modes (scan --watch, serve) watch those kinds anyway
// (one LIST and one WATCH per kind) and hand every change to UpdateOwner,
// so that verdicts follow the objects as they are now instead of as they
// were at start-up. One-shot commands never call it.
type OwnerFollower interface {
	// UpdateOwner replaces the adapter's copy of one engine object (obj as
	// the cluster has it now; deleted: it is gone) and says whose verdicts
	// that may change. An object the adapter does not judge with, or one
	// it already holds at this resourceVersion, changes nothing. It reads
	// nothing from the cluster, may be called while Judge runs, and keeps
	// at most one copy (and one index) per engine object.
	UpdateOwner(obj *unstructured.Unstructured, deleted bool) OwnerChange
}

// OwnerChange is what an engine object's change means for the verdicts.
type OwnerChange struct {
	// Owner is the engine object as model.Owner names its objects' owner
	// (Kind, Namespace, Name); zero when nothing changed.
	Owner model.Owner
	// All: every object it owns may be judged otherwise (its rules, sync
	// policy or suspension changed).
	All bool
	// Objects are the objects whose verdict may change otherwise (the
	// engine's recorded status of them changed), when not All. Version
	// is not set.
	Objects []model.ResourceID
}

// Changed says whether any verdict may change.
func (c OwnerChange) Changed() bool { return c.All || len(c.Objects) > 0 }
