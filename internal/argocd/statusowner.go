package argocd

import (
	"context"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/managedfields"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/model/jsonpointer"
)

// Owner lookup without tracking marks.
//
// Argo CD compares every object of an Application's target, whether the
// live object carries its tracking marks or not: gitops-engine
// pkg/cache/cluster.go GetManagedLiveObjs adds, for each target object,
// the live object of the same key "but simply missing our label", and
// argo-cd controller/state.go CompareAppState records each in the
// Application's status.resources. So an object whose tracking annotation
// or instance label a person deleted (a kubectl client-side apply over the
// last-applied-configuration Argo CD's own sync wrote deletes both) is
// still its Application's: OutOfSync, the missing mark in its diff, put
// back by a sync. The tool finds that Application the same way, through
// status.resources.

// listedOwner is the tracking reference of the Application whose
// status.resources lists obj, for an object that carries no tracking mark
// Argo CD reads (util/argo/resource_tracking.go GetAppName: the
// annotation with annotation and annotation+label tracking, the instance
// label with label tracking). With annotation+label tracking, an instance
// label that names one of those Applications picks it; otherwise the first
// by namespace/name (several Applications listing one object is Argo CD's
// SharedResourceWarning).
func (a *Adapter) listedOwner(obj *unstructured.Unstructured, s *Settings) *trackRef {
	gvk := obj.GroupVersionKind()
	apps := a.listedBy(resKey{gvk.Group, gvk.Kind, obj.GetNamespace(), obj.GetName()})
	if len(apps) == 0 {
		return nil
	}
	names := make([]string, len(apps))
	for i, key := range apps {
		ns, name, _ := strings.Cut(key, "/")
		names[i] = name
		if ns != a.opts.Namespace {
			names[i] = ns + "_" + name
		}
	}
	if s.TrackingMethod == TrackingAnnotationAndLabel {
		key := instanceLabelKey(s)
		if v := obj.GetLabels()[key]; v != "" && slices.Contains(names, v) {
			return &trackRef{App: v, Via: "label " + key + " (annotation+label tracking, no tracking annotation) and the Application's status.resources"}
		}
	}
	return &trackRef{App: names[0], Via: "the Application's status.resources (the object carries no tracking mark)"}
}

// listedBy is the Applications (namespace/name, sorted) whose
// status.resources list k. The index is built once for the Applications
// known; reading or replacing one drops it.
func (a *Adapter) listedBy(k resKey) []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.statusIndex == nil {
		a.statusIndex = map[resKey][]string{}
		for _, key := range slices.Sorted(maps.Keys(a.apps)) {
			for _, r := range a.apps[key].app.Status.Resources {
				rk := resKey{r.Group, r.Kind, r.Namespace, r.Name}
				a.statusIndex[rk] = append(a.statusIndex[rk], key)
			}
		}
	}
	return a.statusIndex[k]
}

// readListed reads, for explain (OneObject: no LIST was made), the
// Applications that may list obj in their status.resources when its
// tracking marks name none: with annotation+label tracking and an instance
// label, the Application it names by GET (the usual case of a deleted
// annotation: no LIST); otherwise, for an object an Argo CD sync wrote (a
// managedFields entry of Argo CD's managers), one LIST of the
// Applications. An object Argo CD never wrote is not listed by Argo CD's
// status either, except one created outside Argo CD before its first sync:
// not worth a LIST on every object. It says whether anything was read.
func (a *Adapter) readListed(ctx context.Context, obj *unstructured.Unstructured) bool {
	if a.opts.Reader == nil || obj == nil {
		return false
	}
	a.mu.Lock()
	s, listed := a.settings, a.listed
	a.mu.Unlock()
	if listed {
		return false
	}
	if s.TrackingMethod == TrackingAnnotationAndLabel {
		if v := obj.GetLabels()[instanceLabelKey(s)]; v != "" {
			ns, name := a.splitInstanceName(v)
			if e, _ := a.appFromClusterOrMissing(ctx, ns, name); e != nil {
				gvk := obj.GroupVersionKind()
				if e.app.syncStatusOf(gvk.Group, gvk.Kind, obj.GetNamespace(), obj.GetName()) != "" {
					return true
				}
			}
		}
	}
	if !writtenByArgo(obj) && !a.opts.FindUntracked {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.listAppsLocked(ctx)
	return true
}

// writtenByArgo: obj has a managedFields entry of one of Argo CD's field
// managers (every sync leaves one, client-side or server-side).
func writtenByArgo(obj *unstructured.Unstructured) bool {
	for _, mf := range obj.GetManagedFields() {
		if IsManager(strings.ToLower(mf.Manager)) {
			return true
		}
	}
	return false
}

// instanceLabelKey is argocd-cm application.instanceLabelKey, or its
// default.
func instanceLabelKey(s *Settings) string {
	if s.InstanceLabelKey != "" {
		return s.InstanceLabelKey
	}
	return DefaultInstanceLabelKey
}

// ownerMarked is live with the tracking marks Argo CD's target carries for
// owner where live has none (util/argo/resource_tracking.go SetAppInstance:
// the annotation <app>:<group>/<kind>:<ns>/<name> unless label tracking,
// the instance label with label and annotation+label tracking, truncated
// to 63 characters with the latter). withTracking copies the marks from it
// into the desired state, as Argo CD's controller sets them on its target;
// a mark live lacks is then a difference of Argo CD's diff, as it is for
// Argo CD (a sync puts it back). live itself is returned when it lacks
// nothing.
func (a *Adapter) ownerMarked(live *unstructured.Unstructured, owner *model.Owner, app *Application, s *Settings) *unstructured.Unstructured {
	if live == nil || owner == nil {
		return live
	}
	inst := owner.Name
	if owner.Namespace != a.opts.Namespace {
		inst = owner.Namespace + "_" + owner.Name
	}
	out := live
	set := func(labels bool, k, v string) {
		if out == live {
			out = live.DeepCopy()
		}
		m := out.GetAnnotations()
		if labels {
			m = out.GetLabels()
		}
		if m == nil {
			m = map[string]string{}
		}
		m[k] = v
		if labels {
			out.SetLabels(m)
		} else {
			out.SetAnnotations(m)
		}
	}
	if s.TrackingMethod != TrackingLabel && live.GetAnnotations()[AnnotationTrackingID] == "" {
		ns := live.GetNamespace()
		if ns == "" && app != nil {
			// UnstructuredToAppInstanceValue: a cluster-scoped object
			// carries the Application's destination namespace.
			ns = app.Spec.Destination.Namespace
		}
		gvk := live.GroupVersionKind()
		set(false, AnnotationTrackingID, inst+":"+gvk.Group+"/"+gvk.Kind+":"+ns+"/"+live.GetName())
	}
	key := instanceLabelKey(s)
	if (s.TrackingMethod == TrackingLabel || s.TrackingMethod == TrackingAnnotationAndLabel) && live.GetLabels()[key] == "" {
		v := inst
		if s.TrackingMethod == TrackingAnnotationAndLabel && len(v) > 63 {
			// TruncateLabel: 63 characters, no trailing special character.
			v = strings.TrimRightFunc(v[:63], func(r rune) bool { return !isAlnum(r) })
		}
		set(true, key, v)
	}
	return out
}

func isAlnum(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
}

// missingMarkDrifts are the tracking marks ownerMarked added that Argo CD's
// diff shows (seen): a person deleted them, Argo CD reports their absence
// and a sync restores them. Inference never lists them (nobody owns a
// deleted field), nor does a desired state from Git (it has no marks).
func missingMarkDrifts(drifts []model.FieldDrift, seen []string, live, marked *unstructured.Unstructured, predicted any) []model.FieldDrift {
	if marked == live || marked == nil {
		return nil
	}
	var shown []string
	for p := range markPaths(live, marked) {
		// Argo CD's diff shows the whole map when live has none left.
		if slices.ContainsFunc(seen, func(s string) bool { return s == p || strings.HasPrefix(p, s+"/") }) {
			shown = append(shown, p)
		}
	}
	slices.Sort(shown)
	return unownedDiffs(drifts, shown, live, predicted)
}

// markPaths are the tracking marks marked has and live lacks, as JSON
// pointers with their values, sorted.
func markPaths(live, marked *unstructured.Unstructured) map[string]string {
	out := map[string]string{}
	for k, v := range marked.GetAnnotations() {
		if _, ok := live.GetAnnotations()[k]; !ok {
			out["/metadata/annotations/"+jsonpointer.Escape(k)] = v
		}
	}
	for k, v := range marked.GetLabels() {
		if _, ok := live.GetLabels()[k]; !ok {
			out["/metadata/labels/"+jsonpointer.Escape(k)] = v
		}
	}
	return out
}

// inferredMarkDrifts are, without a desired state (inferred mode, when
// the last-applied-configuration is not Argo CD's: the kubectl apply that
// deleted the marks rewrote it), the tracking marks live lacks, each with
// its verdict: Argo CD's target always carries them (SetAppInstance), so
// their absence is a difference of its diff whatever Git holds, except the
// annotation of annotation+label tracking on an object that kept its
// instance label: Argo CD's tracking normalization copies the target's
// annotation onto live (util/argo/resource_tracking.go Normalize).
func inferredMarkDrifts(drifts []model.FieldDrift, live, marked *unstructured.Unstructured, s *Settings, owner *model.Owner) []model.FieldDrift {
	if marked == live || marked == nil {
		return nil
	}
	backfilled := s.TrackingMethod == TrackingAnnotationAndLabel && live.GetLabels()[instanceLabelKey(s)] != ""
	var out []model.FieldDrift
	marks := markPaths(live, marked)
	for _, p := range slices.Sorted(maps.Keys(marks)) {
		if backfilled && p == "/metadata/annotations/"+jsonpointer.Escape(AnnotationTrackingID) {
			continue
		}
		if slices.ContainsFunc(drifts, func(d model.FieldDrift) bool { return d.Path == p }) {
			continue
		}
		v := model.Verdict{Engine: Engine, Kind: model.Reported,
			Reason: "Argo CD's target carries this tracking mark (" + trackingMethodName(s.TrackingMethod) + " tracking) and the live object lost it: Argo CD's diff shows it missing; a sync puts it back"}
		if owner.SelfHeal {
			v.Kind = model.Reverted
			v.Reason += ", and self-heal syncs"
		}
		fd := model.FieldDrift{Path: p, FieldPath: managedfields.FieldPath(live, p), Change: model.Removed, Desired: marks[p], Cause: model.CauseUnknown}
		fd.SetVerdict(v)
		out = append(out, fd)
	}
	return out
}

// trackingMethodName names argocd-cm's application.resourceTrackingMethod
// as a user reads it, the default included.
func trackingMethodName(m string) string {
	if m == "" {
		return TrackingAnnotation + " (default)"
	}
	return m
}
