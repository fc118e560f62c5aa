package argocd

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	argorender "github.com/kubectl-drift/kubectl-drift/internal/argocd/render"
	"github.com/kubectl-drift/kubectl-drift/internal/engine"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/render"
	"github.com/kubectl-drift/kubectl-drift/internal/source"
)

// Argo CD's entry in the engine registry: everything commands need to know
// about Argo CD, so that none of them names it.
func init() { engine.Register(Descriptor()) }

// Descriptor describes Argo CD to the engine registry.
func Descriptor() engine.Descriptor {
	return engine.Descriptor{
		Name:               Engine,
		Title:              "Argo CD",
		RuleObjects:        "Argo CD Application/argocd-cm",
		OwnershipRules:     "Argo CD managedFieldsManagers",
		IsManager:          IsManager,
		APIGroups:          []string{Group},
		IsEngineObject:     isEngineObject,
		OwnerAnnotations:   []string{AnnotationTrackingID},
		OwnerLabels:        []string{DefaultInstanceLabelKey},
		RulesFromDocuments: RulesFromDocuments,
		Compare:            CompareSemantics(),
		Suggest:            SuggestSemantics(),
		Host:               "argocd",
		Audit:              AuditSemantics(),
		// An ignoreResourceUpdates customization is modelled as a
		// refresh-scoped ignoreDifferences rule, but listing it as
		// ignoreDifferences misleads.
		DisplayType: func(r model.Rule) string {
			if r.Type == RuleIgnoreDifferences && r.Scope == model.ScopeRefresh {
				return "argocd.ignoreResourceUpdates"
			}
			return ""
		},
		SettingsFile: func(path string) ([]source.Document, error) {
			if !IsValuesFile(path) {
				return nil, nil
			}
			return ValuesFileDocuments(path)
		},
		// Argo CD judges a status in the desired state per
		// resource.compareoptions ignoreResourceStatusField.
		ComparesStatus: true,
		// With --engine argocd the exit code is Argo CD's sync status.
		StatusDecidesExit: true,
		Flags:             addFlags,
		// adopt and suggest take --argocd-namespace alone (a tracking id
		// or --app NAME without a namespace names an Application there).
		ControlPlane: &engine.ControlPlane{Flag: "argocd-namespace", Usage: "Namespace of Argo CD's control plane",
			Default: DefaultNamespace, Group: Group},
		New:      newForCommand,
		Renderer: renderer(DefaultNamespace),
		// --argocd-namespace (explain, adopt, suggest) says where the
		// Applications and argocd-cm are: a tracking id without a
		// namespace names an Application there.
		RendererFor: func(f engine.Flags) render.Renderer {
			if fl, ok := f.(*Flags); ok && fl.Namespace != "" {
				return renderer(fl.Namespace)
			}
			return nil
		},
		// An Application without a namespace is in the control plane
		// (Namespace ""), as a tracking id without one is.
		OwnerKinds: []engine.OwnerKind{{GVK: applicationGVK, Flag: "app",
			Usage: "Argo CD Application to render, NAME or NAMESPACE/NAME (NAME alone: " + DefaultNamespace + "); may be repeated"}},
	}
}

// renderer renders Applications of Argo CD's control plane in namespace.
func renderer(namespace string) *argorender.Renderer {
	return argorender.New(argorender.Options{Owner: renderOwner(namespace), Tracking: renderTracking, Namespace: namespace})
}

// renderOwner names the Application a live object's tracking annotation
// (Argo CD v3's default tracking) names, for render and explain --source;
// an id without a namespace names one in the control-plane namespace.
// The instance label is not read: charts set app.kubernetes.io/instance
// themselves (a Flux HelmRelease's objects carry it too), so with label
// tracking the Application is named with --app.
func renderOwner(namespace string) func(live *unstructured.Unstructured) (string, string, bool) {
	return func(live *unstructured.Unstructured) (string, string, bool) {
		ref := trackingRef(live, TrackingAnnotation, DefaultInstanceLabelKey)
		if ref == nil || !ref.refersTo(live) {
			return "", "", false
		}
		a := &Adapter{opts: Options{Namespace: namespace}}
		ns, n := a.splitInstanceName(ref.App)
		return ns, n, true
	}
}

// renderTracking reads the tracking settings from argocd-cm's data as
// ParseSettings does.
func renderTracking(data map[string]string) argorender.Tracking {
	s := ParseSettings(data, cmSource{})
	return argorender.Tracking{Method: s.TrackingMethod, LabelKey: s.InstanceLabelKey, InstallationID: data["installationID"]}
}

// Engine is Argo CD's name: the --engine value and the engine of its
// verdicts, rules and notes.
const Engine model.Engine = "argocd"

// SourceAPI is a desired state read from Argo CD's API (the
// managed-resources target state), as a report's desiredSource names it.
const SourceAPI model.DesiredSource = "argocd-api"

// Group is the API group of Argo CD's own kinds.
const Group = "argoproj.io"

// IsManager reports Argo CD's field managers: it syncs as
// "argocd-controller" (argo-cd common/common.go ArgoCDSSAManager;
// "argocd-application-controller" is the controller's name, which older
// client-side syncs left). An RBAC object is first written by gitops-engine's
// in-process kubectl auth reconcile (pkg/utils/kube/resource_ops.go
// rbacReconcile) with a client whose manager is the API server's default,
// the user agent's first segment: the binary's name, "argocd" when the
// controller runs as the argocd multi-call binary (seen on Argo CD v3.2.11:
// ClusterRoleBinding, RoleBinding and Role owned by "argocd" alone, with no
// last-applied-configuration; differential seeds 50000, 50207).
// manager is lower-case.
func IsManager(manager string) bool {
	return manager == "argocd-controller" || manager == "argocd-application-controller" || manager == "argocd"
}

// isEngineObject: Applications, ApplicationSets, AppProjects and the
// argocd-* ConfigMaps are Argo CD's own objects (rule sources).
func isEngineObject(o *unstructured.Unstructured) bool {
	gvk := o.GroupVersionKind()
	return gvk.Group == Group || (gvk.Group == "" && gvk.Kind == "ConfigMap" && strings.HasPrefix(o.GetName(), "argocd-"))
}

// Flags are Argo CD's own flags of explain.
type Flags struct {
	// Namespace is Argo CD's control-plane namespace (argocd).
	Namespace string
	// DiffFile is a saved response of Argo CD's managed-resources API.
	DiffFile string
	// API locates Argo CD's API server.
	API APIFlags

	// diff is DiffFile, read once by Complete.
	diff *ManagedResources
}

func addFlags(command string, fs *pflag.FlagSet) engine.Flags {
	if command != "explain" {
		return nil
	}
	f := &Flags{}
	fs.StringVar(&f.Namespace, "argocd-namespace", DefaultNamespace, "Namespace of Argo CD's control plane (Applications, argocd-cm)")
	fs.StringVar(&f.DiffFile, "argocd-diff", "", "Argo CD's own diff: a saved GET /api/v1/applications/NAME/managed-resources response (or set ARGOCD_SERVER and ARGOCD_AUTH_TOKEN)")
	_ = fs.SetAnnotation("argocd-diff", "cobra_annotation_bash_completion_filename_extensions", []string{"json"})
	f.API.addFlags(fs)
	return f
}

// Complete fails early on an --argocd-diff file that cannot be read
// (missing, over the size limit, /dev/zero) or is not a managed-resources
// response: it is an input like -f, not a hint. The parsed response is
// kept for the adapter, which would otherwise read the file again.
func (f *Flags) Complete() error {
	if f.DiffFile == "" {
		return nil
	}
	mr, err := ReadManagedResources(f.DiffFile)
	var perr *ManagedResourcesError
	if errors.As(err, &perr) {
		return fmt.Errorf("--argocd-diff %s: %s", f.DiffFile, strings.Join(strings.Fields(perr.Error()), " "))
	}
	if err != nil {
		return err
	}
	f.diff = mr
	return nil
}

// newForCommand builds the adapter a command needs.
func newForCommand(ctx context.Context, cfg engine.Config) (model.Adapter, []model.Note, error) {
	flags, _ := cfg.Flags.(*Flags)
	if flags == nil {
		flags = &Flags{}
	}
	// Documents keep their YAML nodes, so rules get file:line origins.
	opts := Options{Reader: cfg.Reader, Namespace: flags.Namespace, Documents: cfg.Documents}
	switch cfg.Purpose {
	case engine.ForOwner:
		a, err := New(Options{Namespace: flags.Namespace})
		return a, nil, err
	case engine.ForScan:
		opts.Inventory = true
		return forScan(ctx, opts, cfg)
	case engine.ForRules:
		a, err := New(opts)
		if err != nil {
			return nil, nil, err
		}
		return ruleReader{a}, nil, nil
	case engine.ForNormalize:
		a, err := New(opts)
		if err != nil {
			return nil, nil, err
		}
		if cfg.Reader != nil {
			// argocd-cm may switch tracking to labels; Owner never reads
			// the cluster itself.
			a.Load(ctx)
		}
		return a, nil, nil
	}
	opts.ArgoDiff = flags.API.options(flags.DiffFile)
	opts.ArgoDiff.Loaded = flags.diff
	if cfg.ServerDryRun {
		// Applications with server-side diff are judged by a dry-run
		// apply as argocd-controller, like Argo CD's controller does.
		rc, err := cfg.RESTConfig()
		if err != nil {
			return nil, nil, err
		}
		if opts.DryRun, err = NewRESTDryRunner(rc); err != nil {
			return nil, nil, err
		}
	}
	// explain judges one object: the Application its tracking names is
	// read by GET, not every Application by LIST; argocd-cmd-params-cm
	// only when it can change that Application's comparison; the OpenAPI
	// schema (managedFieldsManagers rules, structured-merge and server-side
	// diffs) only when a verdict needs it (Judge).
	opts.OneObject, opts.Schema, opts.FindUntracked = true, cfg.Schema, cfg.Named
	if !cfg.Named && cfg.Remote == nil && !mayTrack(cfg.Live) {
		// --engine auto and an object Argo CD cannot be tracking (a
		// Kustomization's, a HelmRelease's, kubectl's): nothing of Argo
		// CD's is read, not even by Judge.
		opts.Reader = nil
	}
	a, err := New(opts)
	if err != nil {
		return nil, nil, err
	}
	if opts.Reader == nil {
		return a, nil, nil
	}
	// Load first: argocd-cm may switch tracking to labels, and Owner never
	// reads the cluster itself.
	a.Load(ctx)
	var app *Application
	if cfg.Live != nil {
		app = a.ReadOwner(ctx, cfg.Live)
	}
	if a.trackedOwner(cfg.Live) != nil {
		a.ReadParams(ctx, app)
	}
	var notes []model.Note
	switch {
	case cfg.Remote != nil:
		// Hub and spoke: the Application must deploy to the live cluster.
		notes = a.setRemote(ctx, cfg.Remote)
	case cfg.Server != "" && !cfg.Offline && a.trackedOwner(cfg.Live) != nil:
		// Argo CD runs here: its Application must deploy here too.
		a.setLocal(ctx, cfg.Server)
	}
	if cfg.Remote != nil || a.hasPlacement() {
		server, more := remoteNotes(ctx, a, cfg.Live)
		notes = append(notes, more...)
		if server != "" {
			a.opts.Cluster = server
		}
	}
	return a, notes, nil
}

// mayTrack says whether Argo CD can be tracking obj, from what obj carries
// alone: Argo CD's tracking annotation, the default instance label (label
// tracking), a managedFields entry of Argo CD's managers (every sync
// leaves one, whatever the tracking), or no managedFields at all (nothing
// to tell by). An object with none of them is not Argo CD's unless
// argocd-cm switches to label tracking under a custom label key and Argo
// CD never synced the object; --engine argocd covers that case, since it
// reads argocd-cm for every object.
func mayTrack(obj *unstructured.Unstructured) bool {
	if obj == nil {
		return true
	}
	if obj.GetAnnotations()[AnnotationTrackingID] != "" || obj.GetLabels()[DefaultInstanceLabelKey] != "" {
		return true
	}
	mfs := obj.GetManagedFields()
	if len(mfs) == 0 {
		return true
	}
	for _, mf := range mfs {
		if IsManager(strings.ToLower(mf.Manager)) {
			return true
		}
	}
	return false
}

// forScan builds the scan's adapter over the scan's caching reader. Argo
// CD's controller evaluates managedFieldsManagers rules with a parser
// built from the cluster's OpenAPI (lists keyed, not atomic); the schema
// of a group-version is read only when a verdict on one of its objects
// needs it (Adapter.schemaFor), as for explain.
func forScan(ctx context.Context, opts Options, cfg engine.Config) (model.Adapter, []model.Note, error) {
	opts.Schema = cfg.Schema
	a, err := New(opts)
	if err != nil {
		return nil, nil, err
	}
	_, _ = a.Rules(ctx) // read failures become notes on the reports
	return a, scanRemote(ctx, a, cfg), nil
}

// scanRemote runs the hub-and-spoke checks of a scan with --engine-context
// once, before the scan: the fleet's problems are its warnings, and Owner
// then gives no object to an Application that deploys elsewhere. Without
// it, the same holds of the scanned cluster, where Argo CD runs
// (setLocal): the scan's OwnerWarnings name the Applications whose
// objects it then did not count, as explain's notes do.
func scanRemote(ctx context.Context, a *Adapter, cfg engine.Config) []model.Note {
	if cfg.Reader == nil {
		return nil
	}
	if cfg.Remote == nil {
		// No Application (Argo CD not installed): no cluster Secrets to
		// list, and no tracking id to refuse.
		a.Load(ctx)
		if cfg.Server != "" && a.knowsApplications() {
			a.setLocal(ctx, cfg.Server)
		}
		return nil
	}
	a.Load(ctx)
	return a.setRemote(ctx, cfg.Remote)
}

// ruleReader reads rules for rules and compare: from files only without a
// cluster (with the files' errors), else from files and cluster with each
// cluster source that failed.
type ruleReader struct{ *Adapter }

func (r ruleReader) ReadRules(ctx context.Context) ([]model.Rule, int, []error) {
	if r.opts.Reader == nil {
		rules, errs := RulesFromDocuments(r.opts.Documents)
		return rules, 0, errs
	}
	rules, _ := r.Rules(ctx)
	ok, errs := r.ClusterReads()
	return rules, ok, errs
}

// OwnerMarks implements engine.OwnerMarker: the tracking annotation, and
// the instance label argocd-cm names (application.instanceLabelKey), which
// label tracking reads.
func (a *Adapter) OwnerMarks() (annotations, labels []string) {
	a.mu.Lock()
	key := a.settings.InstanceLabelKey
	a.mu.Unlock()
	if key == "" {
		key = DefaultInstanceLabelKey
	}
	return []string{AnnotationTrackingID}, []string{key}
}
