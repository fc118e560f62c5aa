package diff

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/managedfields"
	"github.com/kubectl-drift/kubectl-drift/internal/model"

	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// ownedBy answers Options.Owned from the live object's managedFields, the way
// callers wire it.
func ownedBy(t testing.TB, live *unstructured.Unstructured) func(string) bool {
	ix, err := managedfields.Parse(live)
	if err != nil {
		t.Fatal(err)
	}
	if ix.Empty() {
		return nil
	}
	return func(p string) bool { return len(ix.Owners(live, p)) > 0 }
}

// TestGolden runs every <case>-desired.yaml / <case>-live.yaml pair in
// testdata against <case>.golden. The live halves of most cases come from a
// real API server (internal/managedfields/testdata/make-fixtures.sh).
func TestGolden(t *testing.T) {
	desiredFiles, err := filepath.Glob("testdata/*-desired.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(desiredFiles) < 5 {
		t.Fatalf("only %d golden cases found", len(desiredFiles))
	}
	for _, df := range desiredFiles {
		name := strings.TrimSuffix(filepath.Base(df), "-desired.yaml")
		t.Run(name, func(t *testing.T) {
			desired := testutil.ReadObject(t, df)
			live := testutil.ReadObject(t, filepath.Join("testdata", name+"-live.yaml"))
			drifts, err := Compute(desired, live, Options{Owned: ownedBy(t, live)})
			if err != nil {
				t.Fatal(err)
			}
			ix, err := managedfields.Parse(live)
			if err != nil {
				t.Fatal(err)
			}
			withIndex, err := Compute(desired, live, Options{Owned: ownedBy(t, live), Index: ix})
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(drifts, withIndex); d != "" {
				t.Errorf("passing the Index changes the result (-without +with):\n%s", d)
			}
			got, err := json.MarshalIndent(drifts, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			testutil.Golden(t, filepath.Join("testdata", name+".golden"), got)
		})
	}
}

func obj(t testing.TB, y string) *unstructured.Unstructured {
	t.Helper()
	return testutil.Object(t, y)
}

type want struct {
	path, fieldPath string
	change          model.ChangeKind
}

func summarize(ds []model.FieldDrift) []want {
	out := make([]want, len(ds))
	for i, d := range ds {
		out[i] = want{d.Path, d.FieldPath, d.Change}
	}
	return out
}

func TestCompute(t *testing.T) {
	const deployHead = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n"
	nobody := func(string) bool { return false }
	everybody := func(string) bool { return true }
	tests := []struct {
		name          string
		desired, live string
		owned         func(string) bool
		want          []want
	}{
		{
			name:    "equal",
			desired: deployHead + "spec:\n  replicas: 2\n",
			live:    deployHead + "  uid: abc\n  resourceVersion: \"5\"\n  generation: 3\n  creationTimestamp: \"2026-01-01T00:00:00Z\"\n  annotations:\n    deployment.kubernetes.io/revision: \"4\"\n    kubectl.kubernetes.io/last-applied-configuration: '{}'\nspec:\n  replicas: 2\nstatus:\n  replicas: 9\n",
			owned:   everybody,
		},
		{
			name:    "scalar changed",
			desired: deployHead + "spec:\n  replicas: 2\n",
			live:    deployHead + "spec:\n  replicas: 5\n",
			owned:   nobody,
			want:    []want{{"/spec/replicas", ".spec.replicas", model.Changed}},
		},
		{
			name:    "containers matched by name, not index",
			desired: deployHead + "spec:\n  template:\n    spec:\n      containers:\n      - name: app\n        image: a:1\n      - name: sidecar\n        image: s:1\n",
			live:    deployHead + "spec:\n  template:\n    spec:\n      containers:\n      - name: sidecar\n        image: s:2\n      - name: app\n        image: a:1\n",
			owned:   nobody,
			want:    []want{{"/spec/template/spec/containers/0/image", ".spec.template.spec.containers[name=sidecar].image", model.Changed}},
		},
		{
			name:    "port without protocol matches TCP default",
			desired: deployHead + "spec:\n  template:\n    spec:\n      containers:\n      - name: app\n        ports:\n        - containerPort: 80\n          name: http\n",
			live:    deployHead + "spec:\n  template:\n    spec:\n      containers:\n      - name: app\n        ports:\n        - containerPort: 80\n          protocol: TCP\n          name: web\n",
			owned:   nobody,
			want:    []want{{"/spec/template/spec/containers/0/ports/0/name", ".spec.template.spec.containers[name=app].ports[containerPort=80,protocol=TCP].name", model.Changed}},
		},
		{
			name:    "unowned default is not drift",
			desired: deployHead + "spec:\n  replicas: 2\n",
			live:    deployHead + "spec:\n  replicas: 2\n  revisionHistoryLimit: 10\n",
			owned:   nobody,
		},
		{
			name:    "owned added field is drift",
			desired: deployHead + "spec:\n  replicas: 2\n",
			live:    deployHead + "spec:\n  replicas: 2\n  paused: true\n",
			owned:   func(p string) bool { return p == "/spec/paused" || p == "/spec" },
			want:    []want{{"/spec/paused", ".spec.paused", model.Added}},
		},
		{
			name:    "unknown ownership reports added fields",
			desired: deployHead + "spec:\n  replicas: 2\n",
			live:    deployHead + "spec:\n  replicas: 2\n  revisionHistoryLimit: 10\n",
			want:    []want{{"/spec/revisionHistoryLimit", ".spec.revisionHistoryLimit", model.Added}},
		},
		{
			name:    "removed container reported with pointer into desired",
			desired: deployHead + "spec:\n  template:\n    spec:\n      containers:\n      - name: app\n      - name: sidecar\n",
			live:    deployHead + "spec:\n  template:\n    spec:\n      containers:\n      - name: app\n",
			owned:   nobody,
			want:    []want{{"/spec/template/spec/containers/1", ".spec.template.spec.containers[name=sidecar]", model.Removed}},
		},
		{
			name:    "injected container is one drift",
			desired: deployHead + "spec:\n  template:\n    spec:\n      containers:\n      - name: app\n",
			live:    deployHead + "spec:\n  template:\n    spec:\n      containers:\n      - name: istio-proxy\n        image: proxy\n        args: [a, b]\n      - name: app\n",
			owned:   everybody,
			want:    []want{{"/spec/template/spec/containers/0", ".spec.template.spec.containers[name=istio-proxy]", model.Added}},
		},
		{
			name:    "quantities compare by amount",
			desired: deployHead + "spec:\n  template:\n    spec:\n      containers:\n      - name: app\n        resources:\n          requests:\n            cpu: 500m\n            memory: 1Gi\n          limits:\n            cpu: 1\n",
			live:    deployHead + "spec:\n  template:\n    spec:\n      containers:\n      - name: app\n        resources:\n          requests:\n            cpu: \"0.5\"\n            memory: 1024Mi\n          limits:\n            cpu: \"1\"\n",
			owned:   nobody,
		},
		{
			name:    "quantity really changed",
			desired: deployHead + "spec:\n  template:\n    spec:\n      containers:\n      - name: app\n        resources:\n          limits:\n            memory: 256Mi\n",
			live:    deployHead + "spec:\n  template:\n    spec:\n      containers:\n      - name: app\n        resources:\n          limits:\n            memory: 512Mi\n",
			owned:   nobody,
			want:    []want{{"/spec/template/spec/containers/0/resources/limits/memory", ".spec.template.spec.containers[name=app].resources.limits.memory", model.Changed}},
		},
		{
			name:    "string one is not number one outside quantities",
			desired: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  count: \"1\"\n  m: \"x\"\n",
			live:    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: prod\ndata:\n  count: \"1.0\"\n  m: \"x\"\n",
			owned:   nobody,
			want:    []want{{"/data/count", ".data.count", model.Changed}},
		},
		{
			name:    "atomic list reported at the deepest differing item",
			desired: deployHead + "spec:\n  template:\n    spec:\n      containers:\n      - name: app\n        args: [--a, --b, --c]\n",
			live:    deployHead + "spec:\n  template:\n    spec:\n      containers:\n      - name: app\n        args: [--a, --x, --c, --d]\n",
			owned:   everybody,
			want: []want{
				{"/spec/template/spec/containers/0/args/1", ".spec.template.spec.containers[name=app].args[1]", model.Changed},
				{"/spec/template/spec/containers/0/args/3", ".spec.template.spec.containers[name=app].args[3]", model.Added},
			},
		},
		{
			name:    "label keys with slashes",
			desired: deployHead + "  labels:\n    app.kubernetes.io/name: web\n",
			live:    deployHead + "  labels:\n    app.kubernetes.io/name: shop\n",
			owned:   nobody,
			want:    []want{{"/metadata/labels/app.kubernetes.io~1name", `.metadata.labels["app.kubernetes.io/name"]`, model.Changed}},
		},
		{
			name:    "finalizers are a set",
			desired: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  finalizers: [a, b]\n",
			live:    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  finalizers: [b, c, a]\n",
			owned:   everybody,
			want:    []want{{"/metadata/finalizers/1", ".metadata.finalizers[=c]", model.Added}},
		},
		{
			name:    "null in desired unsets",
			desired: deployHead + "spec:\n  paused: null\n",
			live:    deployHead + "spec:\n  paused: true\n",
			owned:   nobody,
		},
		{
			name:    "int-or-string compares amounts",
			desired: deployHead + "spec:\n  strategy:\n    rollingUpdate:\n      maxSurge: \"1\"\n      maxUnavailable: 25%\n",
			live:    deployHead + "spec:\n  strategy:\n    rollingUpdate:\n      maxSurge: 1\n      maxUnavailable: 1\n",
			owned:   nobody,
			want:    []want{{"/spec/strategy/rollingUpdate/maxUnavailable", ".spec.strategy.rollingUpdate.maxUnavailable", model.Changed}},
		},
		{
			name:    "numbers that look alike elsewhere still differ",
			desired: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\nspec:\n  replicas: \"2\"\n",
			live:    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\nspec:\n  replicas: 2\n",
			owned:   nobody,
			want:    []want{{"/spec/replicas", ".spec.replicas", model.Changed}},
		},
		{
			name:    "zero values dropped by omitempty are not drift",
			desired: deployHead + "spec:\n  paused: false\n  minReadySeconds: 0\n  template:\n    metadata:\n      creationTimestamp: null\n      annotations: {}\n    spec:\n      containers:\n      - name: app\n        env:\n        - name: A\n          value: \"\"\n        resources: {}\n",
			live:    deployHead + "spec:\n  template:\n    spec:\n      containers:\n      - name: app\n        env:\n        - name: A\n",
			owned:   nobody,
		},
		{
			name:    "a really removed field is drift",
			desired: deployHead + "spec:\n  paused: true\n  minReadySeconds: 5\n",
			live:    deployHead + "spec: {}\n",
			owned:   nobody,
			want: []want{
				{"/spec/minReadySeconds", ".spec.minReadySeconds", model.Removed},
				{"/spec/paused", ".spec.paused", model.Removed},
			},
		},
		{
			name:    "unknown lists compare by index",
			desired: "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\nspec:\n  items:\n  - name: a\n    size: 1\n  - name: b\n    size: 2\n",
			live:    "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\nspec:\n  items:\n  - name: b\n    size: 2\n  - name: a\n    size: 1\n",
			owned:   nobody,
			want: []want{
				{"/spec/items/0/name", ".spec.items[0].name", model.Changed},
				{"/spec/items/0/size", ".spec.items[0].size", model.Changed},
				{"/spec/items/1/name", ".spec.items[1].name", model.Changed},
				{"/spec/items/1/size", ".spec.items[1].size", model.Changed},
			},
		},
		{
			name:    "type change is reported at the node",
			desired: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  x: \"1\"\n",
			live:    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata: \"oops\"\n",
			owned:   nobody,
			want:    []want{{"/data", ".data", model.Changed}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Compute(obj(t, tc.desired), obj(t, tc.live), Options{Owned: tc.owned})
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, summarize(got), cmp.AllowUnexported(want{}), cmpopts.EquateEmpty()); d != "" {
				t.Errorf("drifts (-want +got):\n%s", d)
			}
		})
	}
}

// A custom resource's list has no builtin keys; the live object's
// managedFields (k:{"id":...}) say how the API server keys it.
func TestKeysLearntFromLiveManagedFields(t *testing.T) {
	desired := obj(t, "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\nspec:\n  items:\n  - id: a\n    size: 1\n  - id: b\n    size: 2\n  - id: c\n    size: 3\n")
	live := obj(t, `apiVersion: example.com/v1
kind: Widget
metadata:
  name: w
  managedFields:
  - manager: kustomize-controller
    operation: Apply
    fieldsType: FieldsV1
    fieldsV1:
      f:spec:
        f:items:
          k:{"id":"a"}: {f:id: {}, f:size: {}}
          k:{"id":"b"}: {f:id: {}}
          k:{"id":"c"}: {f:id: {}, f:size: {}}
  - manager: kubectl-edit
    operation: Update
    fieldsType: FieldsV1
    fieldsV1:
      f:spec:
        f:items:
          k:{"id":"b"}: {f:size: {}}
spec:
  items:
  - id: c
    size: 3
  - id: b
    size: 20
  - id: a
    size: 1
`)
	got, err := Compute(desired, live, Options{Owned: ownedBy(t, live)})
	if err != nil {
		t.Fatal(err)
	}
	wantSummary := []want{{"/spec/items/1/size", ".spec.items[id=b].size", model.Changed}}
	if d := cmp.Diff(wantSummary, summarize(got), cmp.AllowUnexported(want{})); d != "" {
		t.Errorf("drifts (-want +got):\n%s", d)
	}
}

// A manifest that leaves replicas to the HPA: the live value is owned by the
// autoscaler (kube-controller-manager through /scale), so it is reported as
// added, for the engines to judge (Flux leaves it alone, it does not own it).
// An unowned default next to it (revisionHistoryLimit) is not reported.
func TestReplicasLeftToAutoscaler(t *testing.T) {
	desired := testutil.ReadObject(t, "testdata/deployment-hpa-scaled-desired.yaml")
	unstructured.RemoveNestedField(desired.Object, "spec", "replicas")
	live := testutil.ReadObject(t, "testdata/deployment-hpa-scaled-live.yaml")
	got, err := Compute(desired, live, Options{Owned: ownedBy(t, live)})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Path != "/spec/replicas" || got[0].Change != model.Added || got[0].Live != int64(7) {
		t.Errorf("drifts = %+v", got)
	}
}

// Argo CD's client-side apply created the object, so the API server charged
// every default to argocd-controller (real fixture). Those are not drift;
// a field the engine's last-applied configuration names, which the new
// desired state drops, is.
func TestClientSideApplyDefaultsAreNotDrift(t *testing.T) {
	live := testutil.ReadObject(t, "testdata/deployment-csa-image-set-live.yaml")
	ix, err := managedfields.Parse(live)
	if err != nil {
		t.Fatal(err)
	}
	if o := ix.Owners(live, "/spec/revisionHistoryLimit"); len(o) != 1 || o[0].Manager != "argocd-controller" || o[0].Operation != "Update" {
		t.Fatalf("fixture: revisionHistoryLimit owned by %+v, want argocd-controller's Update", o)
	}
	desired := testutil.ReadObject(t, "testdata/deployment-csa-image-set-desired.yaml")
	unstructured.RemoveNestedField(desired.Object, "metadata", "labels")
	containers, _, _ := unstructured.NestedSlice(desired.Object, "spec", "template", "spec", "containers")
	delete(containers[0].(map[string]any), "env")
	if err := unstructured.SetNestedSlice(desired.Object, containers, "spec", "template", "spec", "containers"); err != nil {
		t.Fatal(err)
	}
	got, err := Compute(desired, live, Options{Owned: ownedBy(t, live), Index: ix})
	if err != nil {
		t.Fatal(err)
	}
	wantSummary := []want{
		{"/metadata/labels/app", ".metadata.labels.app", model.Added},
		{"/spec/template/spec/containers/0/env", ".spec.template.spec.containers[name=app].env", model.Added},
		{"/spec/template/spec/containers/0/image", ".spec.template.spec.containers[name=app].image", model.Changed},
	}
	if d := cmp.Diff(wantSummary, summarize(got), cmp.AllowUnexported(want{})); d != "" {
		t.Errorf("drifts (-want +got):\n%s", d)
	}
	// Without the annotation nothing says the engine wrote them on purpose.
	noLA := live.DeepCopy()
	unstructured.RemoveNestedField(noLA.Object, "metadata", "annotations")
	got, err = Compute(desired, noLA, Options{Owned: ownedBy(t, noLA)})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]want{wantSummary[2]}, summarize(got), cmp.AllowUnexported(want{})); d != "" {
		t.Errorf("without last-applied (-want +got):\n%s", d)
	}
}

func TestSecretValuesNeverLeak(t *testing.T) {
	desired := obj(t, "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\nstringData:\n  password: hunter2\n  same: x\ndata:\n  user: YWRtaW4=\n  gone: Z29uZQ==\n")
	live := obj(t, "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\ndata:\n  password: bWFudWFsbHktc2V0\n  same: eA==\n  user: YWRtaW4=\n  extra: ZXh0cmE=\n")
	got, err := Compute(desired, live, Options{})
	if err != nil {
		t.Fatal(err)
	}
	wantSummary := []want{
		{"/data/extra", ".data.extra", model.Added},
		{"/data/gone", ".data.gone", model.Removed},
		{"/data/password", ".data.password", model.Changed},
	}
	if d := cmp.Diff(wantSummary, summarize(got), cmp.AllowUnexported(want{})); d != "" {
		t.Errorf("drifts (-want +got):\n%s", d)
	}
	raw, _ := json.Marshal(got)
	for _, secret := range []string{"hunter2", "aHVudGVyMg==", "bWFudWFsbHktc2V0", "manually-set", "ZXh0cmE=", "Z29uZQ=="} {
		if bytes.Contains(raw, []byte(secret)) {
			t.Errorf("secret value %q leaked: %s", secret, raw)
		}
	}
	if !bytes.Contains(raw, []byte(`"***"`)) {
		t.Errorf("no mask in %s", raw)
	}
}

func TestNoDriftIsEmptyNotNil(t *testing.T) {
	cm := obj(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n")
	got, err := Compute(cm, cm, Options{})
	if err != nil || got == nil || len(got) != 0 {
		t.Errorf("Compute(same, same) = %#v, %v; want an empty, non-nil slice", got, err)
	}
}

func TestComputeErrors(t *testing.T) {
	cm := obj(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n")
	sec := obj(t, "apiVersion: v1\nkind: Secret\nmetadata:\n  name: c\n")
	if _, err := Compute(nil, cm, Options{}); err == nil {
		t.Error("nil desired: no error")
	}
	if _, err := Compute(cm, &unstructured.Unstructured{}, Options{}); err == nil {
		t.Error("empty live: no error")
	}
	if _, err := Compute(cm, sec, Options{}); err == nil {
		t.Error("kind mismatch: no error")
	}
	weird := &unstructured.Unstructured{Object: map[string]any{"kind": "ConfigMap", "data": map[string]any{"x": struct{}{}}}}
	if _, err := Compute(weird, cm, Options{}); err == nil {
		t.Error("unsupported value type: no error")
	}
}

// Inputs are never modified.
func TestComputeDoesNotMutate(t *testing.T) {
	desired := obj(t, "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\nstringData:\n  a: b\n")
	live := obj(t, "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n  resourceVersion: \"1\"\ndata:\n  a: Yw==\nstatus: {}\n")
	d0, l0 := desired.DeepCopy(), live.DeepCopy()
	if _, err := Compute(desired, live, Options{}); err != nil {
		t.Fatal(err)
	}
	if !cmp.Equal(d0.Object, desired.Object) || !cmp.Equal(l0.Object, live.Object) {
		t.Error("Compute modified its inputs")
	}
}
