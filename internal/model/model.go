// Package model is the engine-neutral drift vocabulary that every adapter
// translates into and every command works on. It imports nothing of Argo CD
// or Flux: adding a third engine is a new adapter, not a change here.
//
// The JSON form of these types is the stable `-o json|yaml` output of the
// commands; field names are part of the public contract.
package model

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// APIVersion versions the JSON/YAML documents the commands print.
const APIVersion = "drift.kubectl.dev/v1alpha1"

// Engine names a GitOps engine: each engine package has its own constant
// (argocd.Engine, flux.Engine) and registers it (internal/engine).
type Engine string

// ResourceID identifies one Kubernetes object.
type ResourceID struct {
	Group     string `json:"group"`
	Version   string `json:"version"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// GroupKind renders "group/Kind", or "Kind" for the core group, the way
// kubectl prints resource types.
func (r ResourceID) GroupKind() string {
	if r.Group == "" {
		return r.Kind
	}
	return r.Kind + "." + r.Group
}

// String renders "Kind.group ns/name" (or "Kind name" when cluster scoped).
func (r ResourceID) String() string {
	if r.Namespace == "" {
		return r.GroupKind() + " " + r.Name
	}
	return r.GroupKind() + " " + r.Namespace + "/" + r.Name
}

// Less orders resources by namespace, group, kind, name for stable output.
func (r ResourceID) Less(o ResourceID) bool {
	return cmp.Or(
		cmp.Compare(r.Namespace, o.Namespace),
		cmp.Compare(r.Group, o.Group),
		cmp.Compare(r.Kind, o.Kind),
		cmp.Compare(r.Name, o.Name),
	) < 0
}

// Owner is the engine object that reconciles a resource.
type Owner struct {
	Engine Engine `json:"engine"`
	// Kind is the engine object's kind: Application, Kustomization, HelmRelease.
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	// Via says how ownership was found, e.g. "annotation argocd.argoproj.io/tracking-id"
	// or "labels kustomize.toolkit.fluxcd.io/name,namespace".
	Via string `json:"via"`
	// Found is false when the owner was named by the resource but the
	// engine object itself could not be read (missing, Forbidden).
	Found bool `json:"found"`
	// Missing is true when the engine object named by the resource does
	// not exist (NotFound, or the engine is not installed): nothing
	// reconciles the resource, so no field is reverted.
	Missing bool `json:"missing,omitempty"`
	// NotJudged is true when --engine left this owner's engine out: it
	// reconciles the resource, but its verdicts are not in the report.
	NotJudged bool `json:"notJudged,omitempty"`
	// Interval is the reconcile interval as the engine writes it ("10m"),
	// empty when unknown (Argo CD's default is controller-wide).
	Interval string `json:"interval,omitempty"`
	// AutoSync and SelfHeal are Argo CD's syncPolicy.automated settings.
	AutoSync bool `json:"autoSync,omitempty"`
	SelfHeal bool `json:"selfHeal,omitempty"`
	// Suspended is Flux's spec.suspend (nothing is applied while set).
	Suspended bool `json:"suspended,omitempty"`
	// DriftDetection is HelmRelease spec.driftDetection.mode:
	// enabled, warn or disabled (the default when unset).
	DriftDetection string `json:"driftDetection,omitempty"`
	// Mode is a free-form summary of the settings that decide verdicts,
	// e.g. "auto-sync, self-heal" or "ssa: Merge".
	Mode string `json:"mode,omitempty"`
}

// Ref renders "Kind ns/name" of the owner.
func (o Owner) Ref() string {
	if o.Namespace == "" {
		return o.Kind + " " + o.Name
	}
	return o.Kind + " " + o.Namespace + "/" + o.Name
}

// Origin says where a rule is written: a file position, or an object and the
// field path inside it, or both.
type Origin struct {
	File   string `json:"file,omitempty"`
	Line   int    `json:"line,omitempty"`
	Column int    `json:"column,omitempty"`
	// Object is "Kind ns/name" of the object holding the rule.
	Object string `json:"object,omitempty"`
	// Field is the path of the rule inside Object, e.g.
	// ".spec.ignoreDifferences[2]" or
	// "data[resource.customizations.ignoreDifferences.apps_Deployment]".
	Field string `json:"field,omitempty"`
	// Context is the kubeconfig context Object was read from when rules
	// of several clusters are put side by side (compare --contexts).
	Context string `json:"context,omitempty"`
}

// Compare orders origins the way a reader meets them: by context (rules
// of several clusters), file, line and
// column, then by the object and field holding the rule (origins without a
// position, e.g. read from the cluster). It returns -1, 0 or +1 like
// cmp.Compare; every command that lists rules or findings sorts with it.
func (o Origin) Compare(p Origin) int {
	return cmp.Or(
		cmp.Compare(o.Context, p.Context),
		cmp.Compare(o.File, p.File),
		cmp.Compare(o.Line, p.Line),
		cmp.Compare(o.Column, p.Column),
		cmp.Compare(o.Object, p.Object),
		cmp.Compare(o.Field, p.Field),
	)
}

// String renders the origin as a person would cite it.
func (o Origin) String() string {
	var parts []string
	if o.Object != "" {
		parts = append(parts, o.Object+" "+o.Field)
	}
	if o.File != "" {
		pos := o.File
		if o.Line > 0 {
			pos += fmt.Sprintf(":%d", o.Line)
			if o.Column > 0 {
				pos += fmt.Sprintf(":%d", o.Column)
			}
		}
		parts = append(parts, pos)
	}
	s := strings.TrimSpace(strings.Join(parts, " at "))
	if o.Context != "" {
		s += " in context " + o.Context
	}
	return s
}

// MatchSyntax says how a Selector's strings match.
type MatchSyntax string

// Match syntaxes used by the engines.
const (
	// MatchGlob: Argo CD group/kind (gobwas/glob); name and namespace exact.
	MatchGlob MatchSyntax = "glob"
	// MatchRegex: Flux target fields, anchored as ^(?:...)$.
	MatchRegex MatchSyntax = "regex"
	// MatchExact: plain string equality, empty meaning any.
	MatchExact MatchSyntax = "exact"
)

// Selector picks the resources a rule applies to. Empty fields match all.
type Selector struct {
	Group     string `json:"group,omitempty"`
	Version   string `json:"version,omitempty"`
	Kind      string `json:"kind,omitempty"`
	Name      string `json:"name,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	// Syntax of Group/Kind (and of Name/Namespace for regex selectors).
	Syntax             MatchSyntax `json:"syntax,omitempty"`
	LabelSelector      string      `json:"labelSelector,omitempty"`
	AnnotationSelector string      `json:"annotationSelector,omitempty"`
}

// Scope says which engine phase a rule affects.
type Scope string

// Rule scopes.
const (
	// ScopeDiff: hidden from the diff only; a sync/apply may still write it.
	ScopeDiff Scope = "diff"
	// ScopeDiffAndApply: neither reported nor written (Flux ignore,
	// Argo ignoreDifferences with RespectIgnoreDifferences).
	ScopeDiffAndApply Scope = "diff+apply"
	// ScopeApply: changes how the engine applies (ssa annotations).
	ScopeApply Scope = "apply"
	// ScopeDiscovery: the resource is invisible to the engine.
	ScopeDiscovery Scope = "discovery"
	// ScopeRefresh: only suppresses refresh (Argo ignoreResourceUpdates).
	ScopeRefresh Scope = "refresh"
)

// RuleType names the engine mechanism a rule comes from.
type RuleType string

// The rule types are declared by the engines that own them
// (argocd.RuleIgnoreDifferences, flux.RuleKustomizeIgnore...); their string
// values ("argocd.ignoreDifferences") are what JSON and SARIF output show.

// Rule is one engine instruction that some difference is not drift.
type Rule struct {
	Engine Engine   `json:"engine"`
	Type   RuleType `json:"type"`
	Origin Origin   `json:"origin"`
	Target Selector `json:"target"`
	// JSONPointers are RFC 6901 paths removed before diffing.
	JSONPointers []string `json:"jsonPointers,omitempty"`
	// JQPathExpressions are jq path expressions removed as del(EXPR).
	JQPathExpressions []string `json:"jqPathExpressions,omitempty"`
	// Managers are field managers whose fields are not drift.
	Managers []string `json:"managedFieldsManagers,omitempty"`
	// WholeResource: the rule covers the entire object.
	WholeResource bool  `json:"wholeResource,omitempty"`
	Scope         Scope `json:"scope"`
	// Value carries a mechanism's setting, e.g. "Merge" for an ssa annotation.
	Value string `json:"value,omitempty"`
	// Error is set when the rule cannot be evaluated (bad jq, bad regex...).
	// The rest of the rules are still evaluated.
	Error string `json:"error,omitempty"`
}

// CompareRules orders rules by engine, then origin (Origin.Compare).
func CompareRules(a, b Rule) int {
	return cmp.Or(cmp.Compare(a.Engine, b.Engine), a.Origin.Compare(b.Origin))
}

// SortRules sorts rules with CompareRules (stable), so that every listing
// of rules is the same on every run.
func SortRules(rs []Rule) {
	slices.SortStableFunc(rs, CompareRules)
}

// ChangeKind says how a field differs.
type ChangeKind string

// Change kinds, seen from desired to live.
const (
	// Changed: present in both, with different values.
	Changed ChangeKind = "changed"
	// Added: present live, absent from desired.
	Added ChangeKind = "added"
	// Removed: present in desired, absent live.
	Removed ChangeKind = "removed"
)

// CauseClass classifies who made a change.
type CauseClass string

// Cause classes of field managers.
const (
	CauseManual     CauseClass = "manual"     // kubectl edit/patch/scale/set/label...
	CauseGitOps     CauseClass = "gitops"     // argocd-controller, kustomize-controller...
	CauseAutoscaler CauseClass = "autoscaler" // HPA (kube-controller-manager on scale), VPA
	CauseController CauseClass = "controller" // built-in controllers
	CauseOperator   CauseClass = "operator"   // operators and injectors (cert-manager, ...)
	CauseUnknown    CauseClass = "unknown"
)

// ManagerRef is one field manager's claim on a field.
type ManagerRef struct {
	Manager     string     `json:"manager"`
	Operation   string     `json:"operation"` // Apply or Update
	Subresource string     `json:"subresource,omitempty"`
	Time        *time.Time `json:"time,omitempty"`
	Class       CauseClass `json:"class"`
}

// VerdictKind is what an engine will do about a drifted field.
type VerdictKind string

// Verdict kinds.
const (
	// Reverted: the engine writes the desired value back on its next reconcile.
	Reverted VerdictKind = "reverted"
	// Reported: the engine reports drift (OutOfSync, warn) but does not revert.
	Reported VerdictKind = "reported"
	// Ignored: a rule hides the field from the engine.
	Ignored VerdictKind = "ignored"
	// LeftAlone: the engine does not own the field and leaves it be.
	LeftAlone VerdictKind = "left-alone"
	// NotApplied: the engine never applies this object (suspended, ssa: Ignore...).
	NotApplied VerdictKind = "not-applied"
	// NotWatched: the engine does not look for drift here (detection disabled).
	NotWatched VerdictKind = "not-watched"
	// Excluded: the resource is invisible to the engine.
	Excluded VerdictKind = "excluded"
	// ApplyFails: the engine's next apply of the object fails (the reason
	// names the cause, e.g. the API server's validation error), so the
	// live value stays while the engine reports an error (Flux:
	// Kustomization Ready=False). The engine acts: the exit code is 1.
	ApplyFails VerdictKind = "apply-fails"
	// Unknown: the verdict depends on the desired state, which was not
	// given (inferred mode); the reason says which flag tells.
	Unknown VerdictKind = "unknown"
)

// Verdict is one engine's decision about one drifted field.
type Verdict struct {
	Engine Engine      `json:"engine"`
	Kind   VerdictKind `json:"verdict"`
	Reason string      `json:"reason"`
	// Rule is the origin of the rule that decided, when one did.
	Rule *Origin `json:"rule,omitempty"`
}

// FieldDrift is one drifted field of one resource.
type FieldDrift struct {
	// Path is an RFC 6901 JSON pointer into the live object (list items by index).
	Path string `json:"path"`
	// FieldPath is the same field with associative list items named by their
	// keys, as the API server keys them: .spec.containers[name=app].image
	FieldPath string     `json:"fieldPath"`
	Change    ChangeKind `json:"change"`
	// Desired and Live are JSON values; nil when absent. Secret data is masked.
	Desired any `json:"desired,omitempty"`
	Live    any `json:"live,omitempty"`
	// Managers own the field now, most recent first.
	Managers []ManagerRef `json:"managers,omitempty"`
	// Cause is the class of the most recent non-GitOps manager, or unknown.
	Cause CauseClass `json:"cause"`
	// Verdicts holds one entry per engine that has an opinion.
	Verdicts []Verdict `json:"verdicts,omitempty"`
	// PersistedReconciles is how many reconciles of an owner the drift
	// survived: reconciles (Flux status.lastHandledReconcileAt, Argo CD
	// status.reconciledAt / operationState.finishedAt) newer than the
	// culprit's write, seen while the field stayed drifted. Only `serve`,
	// which watches the owners, counts them; 0 means none seen or not
	// known (explain and scan see one moment, not reconciles).
	PersistedReconciles int `json:"persistedReconciles,omitempty"`
}

// Counts reports whether the drift counts as drift for exit codes: a field is
// not drift only when every engine that judged it ignores it or cannot see it.
func (f FieldDrift) Counts() bool {
	if len(f.Verdicts) == 0 {
		return true
	}
	for _, v := range f.Verdicts {
		if v.Kind != Ignored && v.Kind != Excluded {
			return true
		}
	}
	return false
}

// NoteLevel grades a note.
type NoteLevel string

// Note levels.
const (
	NoteInfo    NoteLevel = "info"
	NoteWarning NoteLevel = "warning"
	NoteError   NoteLevel = "error"
)

// Note explains something about a report that is not a field drift: most
// importantly a rule that targets this object but removes nothing, and why.
type Note struct {
	Engine Engine    `json:"engine,omitempty"`
	Level  NoteLevel `json:"level"`
	Rule   *Origin   `json:"rule,omitempty"`
	// Reason is a code such as "group-mismatch", "pointer-absent",
	// "jq-timeout", "manager-not-seen", "no-schema".
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message"`
	// AboutObject marks a note about this object itself rather than
	// about the engine's setup: it is kept under --engine auto even when
	// the engine does not reconcile the object (an Argo CD tracking id
	// that names an Application deploying to another cluster: nothing
	// reconciles the object, though its marks say something does).
	AboutObject bool `json:"-"`
}

// DesiredSource says where the desired state came from.
type DesiredSource string

// Desired-state sources.
const (
	SourceFile          DesiredSource = "file"
	SourceKustomize     DesiredSource = "kustomize"
	SourceServerDryRun  DesiredSource = "server-dry-run"
	SourceRendered      DesiredSource = "rendered"       // from a checkout, as the engine renders it (--source)
	SourceManagedFields DesiredSource = "managed-fields" // inferred from field ownership
)

// Report is the drift of one resource.
type Report struct {
	APIVersion    string        `json:"apiVersion"`
	Kind          string        `json:"kind"`
	Resource      ResourceID    `json:"resource"`
	Owners        []Owner       `json:"owners,omitempty"`
	DesiredSource DesiredSource `json:"desiredSource"`
	Drifts        []FieldDrift  `json:"drifts"`
	Notes         []Note        `json:"notes,omitempty"`
	// Status is each engine's verdict on the whole object, where the engine
	// has one (Argo CD's Synced/OutOfSync).
	Status []ObjectStatus `json:"status,omitempty"`
	// Undetermined, when set, says why drift could not be told at all (no
	// managedFields to infer from and no desired state given) and which
	// flag would give an answer. An empty Drifts then means "unknown", not
	// "no drift".
	Undetermined string `json:"undetermined,omitempty"`
}

// ObjectStatus is one engine's verdict on a whole object: for Argo CD the
// resource's sync status. An engine reports it when a field-by-field reading
// would not give the same answer (a live-only field the engine leaves alone
// is shown as drift but does not make the object OutOfSync).
type ObjectStatus struct {
	Engine Engine `json:"engine"`
	// Drift is true when the engine sees the object as drifted (OutOfSync).
	Drift bool `json:"drift"`
	// Status is the engine's own word, e.g. "Synced" or "OutOfSync".
	Status string `json:"status"`
	// From says who decided: "computed" (this tool, offline) or the Argo CD
	// API the status was read from.
	From string `json:"from,omitempty"`
}

// SetStatus records an engine's object verdict, replacing an earlier one.
func (r *Report) SetStatus(s ObjectStatus) {
	for i := range r.Status {
		if r.Status[i].Engine == s.Engine {
			r.Status[i] = s
			return
		}
	}
	r.Status = append(r.Status, s)
}

// StatusDrift says whether an engine's verdict on the whole object is
// drift (Argo CD's OutOfSync), with or without a drifted field: a Git
// commit not synced yet leaves the live object equal to the last sync.
func (r *Report) StatusDrift() bool {
	for _, s := range r.Status {
		if s.Drift {
			return true
		}
	}
	return false
}

// StatusOf returns an engine's object verdict, if it gave one.
func (r *Report) StatusOf(e Engine) (ObjectStatus, bool) {
	for _, s := range r.Status {
		if s.Engine == e {
			return s, true
		}
	}
	return ObjectStatus{}, false
}

// ExitUndetermined is the exit code of a report whose drift cannot be
// told: distinct from 0 (no drift), 1 (drift) and 2 (error), and above 1 so
// scripts that treat kubectl diff's ">1" as failure do not read it as clean.
const ExitUndetermined = 3

// NewReport starts an empty report for a resource.
func NewReport(id ResourceID, src DesiredSource) *Report {
	return &Report{APIVersion: APIVersion, Kind: "DriftReport", Resource: id, DesiredSource: src, Drifts: []FieldDrift{}}
}

// HasDrift reports whether any field drift counts (see FieldDrift.Counts)
// or an engine's verdict on the whole object is drift (StatusDrift: no
// field may say why).
func (r *Report) HasDrift() bool {
	for _, d := range r.Drifts {
		if d.Counts() {
			return true
		}
	}
	return r.StatusDrift()
}

// Sort puts drifts in path order and notes in a stable order, so output is
// the same on every run.
func (r *Report) Sort() {
	sort.SliceStable(r.Drifts, func(i, j int) bool { return r.Drifts[i].Path < r.Drifts[j].Path })
	for i := range r.Drifts {
		v := r.Drifts[i].Verdicts
		sort.SliceStable(v, func(a, b int) bool { return v[a].Engine < v[b].Engine })
	}
	sort.SliceStable(r.Notes, func(i, j int) bool {
		a, b := r.Notes[i], r.Notes[j]
		if a.Engine != b.Engine {
			return a.Engine < b.Engine
		}
		return a.Message < b.Message
	})
	sort.SliceStable(r.Owners, func(i, j int) bool { return r.Owners[i].Engine < r.Owners[j].Engine })
}

// SetVerdict records an engine's verdict on this drift, replacing an earlier
// verdict of the same engine. Prefer it to AddVerdict when iterating: a list
// item edited in place (Service port 80 -> 8080) is two drifts at one path,
// the removed item (a pointer into desired) and the added one (into live).
func (f *FieldDrift) SetVerdict(v Verdict) {
	for j := range f.Verdicts {
		if f.Verdicts[j].Engine == v.Engine {
			f.Verdicts[j] = v
			return
		}
	}
	f.Verdicts = append(f.Verdicts, v)
}

// AddVerdict records an engine's verdict on the drift at path; it replaces an
// earlier verdict of the same engine.
func (r *Report) AddVerdict(path string, v Verdict) {
	for i := range r.Drifts {
		if r.Drifts[i].Path != path {
			continue
		}
		vs := r.Drifts[i].Verdicts
		for j := range vs {
			if vs[j].Engine == v.Engine {
				vs[j] = v
				return
			}
		}
		r.Drifts[i].Verdicts = append(vs, v)
		return
	}
}

// Acts reports whether an engine will act on (revert) or report this
// difference, fail trying (apply-fails), or could not say (unknown): the engines' own verdict, which
// decides the exit code. A field no engine judged acts too. Differences that
// every engine leaves as they are (left alone, not applied, not watched,
// ignored, excluded; e.g. the ownership labels an engine sets itself) are
// still shown but are not drift for the exit code.
func (f FieldDrift) Acts() bool {
	if len(f.Verdicts) == 0 {
		return true
	}
	for _, v := range f.Verdicts {
		switch v.Kind {
		case Reverted, Reported, Unknown, ApplyFails:
			return true
		}
	}
	return false
}

// ExitCode follows kubectl diff: 0 no drift, 1 drift, where drift is what
// the engines act on or report (FieldDrift.Acts). (2 is for errors.)
func (r *Report) ExitCode() int {
	for _, d := range r.Drifts {
		if d.Acts() {
			return 1
		}
	}
	if r.Undetermined != "" {
		return ExitUndetermined
	}
	return 0
}

// List is the document printed for commands that report many resources.
type List struct {
	APIVersion string    `json:"apiVersion"`
	Kind       string    `json:"kind"`
	Items      []*Report `json:"items"`
}
