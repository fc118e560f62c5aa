package scan

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/restmapper"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kubectl-drift/kubectl-drift/internal/cluster"
)

// preferredDiscovery is client-go's fake discovery; with failing, one
// group's resources cannot be read, as when an aggregated API is down.
type preferredDiscovery struct {
	*fakediscovery.FakeDiscovery
	failing bool
}

const failingGV = "metrics.k8s.io/v1beta1"

func (d *preferredDiscovery) ServerResourcesForGroupVersion(gv string) (*metav1.APIResourceList, error) {
	if d.failing && gv == failingGV {
		return nil, errors.New("service unavailable")
	}
	return d.FakeDiscovery.ServerResourcesForGroupVersion(gv)
}

func (d *preferredDiscovery) ServerResourcesForGroupVersionWithContext(_ context.Context, gv string) (*metav1.APIResourceList, error) {
	return d.ServerResourcesForGroupVersion(gv)
}

func kindsFixture() (*preferredDiscovery, meta.RESTMapper) {
	rw := []string{"get", "list", "watch"}
	fd := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{}}
	fd.Resources = []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "configmaps", Kind: "ConfigMap", Namespaced: true, ShortNames: []string{"cm"}, Verbs: rw},
			{Name: "secrets", Kind: "Secret", Namespaced: true, Verbs: rw},
			{Name: "services", Kind: "Service", Namespaced: true, ShortNames: []string{"svc"}, Verbs: rw},
			{Name: "services/status", Kind: "Service", Namespaced: true, Verbs: []string{"get", "patch"}},
			{Name: "events", Kind: "Event", Namespaced: true, Verbs: rw},
			{Name: "namespaces", Kind: "Namespace", Namespaced: false, Verbs: rw},
			{Name: "bindings", Kind: "Binding", Namespaced: true, Verbs: []string{"create"}},
		}},
		{GroupVersion: "apps/v1", APIResources: []metav1.APIResource{
			{Name: "deployments", Kind: "Deployment", Namespaced: true, ShortNames: []string{"deploy"}, Verbs: rw},
		}},
		{GroupVersion: "example.dev/v1", APIResources: []metav1.APIResource{
			{Name: "widgets", Kind: "Widget", Namespaced: true, Verbs: []string{"get", "list"}},
		}},
	}
	d := &preferredDiscovery{FakeDiscovery: fd}
	// As ConfigFlags.ToRESTMapper builds it: deferred, behind the
	// short-name expander.
	mapper := restmapper.NewShortcutExpander(restmapper.NewDeferredDiscoveryRESTMapper(memCached{d}), d, nil)
	return d, mapper
}

// memCached adapts the fake to the cached interface the deferred mapper
// wants (always fresh).
type memCached struct{ *preferredDiscovery }

func (memCached) Fresh() bool { return true }
func (memCached) Invalidate() {}

func (m memCached) ServerGroups() (*metav1.APIGroupList, error) {
	list := &metav1.APIGroupList{}
	for _, r := range m.Resources {
		gv, _ := schema.ParseGroupVersion(r.GroupVersion)
		v := metav1.GroupVersionForDiscovery{GroupVersion: r.GroupVersion, Version: gv.Version}
		list.Groups = append(list.Groups, metav1.APIGroup{Name: gv.Group, Versions: []metav1.GroupVersionForDiscovery{v}, PreferredVersion: v})
	}
	return list, nil
}

func (m memCached) ServerResourcesForGroupVersion(gv string) (*metav1.APIResourceList, error) {
	for _, r := range m.Resources {
		if r.GroupVersion == gv {
			return r, nil
		}
	}
	return nil, errors.New("not found")
}

func (m memCached) ServerGroupsAndResources() ([]*metav1.APIGroup, []*metav1.APIResourceList, error) {
	gl, _ := m.ServerGroups()
	var groups []*metav1.APIGroup
	for i := range gl.Groups {
		groups = append(groups, &gl.Groups[i])
	}
	return groups, m.Resources, nil
}

func resources(kinds []Kind) []string {
	var out []string
	for _, k := range kinds {
		out = append(out, k.String())
	}
	return out
}

func TestResolveKinds(t *testing.T) {
	d, mapper := kindsFixture()
	tests := []struct {
		name  string
		specs []string
		verbs []string
		want  []string
		err   string
	}{
		// Default kinds the server does not serve (statefulsets...) are skipped.
		{name: "default", want: []string{"configmaps", "secrets", "services", "deployments.apps"}},
		{name: "explicit", specs: []string{"deploy", "cm", "deployments.apps", "Widget"}, want: []string{"configmaps", "deployments.apps", "widgets.example.dev"}},
		{name: "default plus", specs: []string{"default", "widgets"}, want: []string{"configmaps", "secrets", "services", "deployments.apps", "widgets.example.dev"}},
		// all: namespaced, listable, no subresources, no events.
		{name: "all", specs: []string{"all"}, verbs: []string{"list"}, want: []string{"configmaps", "secrets", "services", "deployments.apps", "widgets.example.dev"}},
		// --watch needs watch: widgets cannot be watched.
		{name: "all watchable", specs: []string{"all"}, verbs: []string{"list", "watch"}, want: []string{"configmaps", "secrets", "services", "deployments.apps"}},
		{name: "unknown", specs: []string{"cm", "gadgets"}, err: `the server doesn't have a resource type "gadgets"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kinds, warns, err := ResolveKinds(mapper, d, "https://example", tt.specs, tt.verbs...)
			if tt.err != "" {
				var ut *cluster.UnknownTypeError
				if err == nil || !strings.Contains(err.Error(), tt.err) || !errors.As(err, &ut) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || len(warns) > 0 {
				t.Fatalf("err=%v warnings=%v", err, warns)
			}
			if diff := cmp.Diff(tt.want, resources(kinds)); diff != "" {
				t.Errorf("kinds (-want +got):\n%s", diff)
			}
		})
	}
}

func TestResolveKindsAllWithAFailingGroup(t *testing.T) {
	d, mapper := kindsFixture()
	d.failing = true
	d.Resources = append(d.Resources, &metav1.APIResourceList{GroupVersion: failingGV})
	kinds, warns, err := ResolveKinds(mapper, d, "https://example", []string{"all"}, "list")
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) != 1 || !strings.Contains(warns[0], "metrics.k8s.io/v1beta1") {
		t.Errorf("warnings = %q", warns)
	}
	if len(kinds) != 5 {
		t.Errorf("kinds = %v: the working groups must still be scanned", resources(kinds))
	}
}
