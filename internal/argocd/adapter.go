package argocd

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/source"
)

// GVKs the adapter reads.
var (
	applicationGVK = schema.GroupVersionKind{Group: "argoproj.io", Version: "v1alpha1", Kind: "Application"}
	configMapGVK   = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
)

// Input is one object read from a file, with a way to find positions in it.
// source.Document converts to it (FromDocuments).
type Input struct {
	Object *unstructured.Unstructured
	File   string
	// Pos returns the 1-based line and column of a JSON pointer, or 0, 0.
	Pos func(pointer string) (line, col int)
}

// Options configure the adapter.
type Options struct {
	// Reader reads the cluster; nil means offline (files only).
	Reader model.Reader
	// Documents are Applications, ApplicationSets, argocd-cm and
	// argocd-cmd-params-cm read from files. Other objects are ignored.
	Documents []source.Document
	// Inputs are the same as Documents, for callers without YAML nodes.
	Inputs []Input
	// Namespace is Argo CD's control-plane namespace (default "argocd").
	Namespace string
	// GVKParser comes from the cluster's OpenAPI; nil makes
	// managedFieldsManagers rules run on a deduced schema (lists atomic)
	// with a "no-schema" note, as Argo silently falls back.
	GVKParser GVKParser
	// JQTimeout overrides argocd-cmd-params-cm ignore.normalizer.jq.timeout
	// (default 1s).
	JQTimeout time.Duration
	// ArgoDiff is Argo CD's own computed diff: a saved managed-resources
	// response and/or the API server.
	ArgoDiff ArgoDiffOptions
	// DryRun runs server-side apply dry-runs for Applications that use
	// server-side diff; nil means those are judged with the client-side
	// diff and a note (the tool is read-only unless asked).
	DryRun DryRunner
	// Cluster is the destination server URL used for resource.exclusions
	// cluster globs (default https://kubernetes.default.svc).
	Cluster string
	// Inventory is set for scan, scan --watch and serve: notes about every
	// object alike (verdicts compare with the last sync) are said once,
	// by ScanNotes, not on each report.
	Inventory bool
	// OneObject is set for explain, which judges one object: Load reads
	// argocd-cm only, not every Application (a LIST that grows with the
	// installation); the Application the object's tracking names is read
	// by GET (ReadOwner), argocd-cmd-params-cm only when it can change
	// that Application's comparison (ReadParams).
	OneObject bool
	// FindUntracked (--engine argocd named) makes ReadOwner LIST the
	// Applications for an object without tracking marks even when no Argo
	// CD manager wrote it (a server-side apply by another manager can move
	// all of Argo CD's fields to itself): status.resources may still list
	// it. Without it, only an object Argo CD wrote costs that LIST.
	FindUntracked bool
	// Schema reads the OpenAPI definitions of one group-version when
	// GVKParser is nil; it is called once per group-version, and only when
	// a verdict needs the schema (a managedFieldsManagers rule applies to
	// the object, or a structured-merge or server-side diff runs).
	Schema SchemaFunc
}

// appEntry is an Application with where it was read from.
type appEntry struct {
	app *Application
	src cmSource
	// paths are the source paths of an Application read from a file (see
	// localSourcePaths), for FileOwners.
	paths []string
}

// Adapter is the Argo CD model.Adapter.
type Adapter struct {
	opts Options

	mu       sync.Mutex
	loaded   bool
	settings *Settings
	// instances are every argocd-cm read from files (settings is the last).
	instances []*Settings
	// cmFromFile: argocd-cm came from files, so the cluster's is not read.
	cmFromFile     bool
	paramsFromFile bool
	apps           map[string]*appEntry // by namespace/name
	// sameName holds, by namespace/name, the Applications read from files
	// before the one in apps with the same namespace/name: per-environment
	// folders (one Argo CD instance each) commonly repeat an Application's
	// name. Only one can exist in a cluster, so apps (the last read) is
	// what cluster lookups use; the rules and source paths of every file
	// are kept (Rules, FileOwners), each with its own origin.
	sameName  map[string][]*appEntry
	appSets   []*appEntry
	loadNotes []model.Note
	// readOK counts the cluster reads that found their object (argocd-cm,
	// argocd-cmd-params-cm, the Applications list of an installed Argo CD);
	// readErrs are the reads that failed, one per source, each naming it.
	// NotFound is neither: Argo CD is not installed or uses defaults.
	readOK   int
	readErrs []error
	managed  *ManagedResources
	// triedGet: Applications already read one by one; missingApps: those
	// of them the cluster said do not exist.
	triedGet    map[string]bool
	missingApps map[string]bool
	// compiled caches each Application's rules, compiled once.
	compiled map[*Application][]*ignoreRule
	// generated are the Applications of ApplicationSets expanded offline
	// (list and cluster generators), by namespace/name; their rules are
	// the template's, listed once through appSets.
	generated map[string]*appEntry
	// remote is set with --engine-context (setRemote, fleet.go): the
	// Applications' destinations against the live object's cluster.
	remote *remoteState
	// outOfSync indexes, per Application (namespace/name), the resources
	// its status records OutOfSync (JudgeClean asks for every object of a
	// scan); an entry holds the resourceVersion it was built from.
	outOfSync map[string]outOfSyncIndex
	// comparedLastApplied: in inventory mode, some verdict compared with
	// the last sync (ScanNotes says so once).
	comparedLastApplied bool
	// paramsRead: argocd-cmd-params-cm was read (or came from files).
	paramsRead bool
	// schemas holds what opts.Schema gave, per group-version.
	schemas schemaCache
	// listed: the Applications were LISTed (load, or ReadOwner for an
	// object without tracking marks).
	listed bool
	// statusIndex lists, by resource, the Applications (namespace/name)
	// whose status.resources record it; nil when apps changed since it
	// was built (statusowner.go).
	statusIndex map[resKey][]string
}

var _ model.Adapter = (*Adapter)(nil)

// New builds the adapter from files; the cluster (if any) is read lazily by
// Judge, Rules and Normalize.
func New(opts Options) (*Adapter, error) {
	if opts.Namespace == "" {
		opts.Namespace = DefaultNamespace
	}
	if opts.Cluster == "" {
		opts.Cluster = "https://kubernetes.default.svc"
	}
	a := &Adapter{opts: opts, apps: map[string]*appEntry{}, settings: DefaultSettings()}
	var params map[string]string
	var paramsSrc cmSource
	inputs := append(append([]Input{}, opts.Inputs...), FromDocuments(opts.Documents)...)
	type appSetInput struct {
		u   *unstructured.Unstructured
		src cmSource
	}
	var appSetObjs []appSetInput
	for _, in := range inputs {
		u := in.Object
		if u == nil {
			continue
		}
		gvk := u.GroupVersionKind()
		src := cmSource{Object: u.GetKind() + " " + nsName(u.GetNamespace(), u.GetName()), File: in.File, Pos: in.Pos}
		switch {
		case gvk.Group == "argoproj.io" && gvk.Kind == "Application":
			app, err := decodeApplication(u)
			if err != nil {
				a.loadNotes = append(a.loadNotes, fileNote(src, "invalid-application", err))
				continue
			}
			if app.Metadata.Namespace == "" {
				app.Metadata.Namespace = opts.Namespace
				src.Object = "Application " + nsName(app.Metadata.Namespace, app.Metadata.Name)
			}
			key := app.Metadata.Namespace + "/" + app.Metadata.Name
			if prev, ok := a.apps[key]; ok {
				if a.sameName == nil {
					a.sameName = map[string][]*appEntry{}
				}
				a.sameName[key] = append(a.sameName[key], prev)
			}
			a.apps[key] = &appEntry{app: app, src: src, paths: localSourcePaths(u)}
		case gvk.Group == "argoproj.io" && gvk.Kind == "ApplicationSet":
			app, err := decodeAppSetTemplate(u)
			if err != nil {
				a.loadNotes = append(a.loadNotes, fileNote(src, "invalid-applicationset", err))
				continue
			}
			src.Prefix = "/spec/template"
			a.appSets = append(a.appSets, &appEntry{app: app, src: src})
			appSetObjs = append(appSetObjs, appSetInput{u, src})
		case gvk.Group == "" && gvk.Kind == "ConfigMap" && u.GetName() == cmName:
			if from := u.GetAnnotations()[SettingsFromAnnotation]; from != "" {
				src.Object, src.Fields = from, settingsFields(u.GetAnnotations())
			}
			// Each argocd-cm is its own Argo CD instance (one per
			// environment or cluster is common): all are kept with their
			// origins; the last read is the one judging objects.
			a.settings = ParseSettings(stringMap(u, "data"), src)
			a.instances = append(a.instances, a.settings)
			a.cmFromFile = true
		case gvk.Group == "" && gvk.Kind == "ConfigMap" && u.GetName() == cmdParamsName:
			params, paramsSrc = stringMap(u, "data"), src
			a.paramsFromFile = true
		}
	}
	if params != nil {
		a.settings.ParseCmdParams(params, paramsSrc)
	}
	if len(a.instances) > 1 {
		var files []string
		for _, s := range a.instances {
			files = append(files, s.Source.Object+" ("+s.Source.File+")")
		}
		a.loadNotes = append(a.loadNotes, model.Note{Engine: Engine, Level: model.NoteWarning, Reason: "several-instances",
			Message: fmt.Sprintf("%d Argo CD settings (argocd-cm) read: %s; objects are judged with the last one, %s: give the files of one Argo CD instance to judge with another",
				len(a.instances), strings.Join(files, ", "), files[len(files)-1])})
	}
	// ApplicationSets: the generated Applications carry the template's
	// rules; without them normalize --rules and explain would apply none.
	if len(appSetObjs) > 0 {
		secrets := clusterSecrets(inputs)
		a.generated = map[string]*appEntry{}
		for _, as := range appSetObjs {
			apps, skipped := expandAppSet(as.u, secrets)
			for _, app := range apps {
				a.generated[app.Metadata.Namespace+"/"+app.Metadata.Name] = &appEntry{app: app, src: as.src}
			}
			for _, sk := range skipped {
				o := as.src.origin("spec.generators", "/spec/generators")
				a.loadNotes = append(a.loadNotes, model.Note{Engine: Engine, Level: model.NoteWarning, Rule: &o, Reason: "appset-not-expanded",
					Message: fmt.Sprintf("%s: %s, so it is not expanded offline: the Applications it generates are unknown here and the template's ignoreDifferences are not applied to their objects", as.src.Object, sk)})
			}
		}
	}
	return a, nil
}

// FileNotes returns the problems and warnings found while reading the
// files (invalid Applications, ApplicationSet generators not expanded).
func (a *Adapter) FileNotes() []model.Note {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]model.Note(nil), a.loadNotes...)
}

func fileNote(src cmSource, reason string, err error) model.Note {
	o := src.origin("", "")
	return model.Note{Engine: Engine, Level: model.NoteError, Rule: &o, Reason: reason, Message: err.Error()}
}

func nsName(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}

func stringMap(u *unstructured.Unstructured, field string) map[string]string {
	out := map[string]string{}
	m, _, _ := unstructured.NestedMap(u.Object, field)
	for k, v := range m {
		switch s := v.(type) {
		case string:
			out[k] = s
		case nil:
			out[k] = ""
		default:
			b, _ := json.Marshal(s)
			out[k] = string(b)
		}
	}
	return out
}

func decodeApplication(u *unstructured.Unstructured) (*Application, error) {
	data, err := json.Marshal(u.Object)
	if err != nil {
		return nil, err
	}
	app := &Application{}
	if err := json.Unmarshal(data, app); err != nil {
		return nil, fmt.Errorf("Application %s: %w", u.GetName(), err)
	}
	return app, nil
}

// decodeAppSetTemplate reads spec.template of an ApplicationSet as an
// Application (its ignore rules are what generated apps carry). Template
// parameters stay unexpanded.
func decodeAppSetTemplate(u *unstructured.Unstructured) (*Application, error) {
	tmpl, ok, err := unstructured.NestedMap(u.Object, "spec", "template")
	if err != nil || !ok {
		return nil, fmt.Errorf("ApplicationSet %s has no spec.template", u.GetName())
	}
	data, err := json.Marshal(tmpl)
	if err != nil {
		return nil, err
	}
	app := &Application{}
	if err := json.Unmarshal(data, app); err != nil {
		return nil, fmt.Errorf("ApplicationSet %s spec.template: %w", u.GetName(), err)
	}
	app.Metadata.Namespace = u.GetNamespace()
	if app.Metadata.Name == "" {
		app.Metadata.Name = u.GetName()
	}
	return app, nil
}

// Engine implements model.Adapter.
func (a *Adapter) Engine() model.Engine { return Engine }

// Load reads the cluster's Argo CD settings and Applications now (Judge,
// Rules and Normalize do it on first use). Call it before Owner when the
// cluster's argocd-cm may switch tracking to labels or rename the instance
// label: Owner itself never reads the cluster.
func (a *Adapter) Load(ctx context.Context) { a.load(ctx) }

// load reads argocd-cm, argocd-cmd-params-cm and Applications from the
// cluster once, unless files already gave them. Forbidden and NotFound are
// notes, not errors: the tool works with partial RBAC.
func (a *Adapter) load(ctx context.Context) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.loaded {
		return
	}
	a.loaded = true
	if a.opts.ArgoDiff.configured() {
		mr, err := a.opts.ArgoDiff.load(ctx, a.apps)
		if err != nil {
			a.loadNotes = append(a.loadNotes, model.Note{Engine: Engine, Level: model.NoteError, Reason: "argocd-diff", Message: err.Error()})
		}
		a.managed = mr
	}
	r := a.opts.Reader
	if r == nil {
		return
	}
	if !a.cmFromFile {
		cm, err := r.Get(ctx, configMapGVK, a.opts.Namespace, cmName)
		switch {
		case err == nil:
			a.readOK++
			src := cmSource{Object: "ConfigMap " + a.opts.Namespace + "/" + cmName}
			a.settings = ParseSettings(stringMap(cm, "data"), src)
		case apierrors.IsNotFound(err):
			// No argocd-cm: the defaults apply, as in a fresh install.
		default:
			a.readFailed("ConfigMap "+a.opts.Namespace+"/"+cmName, err)
		}
	}
	if a.opts.OneObject {
		return
	}
	a.readParamsLocked(ctx)
	a.listAppsLocked(ctx)
}

// listAppsLocked LISTs the Applications once. Call it with a.mu held.
func (a *Adapter) listAppsLocked(ctx context.Context) {
	if a.listed {
		return
	}
	a.listed = true
	r := a.opts.Reader
	// One LIST in all namespaces: apps outside the control-plane namespace
	// track their resources as <ns>_<name>.
	list, err := r.List(ctx, applicationGVK, "", "")
	if apierrors.IsForbidden(err) {
		// Namespaced RBAC: the control-plane namespace at least; Judge
		// reads other Applications one by one.
		list, err = r.List(ctx, applicationGVK, a.opts.Namespace, "")
	}
	if err != nil {
		if !apierrors.IsNotFound(err) && !meta.IsNoMatchError(err) {
			a.readFailed("Applications", err) // not "Argo CD is not installed"
		}
		return
	}
	a.readOK++
	a.statusIndex = nil
	for i := range list {
		u := &list[i]
		key := u.GetNamespace() + "/" + u.GetName()
		if _, known := a.apps[key]; known {
			// From a file, or read by GET before: kept as read.
			continue
		}
		app, err := decodeApplication(u)
		if err != nil {
			a.loadNotes = append(a.loadNotes, model.Note{Engine: Engine, Level: model.NoteError, Reason: "invalid-application", Message: err.Error()})
			continue
		}
		a.apps[key] = &appEntry{app: app, src: cmSource{Object: "Application " + key}}
	}
}

// readFailed records a cluster read that failed (not NotFound) as an error
// of ClusterReads and a note. Call it with a.mu held.
func (a *Adapter) readFailed(what string, err error) {
	a.readErrs = append(a.readErrs, fmt.Errorf("%s: %w", what, err))
	level, msg := model.NoteWarning, fmt.Sprintf("could not read %s: %v", what, err)
	if apierrors.IsForbidden(err) {
		msg = fmt.Sprintf("not allowed to read %s (Forbidden): Argo CD settings from it are unknown here", what)
	}
	a.loadNotes = append(a.loadNotes, model.Note{Engine: Engine, Level: level, Reason: "read-failed", Message: msg})
}

// readParamsLocked reads argocd-cmd-params-cm once, unless files gave it.
// Call it with a.mu held.
func (a *Adapter) readParamsLocked(ctx context.Context) {
	if a.paramsRead || a.paramsFromFile || a.opts.Reader == nil {
		return
	}
	a.paramsRead = true
	cm, err := a.opts.Reader.Get(ctx, configMapGVK, a.opts.Namespace, cmdParamsName)
	switch {
	case err == nil:
		a.readOK++
		a.settings.ParseCmdParams(stringMap(cm, "data"), cmSource{Object: "ConfigMap " + a.opts.Namespace + "/" + cmdParamsName})
	case apierrors.IsNotFound(err):
	default:
		a.readFailed("ConfigMap "+a.opts.Namespace+"/"+cmdParamsName, err)
	}
}

// ReadOwner reads, after Load, the Application obj's tracking names by
// GET when it is not known yet (OneObject: no LIST was made), so that
// Owner says whether it exists and how it syncs. It returns that
// Application, or nil (not tracked, missing, unreadable).
func (a *Adapter) ReadOwner(ctx context.Context, obj *unstructured.Unstructured) *Application {
	o := a.trackedOwner(obj)
	if o == nil && a.readListed(ctx, obj) {
		// No tracking mark: the Application whose status.resources
		// lists the object (statusowner.go).
		o = a.trackedOwner(obj)
	}
	if o == nil {
		return nil
	}
	e := a.appByKey(o.Namespace + "/" + o.Name)
	if e == nil {
		e, _ = a.appFromClusterOrMissing(ctx, o.Namespace, o.Name)
	}
	if e == nil {
		return nil
	}
	return e.app
}

// ReadParams reads argocd-cmd-params-cm in OneObject mode when it can
// change how app's objects are compared: controller.diff.server.side
// decides the diff of every Application that does not choose with its own
// ServerSideDiff compare option, and ignore.normalizer.jq.timeout bounds
// the jq rules that apply. Otherwise it is not read: nothing in it would
// change a verdict of this object.
func (a *Adapter) ReadParams(ctx context.Context, app *Application) {
	if app != nil && (app.HasCompareOption("ServerSideDiff=true") || app.HasCompareOption("ServerSideDiff=false")) &&
		!a.jqRules(app) {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.readParamsLocked(ctx)
}

// jqRules: a rule of app or argocd-cm removes fields with jq.
func (a *Adapter) jqRules(app *Application) bool {
	a.mu.Lock()
	s := a.settings
	a.mu.Unlock()
	for _, d := range app.Spec.IgnoreDifferences {
		if len(d.JQPathExpressions) > 0 {
			return true
		}
	}
	for _, r := range s.Rules {
		if len(r.JQPathExpressions) > 0 {
			return true
		}
	}
	return false
}

// schemaFor gives cfg the cluster's schema when comparing obj with desired
// needs it (needsSchema) and GVKParser was not given. The schema is read
// once per group-version (obj's); a failure is a note.
func (a *Adapter) schemaFor(cfg *compareConfig, obj, desired *unstructured.Unstructured) *model.Note {
	if cfg.parser != nil || a.opts.Schema == nil || !cfg.needsSchema(obj, desired) {
		return nil
	}
	p, note := a.schemas.parser(a.opts.Schema, obj.GroupVersionKind().GroupVersion())
	if p != nil {
		cfg.parser = p
	}
	return note
}

// SetGVKParser gives the adapter the cluster's schema after Load, for
// callers that only read the (large) OpenAPI once Owner says Argo CD tracks
// the object. Building a second adapter instead would read argocd-cm and
// the Applications again. Call it before Judge and Normalize, not while
// they run.
func (a *Adapter) SetGVKParser(p GVKParser) {
	a.opts.GVKParser = p
}

// ClusterReads says, after Load (or Rules, Judge, Normalize), how many of
// the cluster reads (argocd-cm, argocd-cmd-params-cm, Applications) found
// their object, and the error of each that did not, naming its source. Callers
// that must not lose rules silently report every error and fail when
// nothing was read.
func (a *Adapter) ClusterReads() (ok int, errs []error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.readOK, append([]error(nil), a.readErrs...)
}

// Owner implements model.Adapter: the Application named by the tracking
// annotation (or the instance label with label tracking). It does not read
// the cluster; Found says whether the Application itself is known.
// With --engine-context, an Application that deploys to another cluster
// than the live object's owns nothing there (its tracking id on the object
// notwithstanding): nil.
func (a *Adapter) Owner(obj *unstructured.Unstructured) *model.Owner {
	o := a.trackedOwner(obj)
	if o == nil || !a.placed(o.Namespace+"/"+o.Name, obj) {
		return nil
	}
	return o
}

// trackedOwner is the Application obj's tracking marks name, wherever it
// deploys; without marks, the Application whose status.resources lists
// obj (listedOwner).
func (a *Adapter) trackedOwner(obj *unstructured.Unstructured) *model.Owner {
	if obj == nil {
		return nil
	}
	a.mu.Lock()
	s := a.settings
	a.mu.Unlock()
	ref := trackingRef(obj, s.TrackingMethod, s.InstanceLabelKey)
	if ref == nil {
		ref = a.listedOwner(obj, s)
	}
	if ref == nil || !ref.refersTo(obj) {
		return nil
	}
	ns, name := a.splitInstanceName(ref.App)
	o := &model.Owner{Engine: Engine, Kind: "Application", Namespace: ns, Name: name, Via: ref.Via}
	if e := a.appByKey(ns + "/" + name); e != nil {
		o.Found = true
		o.AutoSync = e.app.AutoSync()
		o.SelfHeal = e.app.SelfHeal()
		o.Mode = appMode(e.app)
	}
	return o
}

func (a *Adapter) appByKey(key string) *appEntry {
	a.mu.Lock()
	defer a.mu.Unlock()
	if e, ok := a.apps[key]; ok {
		return e
	}
	return a.generated[key]
}

// splitInstanceName reverses Application.InstanceName: "<ns>_<name>" for
// apps outside the control-plane namespace, plain "<name>" inside it.
// Namespace names cannot hold "_", so the first "_" splits.
func (a *Adapter) splitInstanceName(inst string) (ns, name string) {
	if i := strings.Index(inst, "_"); i > 0 {
		return inst[:i], inst[i+1:]
	}
	return a.opts.Namespace, inst
}

func appMode(app *Application) string {
	var parts []string
	switch {
	case app.SelfHeal():
		parts = append(parts, "auto-sync", "self-heal")
	case app.AutoSync():
		parts = append(parts, "auto-sync")
	default:
		parts = append(parts, "manual sync")
	}
	if app.HasSyncOption("ServerSideApply=true") {
		parts = append(parts, "server-side apply")
	}
	if app.HasSyncOption("RespectIgnoreDifferences=true") {
		parts = append(parts, "RespectIgnoreDifferences")
	}
	if app.HasCompareOption("ServerSideDiff=true") {
		parts = append(parts, "server-side diff")
	}
	return strings.Join(parts, ", ")
}

// trackRef is what an object's tracking metadata says.
type trackRef struct {
	App                   string
	Group, Kind, NS, Name string
	// full: the annotation carried group/kind/ns/name to check.
	full bool
	Via  string
}

// refersTo mirrors the check that a tracking id names the object it sits on
// (an annotation copied to another object does not make it managed).
func (t *trackRef) refersTo(obj *unstructured.Unstructured) bool {
	if !t.full {
		return true
	}
	gvk := obj.GroupVersionKind()
	if t.Group != gvk.Group || t.Kind != gvk.Kind || t.Name != obj.GetName() {
		return false
	}
	// Cluster-scoped objects carry the app's destination namespace or "".
	return obj.GetNamespace() == "" || t.NS == obj.GetNamespace()
}

// trackingRef mirrors util/argo/resource_tracking.go GetAppName and
// ParseAppInstanceValue ("<app>:<group>/<kind>:<ns>/<name>").
func trackingRef(obj *unstructured.Unstructured, method, labelKey string) *trackRef {
	if labelKey == "" {
		labelKey = DefaultInstanceLabelKey
	}
	if method == TrackingLabel {
		if v := obj.GetLabels()[labelKey]; v != "" {
			return &trackRef{App: v, Via: "label " + labelKey}
		}
		return nil
	}
	v := obj.GetAnnotations()[AnnotationTrackingID]
	if v == "" {
		return nil
	}
	return parseTrackingID(v)
}

// parseTrackingID parses "<app>:<group>/<kind>:<ns>/<name>"; nil when the
// value has another shape (Argo then ignores it).
func parseTrackingID(v string) *trackRef {
	parts := strings.SplitN(v, ":", 3)
	if len(parts) != 3 || parts[0] == "" {
		return nil
	}
	gk := strings.Split(parts[1], "/")
	nn := strings.Split(parts[2], "/")
	if len(gk) != 2 || len(nn) != 2 {
		return nil
	}
	return &trackRef{App: parts[0], Group: gk[0], Kind: gk[1], NS: nn[0], Name: nn[1], full: true, Via: "annotation " + AnnotationTrackingID}
}

// Rules implements model.Adapter: every Argo CD rule known from files and
// the cluster.
func (a *Adapter) Rules(ctx context.Context) ([]model.Rule, error) {
	a.load(ctx)
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []model.Rule
	for _, k := range slices.Sorted(maps.Keys(a.apps)) {
		for _, e := range a.sameName[k] {
			out = append(out, rulesOfApp(e.app, e.src)...)
		}
		e := a.apps[k]
		out = append(out, rulesOfApp(e.app, e.src)...)
	}
	for _, e := range a.appSets {
		out = append(out, rulesOfApp(e.app, e.src)...)
	}
	if len(a.instances) == 0 {
		out = append(out, rulesOfSettings(a.settings)...)
	}
	for _, s := range a.instances {
		out = append(out, rulesOfSettings(s)...)
	}
	return out, nil
}

func rulesOfApp(app *Application, src cmSource) []model.Rule {
	var out []model.Rule
	for _, r := range appRules(app, src) {
		r.compile()
		out = append(out, r.toModel())
	}
	return out
}

func rulesOfSettings(s *Settings) []model.Rule {
	var out []model.Rule
	for _, r := range s.Rules {
		r.compile()
		out = append(out, r.toModel())
	}
	for _, k := range s.Known {
		mr := model.Rule{Engine: Engine, Type: RuleKnownTypeFields, Origin: k.Origin,
			Target: model.Selector{Group: k.Group, Kind: k.Kind, Syntax: model.MatchGlob}, Scope: model.ScopeDiff,
			JSONPointers: []string{"/" + strings.ReplaceAll(k.Field, ".", "/")}, Value: k.Type}
		if knownTypeConstructor(k.Type) == nil {
			mr.Error = fmt.Sprintf("type %q is not supported (Argo CD skips this field)", k.Type)
		}
		out = append(out, mr)
	}
	for _, f := range s.Exclusions {
		out = append(out, filterRules(f, model.ScopeDiscovery)...)
	}
	for _, n := range s.Problems {
		if n.Level != model.NoteError || n.Rule == nil {
			continue
		}
		out = append(out, model.Rule{Engine: Engine, Type: RuleIgnoreDifferences, Origin: *n.Rule, Scope: model.ScopeDiff, Error: n.Message})
	}
	return out
}

func filterRules(f filterRule, scope model.Scope) []model.Rule {
	groups := f.APIGroups
	if len(groups) == 0 {
		groups = []string{"*"}
	}
	kinds := f.Kinds
	if len(kinds) == 0 {
		kinds = []string{"*"}
	}
	var out []model.Rule
	for _, g := range groups {
		for _, k := range kinds {
			r := model.Rule{Engine: Engine, Type: RuleResourceExclusion, Origin: f.Origin,
				Target: model.Selector{Group: g, Kind: k, Syntax: model.MatchGlob}, WholeResource: true, Scope: scope}
			if len(f.Clusters) > 0 {
				r.Value = "clusters=" + strings.Join(f.Clusters, ",")
			}
			if _, err := compileGlob(g); err != nil {
				r.Error = fmt.Sprintf("invalid apiGroups glob %q: %v", g, err)
			}
			out = append(out, r)
		}
	}
	return out
}

// Normalize returns obj as Argo CD sees it before diffing, under the rules of
// the Application tracking it (if known) and argocd-cm: remarshalled,
// creationTimestamp dropped, Secret/Role normalized, ignoreDifferences
// pointers and jq removed, known types re-formatted. Without a desired
// object the managedFieldsManagers step does not run (Argo only runs it
// when both sides exist).
func (a *Adapter) Normalize(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if obj == nil {
		return nil, fmt.Errorf("nothing to normalize")
	}
	a.load(ctx)
	cfg := a.configFor(obj)
	if err := cfg.fatal(); err != nil {
		return nil, err
	}
	out := remarshal(obj)
	cfg.gitopsNormalize(out, &normResult{})
	return out, nil
}

// configFor builds the comparison config for the Application tracking obj.
func (a *Adapter) configFor(obj *unstructured.Unstructured) *compareConfig {
	var app *Application
	var src cmSource
	if o := a.Owner(obj); o != nil {
		if e := a.appByKey(o.Namespace + "/" + o.Name); e != nil {
			app, src = e.app, e.src
		}
	}
	a.mu.Lock()
	s := a.settings
	a.mu.Unlock()
	c := newCompareConfigRules(s, a.appRulesCached(app, src), a.opts.GVKParser, a.opts.JQTimeout)
	c.applyApp(app)
	c.dryRun = a.opts.DryRun
	return c
}

// appRulesCached compiles an Application's rules once per adapter: scan
// judges many objects of one Application.
func (a *Adapter) appRulesCached(app *Application, src cmSource) []*ignoreRule {
	if app == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if rs, ok := a.compiled[app]; ok {
		return rs
	}
	rs := appRules(app, src)
	for _, r := range rs {
		r.compile()
	}
	if a.compiled == nil {
		a.compiled = map[*Application][]*ignoreRule{}
	}
	a.compiled[app] = rs
	return rs
}

// appFromClusterOrMissing reads one Application the LIST did not return
// (namespaced RBAC), once, and says when the Application definitely does not
// exist (NotFound, or no Application kind: Argo CD is not installed), as
// opposed to unreadable.
func (a *Adapter) appFromClusterOrMissing(ctx context.Context, ns, name string) (*appEntry, bool) {
	if a.opts.Reader == nil {
		return nil, false
	}
	key := ns + "/" + name
	a.mu.Lock()
	if a.triedGet == nil {
		a.triedGet = map[string]bool{}
	}
	tried := a.triedGet[key]
	a.triedGet[key] = true
	a.mu.Unlock()
	if tried {
		a.mu.Lock()
		defer a.mu.Unlock()
		return a.apps[key], a.missingApps[key]
	}
	u, err := a.opts.Reader.Get(ctx, applicationGVK, ns, name)
	if err != nil {
		if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
			a.mu.Lock()
			if a.missingApps == nil {
				a.missingApps = map[string]bool{}
			}
			a.missingApps[key] = true
			a.mu.Unlock()
			return nil, true
		}
		return nil, false
	}
	app, err := decodeApplication(u)
	if err != nil {
		return nil, false
	}
	e := &appEntry{app: app, src: cmSource{Object: "Application " + key}}
	a.mu.Lock()
	a.apps[key] = e
	a.statusIndex = nil
	a.mu.Unlock()
	return e, false
}
