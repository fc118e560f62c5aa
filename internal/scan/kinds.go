package scan

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"

	"github.com/kubectl-drift/kubectl-drift/internal/cluster"
)

// Kind is one resource type a scan lists.
type Kind struct {
	GVR        schema.GroupVersionResource
	GVK        schema.GroupVersionKind
	Namespaced bool
}

// String renders "deployments.apps", as kubectl names resource types.
func (k Kind) String() string { return k.GVR.GroupResource().String() }

// GroupKind renders "Deployment.apps" ("ConfigMap" for the core group),
// the form reports and metrics use.
func (k Kind) GroupKind() string {
	if k.GVK.Group == "" {
		return k.GVK.Kind
	}
	return k.GVK.Kind + "." + k.GVK.Group
}

// Mapping is the RESTMapping of the kind.
func (k Kind) Mapping() *meta.RESTMapping {
	scope := meta.RESTScopeRoot
	if k.Namespaced {
		scope = meta.RESTScopeNamespace
	}
	return &meta.RESTMapping{Resource: k.GVR, GroupVersionKind: k.GVK, Scope: scope}
}

// DefaultKinds are the kinds GitOps repositories mostly hold: workloads,
// their configuration, networking, autoscaling and namespaced RBAC. Kinds
// the server does not serve are skipped silently.
var DefaultKinds = []string{
	"deployments.apps", "statefulsets.apps", "daemonsets.apps", "cronjobs.batch",
	"services", "configmaps", "secrets", "serviceaccounts", "persistentvolumeclaims",
	"ingresses.networking.k8s.io", "networkpolicies.networking.k8s.io",
	"horizontalpodautoscalers.autoscaling", "poddisruptionbudgets.policy",
	"roles.rbac.authorization.k8s.io", "rolebindings.rbac.authorization.k8s.io",
}

// Special --kinds values.
const (
	KindsDefault = "default" // DefaultKinds
	KindsAll     = "all"     // every listable namespaced kind from discovery
)

// neverScanned are listable kinds that are never desired state and can be
// huge: events are written by controllers by the thousand.
var neverScanned = map[schema.GroupResource]bool{
	{Group: "", Resource: "events"}:              true,
	{Group: "events.k8s.io", Resource: "events"}: true,
}

// ResolveKinds turns --kinds values into kinds, resolved once against the
// (cached) discovery: resource names, short names and kinds as kubectl get
// accepts them, plus "default" and "all". No value means "default". An
// unknown explicit kind is an error; warnings report discovery groups that
// failed (the rest is still resolved). needVerbs are the verbs a kind must
// support for "all" (list, plus watch for --watch). The result is sorted
// and free of duplicates.
func ResolveKinds(mapper meta.RESTMapper, disco discovery.DiscoveryInterface, host string, specs []string, needVerbs ...string) (kinds []Kind, warnings []string, err error) {
	if len(specs) == 0 {
		specs = []string{KindsDefault}
	}
	seen := map[schema.GroupVersionResource]bool{}
	add := func(k Kind) {
		if !seen[k.GVR] && !neverScanned[k.GVR.GroupResource()] {
			seen[k.GVR] = true
			kinds = append(kinds, k)
		}
	}
	for _, spec := range specs {
		spec = strings.TrimSpace(spec)
		switch spec {
		case "":
			continue
		case KindsDefault:
			for _, d := range DefaultKinds {
				m, err := cluster.MappingFor(mapper, host, d)
				if err != nil {
					var unknown *cluster.UnknownTypeError
					if errors.As(err, &unknown) {
						continue // not served by this cluster: nothing to scan
					}
					return nil, warnings, err
				}
				add(kindOf(m))
			}
		case KindsAll:
			all, warns, err := discoverAll(disco, needVerbs)
			warnings = append(warnings, warns...)
			if err != nil {
				return nil, warnings, cluster.ServerError(host, err)
			}
			for _, k := range all {
				add(k)
			}
		default:
			m, err := cluster.MappingFor(mapper, host, spec)
			if err != nil {
				return nil, warnings, err
			}
			add(kindOf(m))
		}
	}
	sort.Slice(kinds, func(i, j int) bool {
		a, b := kinds[i].GVR, kinds[j].GVR
		if a.Group != b.Group {
			return a.Group < b.Group
		}
		return a.Resource < b.Resource
	})
	return kinds, warnings, nil
}

func kindOf(m *meta.RESTMapping) Kind {
	return Kind{GVR: m.Resource, GVK: m.GroupVersionKind, Namespaced: m.Scope.Name() == meta.RESTScopeNameNamespace}
}

// discoverAll lists every namespaced resource of each group's preferred
// version that supports needVerbs. A group whose discovery fails (an
// aggregated API that is down) is a warning, as in kubectl api-resources.
func discoverAll(disco discovery.DiscoveryInterface, needVerbs []string) ([]Kind, []string, error) {
	lists, err := discovery.ServerPreferredNamespacedResources(disco)
	var warnings []string
	if err != nil {
		var gdf *discovery.ErrGroupDiscoveryFailed
		if !errors.As(err, &gdf) {
			return nil, nil, err
		}
		for gv, gerr := range gdf.Groups {
			warnings = append(warnings, fmt.Sprintf("discovery of %s failed, its kinds are not scanned: %v", gv, gerr))
		}
		sort.Strings(warnings)
	}
	var out []Kind
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !hasVerbs(r.Verbs, needVerbs) {
				continue // subresources, and kinds we may not list
			}
			out = append(out, Kind{
				GVR:        gv.WithResource(r.Name),
				GVK:        gv.WithKind(r.Kind),
				Namespaced: r.Namespaced,
			})
		}
	}
	return out, warnings, nil
}

func hasVerbs(have []string, need []string) bool {
	for _, n := range need {
		found := false
		for _, h := range have {
			if h == n {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}
