package argocd

import (
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/kubectl-drift/kubectl-drift/internal/managedfields"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/model/jsonpointer"
)

// serverUpdate is what the API server's update strategy does to an
// updated object before it stores it, after decoding and defaulting: for
// a Service, PrepareForUpdate clears the fields that depend on the type
// and the traffic policy when the update no longer needs them and left
// them as they were (kubernetes pkg/registry/core/service/strategy.go
// dropTypeDependentFields, v1.37.2: an allocated healthCheckNodePort is
// released when externalTrafficPolicy goes back to Cluster). Argo CD's
// server-side diff sees it in its dry-run and its sync in the stored
// object; the client-side computations of both need it too (differential
// seeds 52110, 50186, 51028, 51148: self-heal deleted
// externalTrafficPolicy Local and the server released
// /spec/healthCheckNodePort); a DaemonSet's template generation
// (daemonSetUpdate). Other kinds are returned as they are.
func serverUpdate(old, updated *unstructured.Unstructured) *unstructured.Unstructured {
	if old == nil || updated == nil || old.GroupVersionKind() != updated.GroupVersionKind() {
		return updated
	}
	switch gvk := updated.GroupVersionKind(); {
	case gvk.Group == "apps" && gvk.Kind == "DaemonSet":
		return daemonSetUpdate(old, updated)
	case gvk.Group != "" || gvk.Kind != "Service":
		return updated
	}
	var o, n corev1.Service
	if runtime.DefaultUnstructuredConverter.FromUnstructured(old.Object, &o) != nil ||
		runtime.DefaultUnstructuredConverter.FromUnstructured(updated.Object, &n) != nil {
		return updated
	}
	out := updated.DeepCopy()
	for _, p := range serviceDependentDrops(&o, &n) {
		jsonpointer.Remove(out.Object, p)
	}
	return out
}

// serviceDependentDrops are the fields dropTypeDependentFields clears of
// n, updated from o, as pointers (the field set to its zero is
// omitted when stored). status.loadBalancer, which it also clears for a
// type that is no LoadBalancer, is status: no Argo CD comparison reads it.
func serviceDependentDrops(o, n *corev1.Service) []string {
	var drops []string
	if needsClusterIP(o) && !needsClusterIP(n) {
		if o.Spec.ClusterIP == n.Spec.ClusterIP && slices.Equal(o.Spec.ClusterIPs, n.Spec.ClusterIPs) {
			drops = append(drops, "/spec/clusterIP", "/spec/clusterIPs")
		}
		if slices.Equal(o.Spec.IPFamilies, n.Spec.IPFamilies) {
			drops = append(drops, "/spec/ipFamilies")
		}
		if ptrString(o.Spec.IPFamilyPolicy) == ptrString(n.Spec.IPFamilyPolicy) {
			drops = append(drops, "/spec/ipFamilyPolicy")
		}
	}
	if needsNodePort(o) && !needsNodePort(n) && nodePortsSubset(n, o) {
		for i := range n.Spec.Ports {
			if n.Spec.Ports[i].NodePort != 0 {
				drops = append(drops, "/spec/ports/"+strconv.Itoa(i)+"/nodePort")
			}
		}
	}
	if needsHCNodePort(o) && !needsHCNodePort(n) && o.Spec.HealthCheckNodePort == n.Spec.HealthCheckNodePort {
		drops = append(drops, "/spec/healthCheckNodePort")
	}
	if o.Spec.Type == corev1.ServiceTypeLoadBalancer && n.Spec.Type != corev1.ServiceTypeLoadBalancer &&
		o.Spec.AllocateLoadBalancerNodePorts != nil && n.Spec.AllocateLoadBalancerNodePorts != nil &&
		*o.Spec.AllocateLoadBalancerNodePorts == *n.Spec.AllocateLoadBalancerNodePorts {
		drops = append(drops, "/spec/allocateLoadBalancerNodePorts")
	}
	if o.Spec.Type == corev1.ServiceTypeLoadBalancer && n.Spec.Type != corev1.ServiceTypeLoadBalancer &&
		ptrString(o.Spec.LoadBalancerClass) == ptrString(n.Spec.LoadBalancerClass) {
		drops = append(drops, "/spec/loadBalancerClass")
	}
	if externallyAccessible(o) && !externallyAccessible(n) && o.Spec.ExternalTrafficPolicy == n.Spec.ExternalTrafficPolicy {
		drops = append(drops, "/spec/externalTrafficPolicy")
	}
	return drops
}

// The predicates of kubernetes pkg/registry/core/service/strategy.go and
// pkg/api/service/util.go, on the v1 type.

func needsClusterIP(s *corev1.Service) bool { return s.Spec.Type != corev1.ServiceTypeExternalName }

func needsNodePort(s *corev1.Service) bool {
	return s.Spec.Type == corev1.ServiceTypeNodePort || s.Spec.Type == corev1.ServiceTypeLoadBalancer
}

func needsHCNodePort(s *corev1.Service) bool {
	return s.Spec.Type == corev1.ServiceTypeLoadBalancer && s.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal
}

func externallyAccessible(s *corev1.Service) bool {
	return s.Spec.Type == corev1.ServiceTypeLoadBalancer || s.Spec.Type == corev1.ServiceTypeNodePort ||
		(s.Spec.Type == corev1.ServiceTypeClusterIP && len(s.Spec.ExternalIPs) > 0)
}

// nodePortsSubset: n adds no node port o lacks (sameNodePorts).
func nodePortsSubset(n, o *corev1.Service) bool {
	have := map[int32]bool{}
	for _, p := range o.Spec.Ports {
		have[p.NodePort] = true
	}
	for _, p := range n.Spec.Ports {
		if p.NodePort != 0 && !have[p.NodePort] {
			return false
		}
	}
	return true
}

func ptrString[T ~string](p *T) string {
	if p == nil {
		return ""
	}
	return string(*p)
}

// released are the drifts of the fields live has that the API server
// clears in the sync's write (after: the object the sync leaves, through
// serverUpdate) and no drift of rep covers: Argo CD's diff does not show
// them (they follow the field the sync changes), and the sync deletes
// them. dependent are live's serviceDependentPointers; why says which
// sync.
func released(rep *model.Report, live, after *unstructured.Unstructured, dependent []string, why string) []model.FieldDrift {
	var listed, paths []string
	for _, d := range rep.Drifts {
		listed = append(listed, d.Path)
	}
	for _, p := range dependent {
		if _, kept := jsonpointer.Get(after.Object, p); !kept && !anyCovers(listed, p) {
			paths = append(paths, p)
		}
	}
	out := unownedDiffs(rep.Drifts, paths, live, after.Object)
	for i := range out {
		out[i].Verdicts = []model.Verdict{{Engine: Engine, Kind: model.LeftAlone,
			Reason: "not in Argo CD's diff: the API server set it for the Service's type and traffic policy; the object is OutOfSync and " +
				SyncDeletesPhrase + ": " + why + ", and the API server clears it in the same write when the Service no longer needs it (kubernetes pkg/registry/core/service/strategy.go dropTypeDependentFields)"}}
	}
	return out
}

// serviceDependentPointers are the pointers of the fields
// dropTypeDependentFields may clear that live has.
func serviceDependentPointers(live *unstructured.Unstructured) []string {
	var out []string
	for _, p := range []string{"/spec/clusterIP", "/spec/clusterIPs", "/spec/ipFamilies", "/spec/ipFamilyPolicy",
		"/spec/healthCheckNodePort", "/spec/allocateLoadBalancerNodePorts", "/spec/loadBalancerClass", "/spec/externalTrafficPolicy"} {
		if _, ok := jsonpointer.Get(live.Object, p); ok {
			out = append(out, p)
		}
	}
	ports, _, _ := unstructured.NestedSlice(live.Object, "spec", "ports")
	for i := range ports {
		p := "/spec/ports/" + strconv.Itoa(i) + "/nodePort"
		if _, ok := jsonpointer.Get(live.Object, p); ok {
			out = append(out, p)
		}
	}
	return out
}

// syncReleases lists the fields the API server clears in the write of a
// sync (selfHeal's too) of the OutOfSync object: the sync deletes the
// fields whose verdicts say so and writes Git's value where it reverts
// one; the server defaults the result and runs its update strategy
// (serverUpdate), which releases a Service's healthCheckNodePort when
// externalTrafficPolicy Local is gone (differential seeds 52110, 51028,
// 51148: self-heal changed /spec/healthCheckNodePort, which Argo CD's diff
// did not show and the tool did not name). Such a field Argo CD's diff
// does not show is left alone, a sync deletes it; one it shows that a
// client-side sync was said to keep (syncPrunes: last-applied-configuration
// does not list it) goes too (seed 50186: Git sets externalTrafficPolicy
// Cluster, the server-side diff shows both fields, self-heal changed both).
// For every built-in kind, a field the server's defaulting drops with the
// field it derives from is named too (defaultedAway).
func syncReleases(rep *model.Report, live *unstructured.Unstructured, app *Application) {
	if app == nil || live == nil {
		return
	}
	after, ok := syncWrite(rep, live)
	if !ok {
		return
	}
	if live.GroupVersionKind().Group == "" && live.GetKind() == "Service" {
		serviceReleases(rep, live, after, app)
	}
	rep.Drifts = append(rep.Drifts, defaultedAway(rep, live, after)...)
}

// serviceReleases is syncReleases for a Service: its update strategy's
// drops and allocations (serverUpdate) besides the defaulting.
func serviceReleases(rep *model.Report, live, after *unstructured.Unstructured, app *Application) {
	const why = "the sync changes the fields this one goes with"
	dependent := serviceDependentPointers(live)
	for i := range rep.Drifts {
		d := &rep.Drifts[i]
		v := verdictOf(*d, Engine)
		if v == nil || v.Kind != model.Reported || !strings.Contains(v.Reason, SyncKeepsPhrase) || !slices.Contains(dependent, d.Path) {
			continue
		}
		if _, kept := jsonpointer.Get(after.Object, d.Path); !kept {
			nv := outOfSyncVerdict(app, false)
			nv.Reason += "; " + why + ", and the API server clears this one in the same write (kubernetes pkg/registry/core/service/strategy.go dropTypeDependentFields)"
			d.SetVerdict(nv)
		}
	}
	rep.Drifts = append(rep.Drifts, released(rep, live, after, dependent, why)...)
	rep.Drifts = append(rep.Drifts, allocated(rep, live, after)...)
}

// defaultedAway are the drifts of the spec fields live has that the API
// server's defaulting drops in the sync's write (after) and no drift of
// rep covers: a field derived from another that the sync deletes or
// changes, such as a Service's sessionAffinityConfig once a client-side
// sync deletes sessionAffinity, which kubectl's last-applied-configuration
// listed (core/v1 SetDefaults_Service sets sessionAffinity None and drops
// the config; differential seed 56194, A25: self-heal deleted it, the
// comparison had taken it for a default of live and named nothing).
// Argo CD's diff does not show such a field; the sync deletes it. Only
// built-in kinds (a custom resource's schema defaults are not computed
// here), only members of maps (a list item's pointer depends on how the
// lists align), and only fields the linked Go types know: live's own
// round trip (serverRoundTrip) keeps the fields a newer API server wrote,
// so that a field the types do not know is not taken for one the sync
// drops.
func defaultedAway(rep *model.Report, live, after *unstructured.Unstructured) []model.FieldDrift {
	if _, err := scheme.Scheme.New(live.GroupVersionKind()); err != nil {
		return nil
	}
	known, err := serverRoundTrip(live)
	if err != nil {
		return nil
	}
	var listed []string
	for _, d := range rep.Drifts {
		listed = append(listed, d.Path)
	}
	var paths []string
	for _, p := range changedPaths(live.Object["spec"], after.Object["spec"], "/spec") {
		_, inAfter := jsonpointer.Get(after.Object, p)
		_, isKnown := jsonpointer.Get(known.Object, p)
		if !inAfter && isKnown && !anyCovers(listed, p) && !throughList(live.Object, p) {
			paths = append(paths, p)
		}
	}
	out := unownedDiffs(rep.Drifts, paths, live, after.Object)
	for i := range out {
		out[i].Verdicts = []model.Verdict{{Engine: Engine, Kind: model.LeftAlone,
			Reason: "not in Argo CD's diff: the API server derives it from another field; the object is OutOfSync and " +
				SyncDeletesPhrase + ": the sync changes the field it derives from, and the API server's defaulting drops it in the same write (kubernetes pkg/apis/*/v1 defaults.go)"}}
	}
	return out
}

// throughList: p names a member of a list item of doc (its pointer
// depends on how the lists align).
func throughList(doc map[string]any, p string) bool {
	toks, err := jsonpointer.Parse(p)
	if err != nil {
		return true
	}
	var cur any = doc
	for _, tok := range toks[:max(len(toks)-1, 0)] {
		m, ok := cur.(map[string]any)
		if !ok {
			return true
		}
		cur = m[tok]
	}
	_, isMap := cur.(map[string]any)
	return !isMap
}

// SyncAddsPhrase ends the reason of a field the live object lacks that
// Argo CD's diff does not show and a sync of the OutOfSync object makes
// the API server add; the differential harness reads it, as it reads
// SyncDeletesPhrase.
const SyncAddsPhrase = "a sync adds it"

// allocated are the drifts of the fields the API server's Service
// storage allocates in the sync's write (after) that live lacks: a
// healthCheckNodePort once the type is LoadBalancer with
// externalTrafficPolicy Local, a node port for each port once the type
// needs them (kubernetes pkg/registry/core/service/storage/alloc.go
// allocHealthCheckNodePort, initNodePorts; storage.go needsHCNodePort,
// needsNodePort). Differential seeds 51028, 51148: Git adds
// externalTrafficPolicy Local, Argo CD's diff shows the policy alone,
// self-heal's sync changed /spec/healthCheckNodePort (allocated).
func allocated(rep *model.Report, live, after *unstructured.Unstructured) []model.FieldDrift {
	var n corev1.Service
	if runtime.DefaultUnstructuredConverter.FromUnstructured(after.Object, &n) != nil {
		return nil
	}
	var paths []string
	if needsHCNodePort(&n) && n.Spec.HealthCheckNodePort == 0 {
		paths = append(paths, "/spec/healthCheckNodePort")
	}
	if n.Spec.Type == corev1.ServiceTypeNodePort || n.Spec.Type == corev1.ServiceTypeLoadBalancer &&
		(n.Spec.AllocateLoadBalancerNodePorts == nil || *n.Spec.AllocateLoadBalancerNodePorts) {
		for i, p := range n.Spec.Ports {
			if p.NodePort == 0 {
				paths = append(paths, "/spec/ports/"+strconv.Itoa(i)+"/nodePort")
			}
		}
	}
	var listed []string
	for _, d := range rep.Drifts {
		listed = append(listed, d.Path)
	}
	var out []model.FieldDrift
	for _, p := range paths {
		if pointerPresent(live, p) || anyCovers(listed, p) {
			continue
		}
		out = append(out, model.FieldDrift{Path: p, FieldPath: managedfields.FieldPath(live, p), Change: model.Removed, Cause: model.CauseUnknown,
			Verdicts: []model.Verdict{{Engine: Engine, Kind: model.LeftAlone,
				Reason: "not in Argo CD's diff: the API server allocates it, no manifest sets it; the object is OutOfSync and " + SyncAddsPhrase +
					": the sync changes the Service's type or traffic policy so that it needs one, and the API server allocates it in the same write (kubernetes pkg/registry/core/service/storage/alloc.go)"}}})
	}
	return out
}

// syncWrite is the object a sync of rep's fields stores: live without the
// fields it deletes (a verdict saying so, or a field of Argo CD's diff Git
// lacks), with Git's value where Argo CD's diff shows one, defaulted by the server's decode
// and through its update strategy (serverUpdate). ok is false when the
// sync changes none of them.
func syncWrite(rep *model.Report, live *unstructured.Unstructured) (*unstructured.Unstructured, bool) {
	after := live.DeepCopy()
	changed := false
	for _, d := range rep.Drifts {
		v := verdictOf(d, Engine)
		if v == nil {
			continue
		}
		// Argo CD's diff shows it and the sync writes Git's side of it,
		// or a verdict says the sync writes it anyway.
		written := v.Kind == model.Reverted || v.Kind == model.Reported &&
			!strings.Contains(v.Reason, SyncKeepsPhrase) && !strings.Contains(v.Reason, ServerSetsAgainPhrase)
		switch {
		case d.Change == model.Added && (written || strings.Contains(v.Reason, SyncDeletesPhrase)):
			jsonpointer.Remove(after.Object, d.Path)
			changed = true
		case written, v.Kind == model.Ignored && strings.Contains(v.Reason, SyncReappliesPhrase):
			changed = setAt(after.Object, d.Path, d.Desired) || changed
		}
	}
	if !changed {
		return nil, false
	}
	stored, err := serverRoundTrip(after)
	if err != nil {
		return nil, false
	}
	return serverUpdate(live, stored), true
}

// setAt sets the field at pointer p of doc to v when its parent is a map
// doc has; it says whether it did.
func setAt(doc map[string]any, p string, v any) bool {
	toks, err := jsonpointer.Parse(p)
	if err != nil || len(toks) == 0 {
		return false
	}
	parent, n := jsonpointer.Walk(doc, toks[:len(toks)-1])
	m, ok := parent.(map[string]any)
	if !ok || n != len(toks)-1 {
		return false
	}
	m[toks[len(toks)-1]] = v
	return true
}

// templateGenerationAnnotation is where apps/v1 keeps a DaemonSet's
// spec.templateGeneration (kubernetes pkg/apis/apps/v1/conversion.go).
const templateGenerationAnnotation = "deprecated.daemonset.template.generation"

// daemonSetUpdate is the DaemonSet strategy's PrepareForUpdate (kubernetes
// pkg/registry/apps/daemonset/strategy.go): no update sets the template
// generation; the server keeps the stored one, plus one when the template
// changes (and the generation with it). Argo CD's server-side diff sees
// the new value in its dry-run and shows the annotation where the dry-run
// changes the template (differential seed 53130: a jq rule hides the
// container image a person changed, the dry-run of Git's manifest puts it
// back, and Argo CD is OutOfSync on the annotation alone).
func daemonSetUpdate(old, updated *unstructured.Unstructured) *unstructured.Unstructured {
	out := updated.DeepCopy()
	gen, _ := strconv.ParseInt(old.GetAnnotations()[templateGenerationAnnotation], 10, 64)
	oldT, _, _ := unstructured.NestedFieldNoCopy(old.Object, "spec", "template")
	newT, _, _ := unstructured.NestedFieldNoCopy(updated.Object, "spec", "template")
	changed := !jsonEqual(oldT, newT)
	if changed {
		gen++
		out.SetGeneration(old.GetGeneration() + 1)
	}
	if changed || gen != 0 {
		ann := out.GetAnnotations()
		if ann == nil {
			ann = map[string]string{}
		}
		ann[templateGenerationAnnotation] = strconv.FormatInt(gen, 10)
		out.SetAnnotations(ann)
	}
	return out
}
