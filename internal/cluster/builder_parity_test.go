package cluster

import (
	"net/http"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/resource"
	"k8s.io/client-go/rest/fake"
	"k8s.io/client-go/restmapper"
)

// TestMappingForMatchesKubectlBuilder: MappingFor resolves TYPE exactly as
// kubectl's resource.Builder does (k8s.io/cli-runtime pkg/resource/builder.go
// mappingFor, which is not exported), run here on the same mapper. MappingFor
// stays ours for what the Builder does not give: typed errors
// (UnknownTypeError, ServerError naming the host) and discovery failures
// reported as such instead of as an unknown type. The Builder is run with
// RequireObject(false), so it maps without fetching anything.
func TestMappingForMatchesKubectlBuilder(t *testing.T) {
	mapper := testMapper(t)
	builder := func() *resource.Builder {
		return resource.NewFakeBuilder(
			func(schema.GroupVersion) (resource.RESTClient, error) {
				return &fake.RESTClient{Resp: &http.Response{StatusCode: http.StatusNotFound}}, nil
			},
			func() (meta.RESTMapper, error) { return mapper, nil },
			func() (restmapper.CategoryExpander, error) { return restmapper.SimpleCategoryExpander{}, nil },
		)
	}
	for _, arg := range []string{"deploy", "deployment", "deployments", "deployments.apps", "deployments.v1.apps",
		"Deployment", "Deployment.apps", "Deployment.v1.apps", "cm", "configmap", "ConfigMap", "ns", "namespaces",
		"widgets", "deployments.nope", "Deployment.v9.apps"} {
		infos, berr := builder().Unstructured().NamespaceParam("shop").DefaultNamespace().
			ResourceTypeOrNameArgs(false, arg, "x").SingleResourceType().RequireObject(false).Do().Infos()
		m, err := MappingFor(mapper, "https://example", arg)
		if berr != nil {
			if err == nil || err.Error() != berr.Error() {
				t.Errorf("%q: kubectl says %v, MappingFor says %v (%v)", arg, berr, err, m)
			}
			continue
		}
		if len(infos) != 1 {
			t.Fatalf("%q: kubectl returned %d infos", arg, len(infos))
		}
		if err != nil {
			t.Errorf("%q: kubectl maps it to %v, MappingFor fails: %v", arg, infos[0].Mapping.GroupVersionKind, err)
			continue
		}
		if got, want := m.GroupVersionKind, infos[0].Mapping.GroupVersionKind; got != want || m.Resource != infos[0].Mapping.Resource {
			t.Errorf("%q: MappingFor = %v %v, kubectl = %v %v", arg, got, m.Resource, want, infos[0].Mapping.Resource)
		}
	}
}
