package cluster

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"syscall"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/restmapper"
	clienttesting "k8s.io/client-go/testing"
)

func TestVerb(t *testing.T) {
	tests := []struct {
		method, path, watch, want string
	}{
		{"GET", "/api/v1/namespaces/ns/pods", "", "list"},
		{"GET", "/api/v1/namespaces/ns/pods/p", "", "get"},
		{"GET", "/api/v1/namespaces/ns/pods/p/log", "", "get"},
		{"GET", "/api/v1/namespaces", "", "list"},
		{"GET", "/api/v1/namespaces/ns", "", "get"},
		{"GET", "/api/v1/pods", "", "list"},
		{"GET", "/apis/apps/v1/deployments", "true", "watch"},
		{"GET", "/apis/apps/v1/namespaces/ns/deployments/web", "", "get"},
		{"GET", "/apis/apps/v1/namespaces/ns/deployments", "", "list"},
		{"GET", "/apis/apps/v1", "", "nonresource"},
		{"GET", "/version", "", "nonresource"},
		{"GET", "/openapi/v2", "", "nonresource"},
		{"POST", "/apis/apps/v1/namespaces/ns/deployments", "", "create"},
		{"PATCH", "/apis/apps/v1/namespaces/ns/deployments/web", "", "patch"},
		{"PUT", "/apis/apps/v1/namespaces/ns/deployments/web", "", "update"},
		{"DELETE", "/apis/apps/v1/namespaces/ns/deployments/web", "", "delete"},
		{"DELETE", "/apis/apps/v1/namespaces/ns/deployments", "", "deletecollection"},
	}
	for _, tt := range tests {
		if got := Verb(tt.method, tt.path, tt.watch); got != tt.want {
			t.Errorf("Verb(%s %s watch=%q) = %q, want %q", tt.method, tt.path, tt.watch, got, tt.want)
		}
	}
}

func TestCounterCountsThroughTransport(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	c := NewCounter()
	client := &http.Client{Transport: c.Wrap(http.DefaultTransport)}
	for _, p := range []string{"/api/v1/namespaces/a/configmaps", "/api/v1/namespaces/a/configmaps/x", "/apis/apps/v1/deployments"} {
		resp, err := client.Get(srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		if err := resp.Body.Close(); err != nil {
			t.Fatal(err)
		}
	}
	got := c.Counts()
	if got["list"] != 2 || got["get"] != 1 || c.Total() != 3 {
		t.Fatalf("counts = %v, want list=2 get=1", got)
	}
	if s := c.String(); s != "get=1 list=2" {
		t.Fatalf("String() = %q", s)
	}
}

func TestParseArgs(t *testing.T) {
	tests := []struct {
		args     []string
		typ, nm  string
		errMatch string
	}{
		{args: []string{"deploy/web"}, typ: "deploy", nm: "web"},
		{args: []string{"deployments.apps", "web"}, typ: "deployments.apps", nm: "web"},
		{args: []string{"deploy"}, errMatch: "expected TYPE/NAME"},
		{args: []string{"deploy/"}, errMatch: "expected TYPE/NAME"},
		{args: []string{"/web"}, errMatch: "expected TYPE/NAME"},
		{args: []string{"a/b/c"}, errMatch: "invalid object name"},
		{args: []string{"deploy/web", "x"}, errMatch: "expected TYPE/NAME"},
		{args: nil, errMatch: "got 0 arguments"},
		{args: []string{"a", "b", "c"}, errMatch: "got 3 arguments"},
	}
	for _, tt := range tests {
		typ, nm, err := ParseArgs(tt.args)
		if tt.errMatch != "" {
			if err == nil || !strings.Contains(err.Error(), tt.errMatch) {
				t.Errorf("ParseArgs(%q) error = %v, want %q", tt.args, err, tt.errMatch)
			}
			continue
		}
		if err != nil || typ != tt.typ || nm != tt.nm {
			t.Errorf("ParseArgs(%q) = %q, %q, %v; want %q, %q", tt.args, typ, nm, err, tt.typ, tt.nm)
		}
	}
}

// testMapper is a discovery-backed mapper with kubectl's short-name
// expander over a fake discovery holding apps/v1 deployments (short name
// deploy), v1 configmaps (cm) and cluster-scoped v1 namespaces (ns).
func testMapper(t *testing.T) meta.RESTMapper {
	t.Helper()
	fd := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{}}
	fd.Resources = []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "configmaps", Kind: "ConfigMap", Namespaced: true, ShortNames: []string{"cm"}, Verbs: []string{"get", "list"}},
			{Name: "namespaces", Kind: "Namespace", Namespaced: false, ShortNames: []string{"ns"}, Verbs: []string{"get", "list"}},
		}},
		{GroupVersion: "apps/v1", APIResources: []metav1.APIResource{
			{Name: "deployments", Kind: "Deployment", Namespaced: true, ShortNames: []string{"deploy"}, Verbs: []string{"get", "list"}},
		}},
	}
	groups := []*restmapper.APIGroupResources{
		{
			Group: metav1.APIGroup{Name: "", Versions: []metav1.GroupVersionForDiscovery{{GroupVersion: "v1", Version: "v1"}},
				PreferredVersion: metav1.GroupVersionForDiscovery{GroupVersion: "v1", Version: "v1"}},
			VersionedResources: map[string][]metav1.APIResource{"v1": fd.Resources[0].APIResources},
		},
		{
			Group: metav1.APIGroup{Name: "apps", Versions: []metav1.GroupVersionForDiscovery{{GroupVersion: "apps/v1", Version: "v1"}},
				PreferredVersion: metav1.GroupVersionForDiscovery{GroupVersion: "apps/v1", Version: "v1"}},
			VersionedResources: map[string][]metav1.APIResource{"v1": fd.Resources[1].APIResources},
		},
	}
	return restmapper.NewShortcutExpander(restmapper.NewDiscoveryRESTMapper(groups), fd, nil)
}

func TestMappingFor(t *testing.T) {
	mapper := testMapper(t)
	deploy := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	tests := []struct {
		arg  string
		want schema.GroupVersionKind
		err  string
	}{
		{arg: "deploy", want: deploy},
		{arg: "deployment", want: deploy},
		{arg: "deployments", want: deploy},
		{arg: "deployments.apps", want: deploy},
		{arg: "deployments.v1.apps", want: deploy},
		{arg: "Deployment", want: deploy},
		{arg: "cm", want: schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}},
		{arg: "ns", want: schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}},
		{arg: "widgets", err: `the server doesn't have a resource type "widgets"`},
		{arg: "deployments.nope", err: `the server doesn't have a resource type "deployments" in group "nope"`},
	}
	for _, tt := range tests {
		m, err := MappingFor(mapper, "https://example", tt.arg)
		if tt.err != "" {
			var ut *UnknownTypeError
			if err == nil || err.Error() != tt.err || !errors.As(err, &ut) {
				t.Errorf("MappingFor(%q) error = %v, want UnknownTypeError %q", tt.arg, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("MappingFor(%q): %v", tt.arg, err)
			continue
		}
		if m.GroupVersionKind != tt.want {
			t.Errorf("MappingFor(%q) = %v, want %v", tt.arg, m.GroupVersionKind, tt.want)
		}
	}
}

func TestAPIErrorMessages(t *testing.T) {
	deploy := schema.GroupResource{Group: "apps", Resource: "deployments"}
	forbidden := apierrors.NewForbidden(deploy, "web", fmt.Errorf(`User "nobody" cannot get resource "deployments" in API group "apps" in the namespace "shop"`))
	tests := []struct {
		name string
		err  error
		want string
	}{
		{
			name: "not found",
			err:  wrapAPIError("https://h", "get", deploy, "shop", "web", apierrors.NewNotFound(deploy, "web")),
			want: `deployments.apps "web" not found in namespace "shop"`,
		},
		{
			name: "forbidden names the verb, resource and user",
			err:  wrapAPIError("https://h", "get", deploy, "shop", "web", forbidden),
			want: `forbidden: cannot get deployments.apps "web" in namespace "shop" as user "nobody"; kubectl drift is read-only and needs the get and list verbs on deployments.apps`,
		},
		{
			name: "forbidden list at cluster scope",
			err:  wrapAPIError("https://h", "list", deploy, "", "", apierrors.NewForbidden(deploy, "", errors.New("no"))),
			want: `forbidden: cannot list deployments.apps at the cluster scope; kubectl drift is read-only and needs the get and list verbs on deployments.apps`,
		},
		{
			name: "unauthorized",
			err:  wrapAPIError("https://h", "get", deploy, "shop", "web", apierrors.NewUnauthorized("Unauthorized")),
			want: `unauthorized: the API server at https://h rejected the credentials (check --kubeconfig, --context, --token)`,
		},
		{
			name: "connection refused",
			err: wrapAPIError("https://127.0.0.1:1", "get", deploy, "shop", "web", &url.Error{Op: "Get", URL: "https://127.0.0.1:1/apis",
				Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}),
			want: `cannot reach the Kubernetes API server at https://127.0.0.1:1: connection refused (check --kubeconfig, --context, --server)`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
			if strings.Contains(tt.err.Error(), "\n") {
				t.Errorf("message spans lines: %q", tt.err.Error())
			}
		})
	}
	// Callers still see the API server's status through the wrapper.
	if !apierrors.IsNotFound(wrapAPIError("h", "get", deploy, "", "web", apierrors.NewNotFound(deploy, "web"))) {
		t.Error("IsNotFound does not see through APIError")
	}
	if !apierrors.IsForbidden(wrapAPIError("h", "get", deploy, "", "web", forbidden)) {
		t.Error("IsForbidden does not see through APIError")
	}
}

func TestServerErrorLeavesOtherErrorsAlone(t *testing.T) {
	plain := errors.New("something else")
	if got := ServerError("h", plain); got != plain { //nolint:errorlint // the very error, unwrapped
		t.Fatalf("ServerError wrapped a non-transport error: %v", got)
	}
	var ue *UnreachableError
	if !errors.As(ServerError("h", fmt.Errorf("Get \"https://h/api\": dial tcp: lookup h: no such host")), &ue) {
		t.Fatal("DNS failure not reported as unreachable")
	}
}
