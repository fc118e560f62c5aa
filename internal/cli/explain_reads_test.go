package cli

import (
	"compress/gzip"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// explainCluster is an API server for one explain: discovery of
// Deployments, ConfigMaps, Argo CD Applications and Flux Kustomizations,
// and the objects of objects (path → object); every other path is 404. It
// records each request but discovery's as "METHOD PATH".
type explainCluster struct {
	objects map[string]any

	mu       sync.Mutex
	requests []string
}

// discoveryPath: /api, /apis, /api/v1, /apis/GROUP/VERSION (and the
// aggregated forms of the first two), which a cold cache reads once.
var discoveryPath = regexp.MustCompile(`^/(api|apis)(/[^/]+){0,2}$`)

func (f *explainCluster) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	write := func(v any) { _ = json.NewEncoder(w).Encode(v) }
	resource := func(name, kind string, namespaced bool) map[string]any {
		return map[string]any{"name": name, "singularName": strings.ToLower(kind), "namespaced": namespaced, "kind": kind, "verbs": []string{"get", "list", "patch"}}
	}
	gv := func(group, version string) map[string]any {
		v := map[string]any{"groupVersion": group + "/" + version, "version": version}
		return map[string]any{"name": group, "versions": []any{v}, "preferredVersion": v}
	}
	switch r.URL.Path {
	case "/api":
		write(map[string]any{"kind": "APIVersions", "versions": []string{"v1"}})
		return
	case "/apis":
		write(map[string]any{"kind": "APIGroupList", "apiVersion": "v1", "groups": []any{
			gv("apps", "v1"), gv("argoproj.io", "v1alpha1"), gv("kustomize.toolkit.fluxcd.io", "v1")}})
		return
	case "/api/v1":
		write(map[string]any{"kind": "APIResourceList", "groupVersion": "v1", "resources": []any{
			resource("configmaps", "ConfigMap", true), resource("secrets", "Secret", true), resource("namespaces", "Namespace", false)}})
		return
	case "/apis/apps/v1":
		write(map[string]any{"kind": "APIResourceList", "groupVersion": "apps/v1", "resources": []any{resource("deployments", "Deployment", true)}})
		return
	case "/apis/argoproj.io/v1alpha1":
		write(map[string]any{"kind": "APIResourceList", "groupVersion": "argoproj.io/v1alpha1", "resources": []any{resource("applications", "Application", true)}})
		return
	case "/apis/kustomize.toolkit.fluxcd.io/v1":
		write(map[string]any{"kind": "APIResourceList", "groupVersion": "kustomize.toolkit.fluxcd.io/v1", "resources": []any{resource("kustomizations", "Kustomization", true)}})
		return
	}
	if !discoveryPath.MatchString(r.URL.Path) {
		f.mu.Lock()
		f.requests = append(f.requests, r.Method+" "+r.URL.Path)
		f.mu.Unlock()
	}
	if obj, ok := f.objects[r.URL.Path]; ok {
		if r.URL.Query().Get("hash") != "" {
			// A document at its hashed URL, as kube-openapi's handler3
			// serves it: immutable, kept by the HTTP disk cache.
			w.Header().Set("Cache-Control", "public, immutable")
			w.Header().Set("Expires", time.Now().AddDate(1, 0, 0).Format(time.RFC1123))
		}
		write(obj)
		return
	}
	w.WriteHeader(http.StatusNotFound)
	write(map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound", "code": 404, "message": r.URL.Path + " not found"})
}

func (f *explainCluster) seen() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := slices.Clone(f.requests)
	slices.Sort(out)
	return out
}

// readsDeployment is Deployment shop/NAME as its engine applied it (fields
// managed by manager) with labels and annotations, then scaled by kubectl.
func readsDeployment(name, manager string, labels, annotations map[string]any) map[string]any {
	labels["app"] = name
	return map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": name, "namespace": "shop", "uid": "uid-" + name, "resourceVersion": "7", "generation": 2,
			"labels": labels, "annotations": annotations,
			"managedFields": []any{
				map[string]any{"manager": manager, "operation": "Apply", "apiVersion": "apps/v1", "time": "2026-12-01T10:00:00Z", "fieldsType": "FieldsV1",
					"fieldsV1": map[string]any{"f:spec": map[string]any{"f:selector": map[string]any{}, "f:template": map[string]any{"f:spec": map[string]any{"f:containers": map[string]any{
						`k:{"name":"app"}`: map[string]any{".": map[string]any{}, "f:image": map[string]any{}, "f:name": map[string]any{}}}}}}}},
				map[string]any{"manager": "kubectl", "operation": "Update", "subresource": "scale", "apiVersion": "apps/v1", "time": "2026-12-01T11:00:00Z", "fieldsType": "FieldsV1",
					"fieldsV1": map[string]any{"f:spec": map[string]any{"f:replicas": map[string]any{}}}},
			}},
		"spec": map[string]any{"replicas": 5, "selector": map[string]any{"matchLabels": map[string]any{"app": name}},
			"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": name}},
				"spec": map[string]any{"containers": []any{map[string]any{"name": "app", "image": "nginx:1.27"}}}}},
	}
}

// TestExplainReadsOnlyTheOwner: explain reads the object and its owner's
// objects, nothing of another engine and no list of an engine's objects
// (issue 35): a Kustomization's Deployment reads the Kustomization and no
// Argo CD object; an Application's Deployment reads the Application by
// GET (never a LIST of every Application), argocd-cm and
// argocd-cmd-params-cm, and neither the OpenAPI v2 document nor the
// cluster Secrets (its destination is the in-cluster server). Each mode:
// inferred, -f, --engine argocd. An Application whose managedFieldsManagers
// rule needs the schema adds /openapi/v3 and apps/v1's v3 document (a cold
// cache here), never /openapi/v2.
func TestExplainReadsOnlyTheOwner(t *testing.T) {
	fluxWeb := readsDeployment("web-flux", "kustomize-controller",
		map[string]any{"kustomize.toolkit.fluxcd.io/name": "apps", "kustomize.toolkit.fluxcd.io/namespace": "flux-system"}, map[string]any{})
	argoWeb := readsDeployment("web-argo", "argocd-controller", map[string]any{},
		map[string]any{"argocd.argoproj.io/tracking-id": "shop:apps/Deployment:shop/web-argo"})
	argoMF := readsDeployment("web-argo-mf", "argocd-controller", map[string]any{},
		map[string]any{"argocd.argoproj.io/tracking-id": "shop-mf:apps/Deployment:shop/web-argo-mf"})
	// web-lost: an Argo CD object whose tracking annotation a person
	// deleted; the Application's status.resources still lists it.
	argoLost := readsDeployment("web-lost", "argocd-controller", map[string]any{}, map[string]any{})
	shopApp := map[string]any{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
		"metadata": map[string]any{"name": "shop", "namespace": "argocd"},
		"spec": map[string]any{"project": "default", "source": map[string]any{"repoURL": "https://example.com/shop.git", "path": "deploy"},
			"destination": map[string]any{"server": "https://kubernetes.default.svc", "namespace": "shop"},
			"syncPolicy":  map[string]any{"automated": map[string]any{"selfHeal": true}}},
		"status": map[string]any{"resources": []any{
			map[string]any{"group": "apps", "version": "v1", "kind": "Deployment", "namespace": "shop", "name": "web-argo", "status": "OutOfSync"},
			map[string]any{"group": "apps", "version": "v1", "kind": "Deployment", "namespace": "shop", "name": "web-lost", "status": "OutOfSync"}}},
	}
	fake := &explainCluster{objects: map[string]any{
		"/apis/apps/v1/namespaces/shop/deployments/web-lost": argoLost,
		"/apis/argoproj.io/v1alpha1/applications": map[string]any{"apiVersion": "argoproj.io/v1alpha1", "kind": "ApplicationList",
			"metadata": map[string]any{"resourceVersion": "9"}, "items": []any{shopApp}},
		"/apis/apps/v1/namespaces/shop/deployments/web-argo-mf": argoMF,
		// A managedFieldsManagers rule applies to web-argo-mf: its verdict
		// needs the schema, read from apps/v1's OpenAPI v3 document (saved
		// from kube-apiserver v1.37.2), never /openapi/v2 (a 404 here).
		"/apis/argoproj.io/v1alpha1/namespaces/argocd/applications/shop-mf": map[string]any{
			"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
			"metadata": map[string]any{"name": "shop-mf", "namespace": "argocd"},
			"spec": map[string]any{"project": "default", "source": map[string]any{"repoURL": "https://example.com/shop.git", "path": "deploy"},
				"destination":       map[string]any{"server": "https://kubernetes.default.svc", "namespace": "shop"},
				"ignoreDifferences": []any{map[string]any{"group": "apps", "kind": "Deployment", "managedFieldsManagers": []any{"istio-webhook"}}}},
		},
		"/openapi/v3": map[string]any{"paths": map[string]any{
			"apis/apps/v1": map[string]any{"serverRelativeURL": "/openapi/v3/apis/apps/v1?hash=0123456789ABCDEF"}}},
		"/openapi/v3/apis/apps/v1":                           readGzipJSON(t, "../argocd/testdata/parity/openapi-v3/apis_apps_v1.json.gz"),
		"/apis/apps/v1/namespaces/shop/deployments/web-flux": fluxWeb,
		"/apis/apps/v1/namespaces/shop/deployments/web-argo": argoWeb,
		"/apis/kustomize.toolkit.fluxcd.io/v1/namespaces/flux-system/kustomizations/apps": map[string]any{
			"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
			"metadata": map[string]any{"name": "apps", "namespace": "flux-system"},
			"spec":     map[string]any{"interval": "10m", "path": "./apps", "prune": true, "sourceRef": map[string]any{"kind": "GitRepository", "name": "flux-system"}},
		},
		"/apis/argoproj.io/v1alpha1/namespaces/argocd/applications/shop": shopApp,
		"/api/v1/namespaces/argocd/configmaps/argocd-cm": map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "argocd-cm", "namespace": "argocd"}},
	}}
	dir := t.TempDir()
	manifest := func(name string) string {
		p := filepath.Join(dir, name+".yaml")
		body := "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: " + name + ", namespace: shop}\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: " + name + "}}\n" +
			"  template:\n    metadata: {labels: {app: " + name + "}}\n    spec: {containers: [{name: app, image: 'nginx:1.27'}]}\n"
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const (
		getFluxWeb  = "GET /apis/apps/v1/namespaces/shop/deployments/web-flux"
		getArgoWeb  = "GET /apis/apps/v1/namespaces/shop/deployments/web-argo"
		getKust     = "GET /apis/kustomize.toolkit.fluxcd.io/v1/namespaces/flux-system/kustomizations/apps"
		getApp      = "GET /apis/argoproj.io/v1alpha1/namespaces/argocd/applications/shop"
		getCM       = "GET /api/v1/namespaces/argocd/configmaps/argocd-cm"
		getParams   = "GET /api/v1/namespaces/argocd/configmaps/argocd-cmd-params-cm"
		getMFWeb    = "GET /apis/apps/v1/namespaces/shop/deployments/web-argo-mf"
		getMFApp    = "GET /apis/argoproj.io/v1alpha1/namespaces/argocd/applications/shop-mf"
		getV3       = "GET /openapi/v3"
		getV3Apps   = "GET /openapi/v3/apis/apps/v1"
		getArgoLost = "GET /apis/apps/v1/namespaces/shop/deployments/web-lost"
		listApps    = "GET /apis/argoproj.io/v1alpha1/applications"
	)
	for _, tc := range []struct {
		name string
		args []string
		want []string
		// warm runs the explain once first, with the same cache.
		warm bool
	}{
		{"flux inferred", []string{"deployments/web-flux"}, []string{getFluxWeb, getKust}, false},
		{"flux -f", []string{"deployments/web-flux", "-f", manifest("web-flux")}, []string{getFluxWeb, getKust}, false},
		{"argo inferred", []string{"deployments/web-argo"}, []string{getCM, getParams, getApp, getArgoWeb}, false},
		{"argo -f", []string{"deployments/web-argo", "-f", manifest("web-argo")}, []string{getCM, getParams, getApp, getArgoWeb}, false},
		{"argo --engine argocd", []string{"deployments/web-argo", "--engine", "argocd"}, []string{getCM, getParams, getApp, getArgoWeb}, false},
		{"argo managers rule (schema)", []string{"deployments/web-argo-mf"}, []string{getCM, getParams, getMFApp, getMFWeb, getV3, getV3Apps}, false},
		// Warm: the /openapi/v3 list from the discovery disk cache (6 h,
		// as kubectl's resource lists), the document from the HTTP cache.
		{"argo managers rule (schema), warm cache", []string{"deployments/web-argo-mf"}, []string{getCM, getParams, getMFApp, getMFWeb}, true},
		// No tracking mark: one LIST of the Applications finds the one
		// whose status.resources lists it, instead of the GET.
		{"argo marks deleted", []string{"deployments/web-lost"}, []string{getCM, getParams, listApps, getArgoLost}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake.mu.Lock()
			fake.requests = nil
			fake.mu.Unlock()
			srv := httptest.NewServer(fake)
			defer srv.Close()
			args := append([]string{"--kubeconfig", kubeconfigFor(t, "live", srv), "--cache-dir", t.TempDir(), "explain", "-n", "shop", "-o", "json"}, tc.args...)
			if tc.warm {
				if _, stderr, code, _ := run(t, KubectlFrontend, args...); code != ExitDrift {
					t.Fatalf("warming run: exit %d; stderr:\n%s", code, stderr)
				}
				fake.mu.Lock()
				fake.requests = nil
				fake.mu.Unlock()
			}
			stdout, stderr, code, _ := run(t, KubectlFrontend, args...)
			if code != ExitDrift {
				t.Fatalf("exit %d, want 1 (replicas drifted); stderr:\n%s\nstdout:\n%s", code, stderr, stdout)
			}
			if strings.HasSuffix(tc.args[0], "web-lost") && !strings.Contains(stdout, "the Application's status.resources") {
				t.Errorf("web-lost: Application shop not found through its status.resources:\n%s", stdout)
			}
			want := slices.Clone(tc.want)
			slices.Sort(want)
			if got := fake.seen(); !slices.Equal(got, want) {
				t.Errorf("requests (discovery aside)\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// readGzipJSON decodes a gzipped JSON file.
func readGzipJSON(t *testing.T, path string) any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }() // read only
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.NewDecoder(zr).Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}
