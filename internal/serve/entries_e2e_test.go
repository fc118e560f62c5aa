//go:build e2e

package serve

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-drift/kubectl-drift/internal/engine"
	_ "github.com/kubectl-drift/kubectl-drift/internal/engines"
	"github.com/kubectl-drift/kubectl-drift/internal/fight"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/scan"
)

// TestEntriesKeepVerdicts is issue 35's proof that serve's compact cache
// (entries: identity only, or the JSON of everything but status; the
// Precheck that skips decoding clean objects) changes no verdict. On the
// shared test API server (hack/cluster.sh; run under
// flock -o /tmp/drift-e2e.lock), real kubectl writes make the objects and
// their managedFields: server-side applies as kustomize-controller, a
// client-side apply as argocd-controller (last-applied-configuration, the
// input of Argo CD's 3-way diff), then kubectl scale, set image, label,
// annotate, patch and a client-side apply by hand. serve runs over them
// with the engines' real adapters; the reference explains every object as
// the API server returns it (no transform, no precheck) with adapters of
// its own. Every report must be equal, field by field, and each expected
// drift must be among them (so a pipeline that judges nothing fails).
func TestEntriesKeepVerdicts(t *testing.T) {
	env := clusterEnv(t)
	ns := "serve-entries-" + randomSuffix(t)
	kubectl := func(stdin string, args ...string) {
		t.Helper()
		cmd := exec.Command(filepath.Join(env["DRIFT_BIN_DIR"], "kubectl"), args...)
		cmd.Env = append(os.Environ(), "KUBECONFIG="+env["KUBECONFIG"])
		cmd.Stdin = strings.NewReader(stdin)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	kubectl("", "create", "namespace", ns)
	t.Cleanup(func() { kubectl("", "delete", "namespace", ns, "--wait=false") })

	flux := "    kustomize.toolkit.fluxcd.io/name: apps\n    kustomize.toolkit.fluxcd.io/namespace: flux-system\n"
	kubectl(entriesConfigMap(ns, "flux-clean", flux, "")+entriesConfigMap(ns, "flux-label", flux, "")+
		entriesConfigMap(ns, "flux-patch", flux, "")+entriesDeployment(ns, "flux-web", flux, ""),
		"apply", "--server-side", "--field-manager=kustomize-controller", "-f", "-")
	argo := "  annotations:\n    argocd.argoproj.io/tracking-id: \"shop:/ConfigMap:" + ns + "/argo-cm\"\n"
	argoDeploy := "  annotations:\n    argocd.argoproj.io/tracking-id: \"shop:apps/Deployment:" + ns + "/argo-web\"\n"
	kubectl(entriesConfigMap(ns, "argo-cm", "", argo)+entriesDeployment(ns, "argo-web", "", argoDeploy),
		"apply", "--field-manager=argocd-controller", "-f", "-")
	kubectl(entriesConfigMap(ns, "plain", "", ""), "apply", "-f", "-")

	kubectl("", "-n", ns, "label", "configmap", "flux-label", "team=oncall")
	kubectl("", "-n", ns, "patch", "configmap", "flux-patch", "--type=merge", "-p", `{"data":{"LOG_LEVEL":"debug"}}`)
	kubectl("", "-n", ns, "scale", "deployment", "flux-web", "--replicas=5")
	kubectl("", "-n", ns, "set", "image", "deployment/flux-web", "app=registry.example.com/shop/web:hotfix")
	kubectl("", "-n", ns, "annotate", "configmap", "argo-cm", "incident=INC-4711")
	kubectl("", "-n", ns, "patch", "configmap", "argo-cm", "--type=merge", "-p", `{"data":{"REGION":"us-east-1"}}`)
	kubectl("", "-n", ns, "scale", "deployment", "argo-web", "--replicas=3")
	kubectl("", "-n", ns, "label", "configmap", "plain", "team=oncall")

	cfg, err := clientcmd.BuildConfigFromFlags("", env["KUBECONFIG"])
	if err != nil {
		t.Fatal(err)
	}
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	kinds := []scan.Kind{
		cmKind,
		{GVR: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, GVK: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, Namespaced: true},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	got := serveReports(t, ctx, client, kinds, ns)
	want := referenceReports(t, ctx, client, kinds, ns)
	for uid, w := range want {
		if !reflect.DeepEqual(got[uid], w) {
			t.Errorf("%s: serve's report differs from the reference:\nserve:     %+v\nreference: %+v", w.Resource, got[uid], w)
		}
	}
	for uid, g := range got {
		if want[uid] == nil {
			t.Errorf("%s: serve reports drift the reference does not: %+v", g.Resource, g)
		}
	}
	drifted := map[string]bool{}
	for _, r := range want {
		drifted[r.Resource.Name] = true
	}
	for _, name := range []string{"flux-label", "flux-patch", "flux-web", "argo-cm", "argo-web"} {
		if !drifted[name] {
			t.Errorf("%s: no drift judged (reference reports: %v)", name, drifted)
		}
	}
	for _, name := range []string{"flux-clean", "plain"} {
		if drifted[name] {
			t.Errorf("%s: drift judged on an object no other manager changed, or no engine owns", name)
		}
	}
}

// pipelineFor builds serve's pipeline over the shipped engines as the CLI
// does (internal/cli serve.go), reading through r.
func pipelineFor(t *testing.T, ctx context.Context, r model.Reader) Pipeline {
	t.Helper()
	var adapters []model.Adapter
	for _, d := range engine.Selected(engine.Auto) {
		a, _, err := d.New(ctx, engine.Config{Purpose: engine.ForScan, Reader: r})
		if err != nil {
			t.Fatalf("%s: %v", d.Name, err)
		}
		adapters = append(adapters, a)
	}
	in := &scan.Inspector{Adapters: adapters}
	return Pipeline{
		Explain: in.ExplainObject,
		Owned: func(k scan.Kind, obj *unstructured.Unstructured) bool {
			_, owned := in.PrecheckObject(k, obj)
			return owned
		},
		Culprit: in.Culprit,
		Precheck: func(k scan.Kind, raw []byte) (bool, error) {
			cand, _, err := in.Precheck(k, raw)
			return cand != nil, err
		},
		Follow:  in.UpdateOwner,
		Touches: in.Touches,
	}
}

// serveReports runs a Server over ns until every object was explained and
// returns its reports by uid.
func serveReports(t *testing.T, ctx context.Context, client dynamic.Interface, kinds []scan.Kind, ns string) map[types.UID]*model.Report {
	t.Helper()
	owners := NewOwnerCache(client, nil)
	p := pipelineFor(t, ctx, owners)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Options{Client: client, Kinds: kinds, Owners: owners, Namespace: ns,
		Explain: p.Explain, Owned: p.Owned, Culprit: p.Culprit, Precheck: p.Precheck, Follow: p.Follow, Touches: p.Touches,
		Fight: fight.Config{}, Listener: ln})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Run(runCtx) }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	for !srv.Ready() || srv.queue.Len() > 0 {
		if ctx.Err() != nil {
			t.Fatal("serve did not sync")
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The last item may still be in the worker: wait for its report.
	time.Sleep(time.Second)
	srv.mu.Lock()
	defer srv.mu.Unlock()
	out := make(map[types.UID]*model.Report, len(srv.reports))
	for uid, r := range srv.reports {
		out[uid] = r
	}
	return out
}

// referenceReports explains each object of ns as the API server returns
// it, with a pipeline of its own: no transform, no precheck.
func referenceReports(t *testing.T, ctx context.Context, client dynamic.Interface, kinds []scan.Kind, ns string) map[types.UID]*model.Report {
	t.Helper()
	p := pipelineFor(t, ctx, NewOwnerCache(client, nil))
	out := map[types.UID]*model.Report{}
	for _, k := range kinds {
		list, err := client.Resource(k.GVR).Namespace(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range list.Items {
			obj := &list.Items[i]
			obj.SetGroupVersionKind(k.GVK)
			rep, err := p.Explain(ctx, k, obj)
			if err != nil {
				t.Fatalf("%s: %v", obj.GetName(), err)
			}
			if rep != nil && rep.HasDrift() {
				out[obj.GetUID()] = rep
			}
		}
	}
	return out
}

func entriesConfigMap(ns, name, labels, annotations string) string {
	return "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n  namespace: " + ns + "\n" +
		labelsBlock(labels) + annotations +
		"data:\n  LOG_LEVEL: info\n  REGION: eu-west-1\n  app.properties: |\n    server.port=8080\n"
}

func entriesDeployment(ns, name, labels, annotations string) string {
	return "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: " + name + "\n  namespace: " + ns + "\n" +
		labelsBlock(labels) + annotations +
		"spec:\n  replicas: 2\n  selector:\n    matchLabels: {app: " + name + "}\n  template:\n    metadata:\n      labels: {app: " + name + "}\n" +
		"    spec:\n      containers:\n      - name: app\n        image: registry.example.com/shop/web:1.0\n" +
		"        ports: [{containerPort: 8080, name: http}]\n        resources: {requests: {cpu: 100m, memory: 128Mi}}\n"
}

func labelsBlock(labels string) string {
	if labels == "" {
		return ""
	}
	return "  labels:\n" + labels
}

// clusterEnv starts the shared test cluster if needed (hack/cluster.sh,
// as the e2e harness does) and returns what `hack/cluster.sh env` exports.
func clusterEnv(t *testing.T) map[string]string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(file), "..", "..", "hack", "cluster.sh")
	if out, err := exec.Command(script, "start").CombinedOutput(); err != nil {
		t.Fatalf("hack/cluster.sh start: %v\n%s", err, out)
	}
	out, err := exec.Command(script, "env").Output()
	if err != nil {
		t.Fatalf("hack/cluster.sh env: %v", err)
	}
	env := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimPrefix(sc.Text(), "export "), "=")
		if ok {
			env[k] = strings.Trim(v, `"`)
		}
	}
	if env["KUBECONFIG"] == "" || env["DRIFT_BIN_DIR"] == "" {
		t.Fatalf("hack/cluster.sh env printed no KUBECONFIG/DRIFT_BIN_DIR:\n%s", out)
	}
	return env
}

func randomSuffix(t *testing.T) string {
	t.Helper()
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}
