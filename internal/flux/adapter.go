package flux

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-drift/kubectl-drift/internal/engine"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// Adapter is the Flux implementation of model.Adapter.
type Adapter struct {
	reader       model.Reader
	docs         []doc
	restConfig   *rest.Config
	serverDryRun bool
	// dryRunner runs the SSA dry-run; tests replace it.
	dryRunner func(ctx context.Context, obj *unstructured.Unstructured, manager string) (*unstructured.Unstructured, error)
	// patchRunner runs a dry-run JSON patch as kustomize-controller
	// (jsonPatchDryRun); tests replace it.
	patchRunner func(ctx context.Context, live *unstructured.Unstructured, ops []map[string]any) (*unstructured.Unstructured, error)
	// client is created on the first dry-run, with restMapper when set.
	client     client.Client
	restMapper func() (meta.RESTMapper, error)

	mu     sync.Mutex
	owners map[string]ownerResult
	// listed counts the kinds Rules listed from the cluster (Flux
	// installed and readable).
	listed int
	// crds are the structural schemas of the cluster's custom resources
	// by group, version and kind (crdSchema), read once.
	crds map[schema.GroupVersionKind]map[string]any
	// inventory indexes the Kustomizations' inventories by object id,
	// read on the first object whose ownership labels are gone (ownerOf).
	inventory map[string]*model.Owner
	// releases indexes the HelmReleases by the Helm release they manage
	// ("namespace/name"), read on the first object helm-controller wrote
	// whose ownership labels are gone (releaseOwner).
	releases map[string]*model.Owner
	// webhooks are the cluster's MutatingWebhookConfigurations
	// (mutatingWebhooks), read once; webhooksRead says the read was
	// tried, webhooksOK that it succeeded.
	webhooks                 []unstructured.Unstructured
	webhooksRead, webhooksOK bool
}

var (
	_ model.Adapter        = (*Adapter)(nil)
	_ engine.OwnerFollower = (*Adapter)(nil)
)

// newAdapter builds an adapter over the internal document view.
func newAdapter(reader model.Reader, docs []doc, cfg *rest.Config, serverDryRun bool) (*Adapter, error) {
	if serverDryRun && cfg == nil {
		return nil, errors.New("flux: --server-dry-run needs a cluster connection")
	}
	a := &Adapter{reader: reader, docs: docs, restConfig: cfg, serverDryRun: serverDryRun}
	a.dryRunner = a.ssaDryRun
	a.patchRunner = a.jsonPatchDryRun
	return a, nil
}

// Engine names Flux.
func (a *Adapter) Engine() model.Engine { return Engine }

// Owner reads the ownership labels that kustomize-controller and
// helm-controller put on every object they apply. helm-controller's labels
// win when both are present: the HelmRelease is the nearer reconciler.
func (a *Adapter) Owner(obj *unstructured.Unstructured) *model.Owner {
	if obj == nil {
		return nil
	}
	l := obj.GetLabels()
	var o *model.Owner
	switch {
	case l[HelmNameLabel] != "" && l[HelmNamespaceLabel] != "":
		o = &model.Owner{Engine: Engine, Kind: helmv2.HelmReleaseKind,
			Namespace: l[HelmNamespaceLabel], Name: l[HelmNameLabel],
			Via: "labels " + HelmNameLabel + "," + "namespace"}
	case l[KustomizeNameLabel] != "" && l[KustomizeNamespaceLabel] != "":
		o = &model.Owner{Engine: Engine, Kind: kustomizev1.KustomizationKind,
			Namespace: l[KustomizeNamespaceLabel], Name: l[KustomizeNameLabel],
			Via: "labels " + KustomizeNameLabel + "," + "namespace"}
	default:
		return nil
	}
	// Offline facts from files; Owner never reads the cluster (an owner in
	// the files is resolved from them alone, and cached).
	if _, ok := a.findDoc(o.Kind, o.Namespace, o.Name); ok {
		if st, _ := a.resolveOwner(context.Background(), o, &model.Report{}); st != nil {
			fillOwner(o, st)
		}
	}
	return o
}

// findDoc returns the Flux object named kind ns/name from the files.
func (a *Adapter) findDoc(kind, ns, name string) (doc, bool) {
	for _, d := range a.docs {
		if d.obj == nil || d.obj.GetName() != name || d.obj.GetKind() != kind {
			continue
		}
		dns := d.obj.GetNamespace()
		// A file without metadata.namespace goes to the default namespace
		// of whoever applies it; match it against any namespace.
		if dns != "" && dns != ns {
			continue
		}
		if (kind == kustomizev1.KustomizationKind && isKustomization(d.obj)) ||
			(kind == helmv2.HelmReleaseKind && isHelmRelease(d.obj)) {
			return d, true
		}
	}
	return doc{}, false
}

// ownerState is a typed owner object with its rules.
type ownerState struct {
	doc   doc
	kust  *kustomizev1.Kustomization
	hr    *helmv2.HelmRelease
	rules []ignoreRule
}

func ownerFrom(d doc) (*ownerState, error) {
	st := &ownerState{doc: d}
	switch {
	case isKustomization(d.obj):
		k, err := toKustomization(d.obj)
		if err != nil {
			return nil, err
		}
		st.kust, st.rules = k, kustomizationRules(d, k)
	case isHelmRelease(d.obj):
		hr, err := toHelmRelease(d.obj)
		if err != nil {
			return nil, err
		}
		st.hr, st.rules = hr, helmReleaseRules(d, hr)
	default:
		return nil, fmt.Errorf("%s is not a Flux Kustomization or HelmRelease", objectRef(d.obj))
	}
	return st, nil
}

// fillOwner copies interval, suspension and mode into the model owner.
func fillOwner(o *model.Owner, st *ownerState) {
	o.Found = true
	switch {
	case st.kust != nil:
		k := st.kust
		o.Interval = rawInterval(st, k.Spec.Interval.Duration.String())
		o.Suspended = k.Spec.Suspend
		mode := []string{"server-side apply, drift corrected"}
		if k.Spec.Prune {
			mode = append(mode, "prune")
		}
		if k.Spec.Force {
			mode = append(mode, "force")
		}
		if len(k.Spec.Ignore) > 0 {
			mode = append(mode, fmt.Sprintf("%d ignore rule(s)", len(k.Spec.Ignore)))
		}
		o.Mode = strings.Join(mode, ", ")
	case st.hr != nil:
		hr := st.hr
		o.Interval = rawInterval(st, hr.Spec.Interval.Duration.String())
		o.Suspended = hr.Spec.Suspend
		dd := hr.GetDriftDetection()
		o.DriftDetection = string(dd.GetMode())
		o.Mode = "drift detection " + o.DriftDetection
		if n := len(dd.Ignore); n > 0 {
			o.Mode += fmt.Sprintf(", %d ignore rule(s)", n)
		}
	}
	if o.Suspended {
		o.Mode = "suspended; " + o.Mode
	}
}

// ownerResult is a resolved owner, cached per adapter: scans judge many
// objects of one Kustomization, and the owner must be read (and its rules
// compiled) once, not once per object.
type ownerResult struct {
	st   *ownerState
	note *model.Note
	// missing: the owner does not exist (or Flux is not installed).
	missing bool
}

// resolveOwner finds the owner object in the files, then in the cluster.
// Failures become notes: verdicts are still given, without its rules.
func (a *Adapter) resolveOwner(ctx context.Context, o *model.Owner, rep *model.Report) (st *ownerState, missing bool) {
	key := o.Kind + "/" + o.Namespace + "/" + o.Name
	a.mu.Lock()
	res, ok := a.owners[key]
	a.mu.Unlock()
	if !ok {
		res = a.readOwner(ctx, o)
		a.mu.Lock()
		if a.owners == nil {
			a.owners = map[string]ownerResult{}
		}
		a.owners[key] = res
		a.mu.Unlock()
	}
	if res.note != nil {
		rep.Notes = append(rep.Notes, *res.note)
	}
	return res.st, res.missing
}

func (a *Adapter) readOwner(ctx context.Context, o *model.Owner) ownerResult {
	noteRes := func(level model.NoteLevel, reason, msg string) ownerResult {
		return ownerResult{note: &model.Note{Engine: Engine, Level: level, Reason: reason, Message: msg}}
	}
	if d, ok := a.findDoc(o.Kind, o.Namespace, o.Name); ok {
		st, err := ownerFrom(d)
		if err != nil {
			return noteRes(model.NoteError, "invalid-owner", err.Error())
		}
		return ownerResult{st: st}
	}
	if a.reader == nil {
		return noteRes(model.NoteWarning, "owner-not-read", fmt.Sprintf("%s is not in the given files and no cluster was read: its interval, suspension and ignore rules are unknown", o.Ref()))
	}
	gvk := KustomizationGVK
	if o.Kind == helmv2.HelmReleaseKind {
		gvk = HelmReleaseGVK
	}
	obj, err := a.reader.Get(ctx, gvk, o.Namespace, o.Name)
	if err != nil {
		switch {
		case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
			return missingOwner(o.Ref())
		case apierrors.IsForbidden(err):
			return noteRes(model.NoteWarning, "owner-forbidden", fmt.Sprintf("reading %s is forbidden (needs get on %s): its ignore rules are unknown", o.Ref(), schema.GroupResource{Group: gvk.Group, Resource: strings.ToLower(gvk.Kind) + "s"}))
		}
		return noteRes(model.NoteWarning, "owner-unreadable", fmt.Sprintf("cannot read %s: %v; its ignore rules are unknown", o.Ref(), err))
	}
	return ownerResultOf(obj)
}

// ownerResultOf is the owner read from the cluster as obj.
func ownerResultOf(obj *unstructured.Unstructured) ownerResult {
	st, err := ownerFrom(doc{obj: obj})
	if err != nil {
		return ownerResult{note: &model.Note{Engine: Engine, Level: model.NoteError, Reason: "invalid-owner", Message: err.Error()}}
	}
	return ownerResult{st: st}
}

// missingOwner is an owner (ref) that does not exist.
func missingOwner(ref string) ownerResult {
	return ownerResult{missing: true, note: &model.Note{Engine: Engine, Level: model.NoteWarning, Reason: "owner-not-found",
		Message: fmt.Sprintf("%s named by the ownership labels does not exist: nothing reconciles this object, so no drift is reverted", ref)}}
}

// UpdateOwner implements engine.OwnerFollower for Kustomizations and
// HelmReleases, as the watches of scan --watch and serve see them. The
// adapter resolves an owner once and keeps it (resolveOwner), so without
// this a Kustomization suspended, given a spec.ignore rule or a
// HelmRelease whose driftDetection mode changed after start-up would be
// judged as it was then. The owner is replaced by obj (or recorded as
// gone); an owner read from a file stays.
//
// Only the spec decides Flux's verdicts (suspend, interval, ignore rules,
// driftDetection): both kinds have a status subresource, so
// metadata.generation moves with the spec alone, and a status written by
// each reconcile changes no verdict.
func (a *Adapter) UpdateOwner(obj *unstructured.Unstructured, deleted bool) engine.OwnerChange {
	gvk := obj.GroupVersionKind()
	if gvk.GroupKind() != KustomizationGVK.GroupKind() && gvk.GroupKind() != HelmReleaseGVK.GroupKind() {
		return engine.OwnerChange{}
	}
	owner := model.Owner{Engine: Engine, Kind: gvk.Kind, Namespace: obj.GetNamespace(), Name: obj.GetName()}
	if _, fromFile := a.findDoc(owner.Kind, owner.Namespace, owner.Name); fromFile {
		return engine.OwnerChange{}
	}
	key := owner.Kind + "/" + owner.Namespace + "/" + owner.Name
	a.mu.Lock()
	old, had := a.owners[key]
	a.mu.Unlock()
	var res ownerResult
	if deleted {
		res = missingOwner(owner.Ref())
	} else {
		if old.st != nil && old.st.doc.obj.GetResourceVersion() == obj.GetResourceVersion() && obj.GetResourceVersion() != "" {
			return engine.OwnerChange{}
		}
		res = ownerResultOf(obj.DeepCopy())
	}
	// Kept even when no object was judged with it yet: the reader's copy
	// (scan's LIST, read once) may be older.
	a.mu.Lock()
	if a.owners == nil {
		a.owners = map[string]ownerResult{}
	}
	a.owners[key] = res
	a.mu.Unlock()
	if !had {
		return engine.OwnerChange{} // no verdict was given with it
	}
	if old.st != nil && res.st != nil && old.st.doc.obj.GetGeneration() == res.st.doc.obj.GetGeneration() && obj.GetGeneration() != 0 {
		return engine.OwnerChange{} // status only
	}
	return engine.OwnerChange{Owner: owner, All: true}
}

// Listed says how many of Kustomizations and HelmReleases Rules could list
// from the cluster (0 when Flux is not installed or nothing was readable).
func (a *Adapter) Listed() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.listed
}

// Rules returns every Flux rule in the files and, with a cluster, in every
// Kustomization and HelmRelease the reader can list.
func (a *Adapter) Rules(ctx context.Context) ([]model.Rule, error) {
	rules, _ := rulesFromDocs(a.docs)
	var errs []error
	if a.reader != nil {
		for _, gvk := range []schema.GroupVersionKind{KustomizationGVK, HelmReleaseGVK} {
			items, err := a.reader.List(ctx, gvk, "", "")
			if err != nil {
				if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
					continue // Flux (or this controller) is not installed
				}
				// One source failing must not hide the other's rules:
				// every failure is returned, each naming its kind.
				errs = append(errs, fmt.Errorf("listing %ss: %w", gvk.Kind, err))
				continue
			}
			a.mu.Lock()
			a.listed++
			a.mu.Unlock()
			docs := make([]doc, len(items))
			for i := range items {
				docs[i] = doc{obj: &items[i]}
			}
			r, _ := rulesFromDocs(docs)
			rules = append(rules, r...)
		}
	}
	model.SortRules(rules)
	return rules, errors.Join(errs...)
}

// rawInterval keeps the interval as written ("10m"), not as re-rendered
// by metav1.Duration ("10m0s").
func rawInterval(st *ownerState, fallback string) string {
	if st.doc.obj != nil {
		if s, ok, _ := unstructured.NestedString(st.doc.obj.Object, "spec", "interval"); ok && s != "" {
			return s
		}
	}
	return fallback
}
