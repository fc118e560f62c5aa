package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-drift/kubectl-drift/internal/redact"
	"github.com/kubectl-drift/kubectl-drift/internal/scan"
	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// fakeCluster is an API server that serves discovery for ConfigMaps,
// Flux Kustomizations and GitRepositories, and answers each LIST from
// lists (path → items); everything else is 404. It records every request
// as "VERB PATH".
type fakeCluster struct {
	lists map[string][]any

	mu       sync.Mutex
	requests []string
}

func (f *fakeCluster) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	write := func(v any) { _ = json.NewEncoder(w).Encode(v) }
	resource := func(name, kind string) map[string]any {
		return map[string]any{"name": name, "singularName": strings.ToLower(kind), "namespaced": true, "kind": kind, "verbs": []string{"get", "list", "watch"}}
	}
	group := func(name string) map[string]any {
		gv := map[string]any{"groupVersion": name + "/v1", "version": "v1"}
		return map[string]any{"name": name, "versions": []any{gv}, "preferredVersion": gv}
	}
	switch r.URL.Path {
	case "/api":
		write(map[string]any{"kind": "APIVersions", "versions": []string{"v1"}})
		return
	case "/apis":
		write(map[string]any{"kind": "APIGroupList", "apiVersion": "v1", "groups": []any{group("kustomize.toolkit.fluxcd.io"), group("source.toolkit.fluxcd.io")}})
		return
	case "/api/v1":
		write(map[string]any{"kind": "APIResourceList", "groupVersion": "v1", "resources": []any{resource("configmaps", "ConfigMap")}})
		return
	case "/apis/kustomize.toolkit.fluxcd.io/v1":
		write(map[string]any{"kind": "APIResourceList", "groupVersion": "kustomize.toolkit.fluxcd.io/v1", "resources": []any{resource("kustomizations", "Kustomization")}})
		return
	case "/apis/source.toolkit.fluxcd.io/v1":
		write(map[string]any{"kind": "APIResourceList", "groupVersion": "source.toolkit.fluxcd.io/v1", "resources": []any{resource("gitrepositories", "GitRepository")}})
		return
	}
	items, ok := f.lists[r.URL.Path]
	verb := "GET"
	if ok {
		verb = "LIST"
	}
	f.mu.Lock()
	f.requests = append(f.requests, verb+" "+r.URL.Path)
	f.mu.Unlock()
	if !ok {
		w.WriteHeader(http.StatusNotFound)
		write(map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound", "code": 404, "message": r.URL.Path + " not found"})
		return
	}
	write(map[string]any{"kind": "List", "apiVersion": "v1", "metadata": map[string]any{"resourceVersion": "1"}, "items": items})
}

func (f *fakeCluster) count(prefix string) map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]int{}
	for _, r := range f.requests {
		if strings.HasPrefix(r, prefix) {
			out[r]++
		}
	}
	return out
}

// editedConfigMap is ConfigMap ns/name of Kustomization ns/apps, applied by
// kustomize-controller (data.greeting) and edited by kubectl (data.extra).
func editedConfigMap(ns, name string) map[string]any {
	return map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": ns, "uid": "uid-" + name, "resourceVersion": "1",
			"labels": map[string]any{"kustomize.toolkit.fluxcd.io/name": "apps", "kustomize.toolkit.fluxcd.io/namespace": ns},
			"managedFields": []any{
				map[string]any{"manager": "kustomize-controller", "operation": "Apply", "apiVersion": "v1", "time": "2026-12-01T10:00:00Z", "fieldsType": "FieldsV1",
					"fieldsV1": map[string]any{"f:data": map[string]any{"f:greeting": map[string]any{}}, "f:metadata": map[string]any{"f:labels": map[string]any{"f:kustomize.toolkit.fluxcd.io/name": map[string]any{}, "f:kustomize.toolkit.fluxcd.io/namespace": map[string]any{}}}}},
				map[string]any{"manager": "kubectl-edit", "operation": "Update", "apiVersion": "v1", "time": "2026-12-01T11:00:00Z", "fieldsType": "FieldsV1",
					"fieldsV1": map[string]any{"f:data": map[string]any{"f:extra": map[string]any{}}}},
			}},
		"data": map[string]any{"greeting": "hello", "extra": "by hand"},
	}
}

// kubeconfigFor writes a kubeconfig whose one context, named name, is srv.
func kubeconfigFor(t *testing.T, name string, srv *httptest.Server) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name+".kubeconfig")
	body := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: %[1]s, cluster: {server: %[2]q}}]
users: [{name: %[1]s, user: {}}]
contexts: [{name: %[1]s, context: {cluster: %[1]s, user: %[1]s}}]
current-context: %[1]s
`, name, srv.URL)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestScanSourceWithEngineClusterListsEachKindOnce: scan --source with
// --engine-kubeconfig reads the engine's objects on the engine's cluster
// through one client and one cache, shared by the adapters (judging each
// object's owner) and --source's render (the owner and its source): one
// LIST of Kustomizations there (for two objects and two readers), and nothing of the engine's read on the
// scanned cluster. Before, the adapters and the render each built their
// own client and cache: two LISTs of each kind.
func TestScanSourceWithEngineClusterListsEachKindOnce(t *testing.T) {
	const ns = "shop"
	live := []any{editedConfigMap(ns, "web"), editedConfigMap(ns, "db")}
	scanned := &fakeCluster{lists: map[string][]any{"/api/v1/namespaces/" + ns + "/configmaps": live}}
	engineSide := &fakeCluster{lists: map[string][]any{
		"/apis/kustomize.toolkit.fluxcd.io/v1/kustomizations": {map[string]any{
			"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
			"metadata": map[string]any{"name": "apps", "namespace": ns},
			"spec":     map[string]any{"interval": "10m", "path": "./app", "prune": true, "sourceRef": map[string]any{"kind": "GitRepository", "name": "repo"}},
		}},
		"/apis/source.toolkit.fluxcd.io/v1/gitrepositories": {map[string]any{
			"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "GitRepository",
			"metadata": map[string]any{"name": "repo", "namespace": ns},
			"spec":     map[string]any{"interval": "10m", "url": "https://git.example.com/fleet.git"},
		}},
	}}
	liveSrv, engineSrv := httptest.NewServer(scanned), httptest.NewServer(engineSide)
	defer liveSrv.Close()
	defer engineSrv.Close()

	dir := testutil.WriteTree(t, map[string]string{
		"app/web.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\ndata: {greeting: hello}\n",
		"app/db.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: db}\ndata: {greeting: hello}\n",
	})
	stdout, stderr, code, _ := run(t, KubectlFrontend, "--kubeconfig", kubeconfigFor(t, "spoke", liveSrv), "--cache-dir", t.TempDir(),
		"scan", "-n", ns, "--kinds", "configmaps", "--engine", "flux", "-o", "json",
		"--source", dir, "--engine-kubeconfig", kubeconfigFor(t, "management", engineSrv))
	if code != ExitDrift {
		t.Fatalf("exit %d, want 1 (drift); stderr:\n%s\nstdout:\n%s", code, stderr, stdout)
	}
	var res struct {
		Items []struct {
			DesiredSource string `json:"desiredSource"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("scan -o json: %v\n%s", err, stdout)
	}
	if len(res.Items) != 2 || res.Items[0].DesiredSource != "rendered" || res.Items[1].DesiredSource != "rendered" {
		t.Errorf("want both ConfigMaps compared with their render, got %+v (stderr %s)", res.Items, stderr)
	}

	got := engineSide.count("")
	want := map[string]int{
		"LIST /apis/kustomize.toolkit.fluxcd.io/v1/kustomizations": 1,
		// The owners' sources, listed once for their refs (the revision
		// the render reads the checkout at; render.Env.ReadAt): a LIST
		// per kind, as for the rule objects, not a GET per owner.
		"LIST /apis/source.toolkit.fluxcd.io/v1/gitrepositories": 1,
	}
	if !maps.Equal(got, want) {
		t.Errorf("requests to the engine's cluster %v, want one LIST per engine kind %v", got, want)
	}
	if got := scanned.count(""); !maps.Equal(got, map[string]int{"LIST /api/v1/namespaces/" + ns + "/configmaps": 1}) {
		t.Errorf("requests to the scanned cluster %v, want only the one LIST of the scanned kind", got)
	}
}

// TestServeEngineKubeconfig: serve --engine-kubeconfig watches the
// engines' objects on the engine's cluster (start-up LIST, the adapters'
// reads), never on the watched cluster, which serves the same kinds; the
// watched objects are judged against the engine cluster's owner.
func TestServeEngineKubeconfig(t *testing.T) {
	const ns = "shop"
	ks := []any{map[string]any{
		"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
		"metadata": map[string]any{"name": "apps", "namespace": ns},
		"spec":     map[string]any{"interval": "10m", "path": "./app", "prune": true, "sourceRef": map[string]any{"kind": "GitRepository", "name": "repo"}},
	}}
	const ksPath = "/apis/kustomize.toolkit.fluxcd.io/v1/kustomizations"
	watched := &fakeCluster{lists: map[string][]any{"/api/v1/namespaces/" + ns + "/configmaps": nil, ksPath: ks}}
	engineSide := &fakeCluster{lists: map[string][]any{ksPath: ks}}
	liveSrv, engineSrv := httptest.NewServer(watched), httptest.NewServer(engineSide)
	defer liveSrv.Close()
	defer engineSrv.Close()

	kc, cacheDir, engineKC := kubeconfigFor(t, "spoke", liveSrv), t.TempDir(), kubeconfigFor(t, "management", engineSrv)
	flags := genericclioptions.NewConfigFlags(true)
	namespace := ns
	flags.KubeConfig, flags.CacheDir, flags.Namespace = &kc, &cacheDir, &namespace
	g := &GlobalOptions{Frontend: KubectlFrontend, Engine: "flux", ConfigFlags: flags, Secrets: redact.NewScrubber(),
		IOStreams: genericiooptions.IOStreams{Out: io.Discard, ErrOut: io.Discard}}
	o := NewServeOptions(g)
	o.Kinds, o.MetricsBindAddress = []string{"configmaps"}, "127.0.0.1:0"
	o.EngineCluster.Kubeconfig = engineKC
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := o.Complete(context.Background()); err != nil {
		t.Fatal(err)
	}
	cm := scan.Kind{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, GVK: schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, Namespaced: true}
	obj := &unstructured.Unstructured{Object: editedConfigMap(ns, "web")}
	o.server.Observe(context.Background(), cm, obj)
	rec := httptest.NewRecorder()
	o.server.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if want := `kubectl_drift_fields{class="manual",engine="flux",kind="ConfigMap",manager="kubectl-edit",namespace="shop",verdict="not-applied"} 1`; !strings.Contains(rec.Body.String(), want) {
		t.Errorf("/metrics lacks %s:\n%s", want, rec.Body.String())
	}
	// The start-up LIST (limit 1) of each kind, on its own cluster; the
	// adapter's read of the owner before the informers run (the cache
	// answers it directly) on the engine's cluster.
	if got, want := watched.count(""), map[string]int{"LIST /api/v1/namespaces/" + ns + "/configmaps": 1}; !maps.Equal(got, want) {
		t.Errorf("requests to the watched cluster %v, want %v (no engine object read there)", got, want)
	}
	if got, want := engineSide.count(""), map[string]int{"LIST " + ksPath: 1, "GET /apis/kustomize.toolkit.fluxcd.io/v1/namespaces/shop/kustomizations/apps": 1}; !maps.Equal(got, want) {
		t.Errorf("requests to the engine's cluster %v, want %v", got, want)
	}
}
