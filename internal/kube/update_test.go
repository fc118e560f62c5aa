package kube

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func object(t *testing.T, s string) *unstructured.Unstructured {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: m}
}

const job = `
apiVersion: batch/v1
kind: Job
metadata: {name: web, namespace: ns, uid: 748a1cb3-a7d1-4119-a43e-8dd86e91c846}
spec:
  completions: 1
  parallelism: 1
  selector: {matchLabels: {batch.kubernetes.io/controller-uid: 748a1cb3-a7d1-4119-a43e-8dd86e91c846}}
  template:
    metadata:
      labels: {batch.kubernetes.io/controller-uid: 748a1cb3-a7d1-4119-a43e-8dd86e91c846, batch.kubernetes.io/job-name: web, controller-uid: 748a1cb3-a7d1-4119-a43e-8dd86e91c846, job-name: web}
    spec:
      containers: [{name: migrate, image: "busybox:1.36"}]
      restartPolicy: Never
`

// TestUpdateRejections: the update validation of kube-apiserver v1.37
// rejects a Job whose completions an update drops (immutable), accepts
// one whose activeDeadlineSeconds it adds, and knows no custom resource.
func TestUpdateRejections(t *testing.T) {
	old := object(t, job)
	dropped := old.DeepCopy()
	unstructured.RemoveNestedField(dropped.Object, "spec", "completions")
	got, ok := UpdateRejections(old, dropped)
	if !ok || len(got) != 1 || got[0] != "spec.completions: Invalid value: field is immutable" {
		t.Errorf("completions dropped: %q (known %v), want the immutable completions", got, ok)
	}
	added := old.DeepCopy()
	if err := unstructured.SetNestedField(added.Object, int64(600), "spec", "activeDeadlineSeconds"); err != nil {
		t.Fatal(err)
	}
	if got, ok := UpdateRejections(old, added); !ok || len(got) != 0 {
		t.Errorf("activeDeadlineSeconds added: %q (known %v), want accepted", got, ok)
	}
	cr := object(t, "apiVersion: example.test/v1\nkind: Backup\nmetadata: {name: b, namespace: ns}\n")
	if _, ok := UpdateRejections(cr, cr); ok {
		t.Error("a custom resource: known, want not known")
	}
}

// TestUpdateRejectionsPrintNoValue: an immutable Secret whose data an
// update changes is rejected, and the rejection names the field, never
// its value.
func TestUpdateRejectionsPrintNoValue(t *testing.T) {
	old := object(t, "apiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: ns}\nimmutable: true\ndata: {password: c2VjcmV0LW9uZQ==}\n")
	changed := object(t, "apiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: ns}\nimmutable: true\ndata: {password: c2VjcmV0LXR3bw==}\n")
	got, ok := UpdateRejections(old, changed)
	if !ok || len(got) == 0 {
		t.Fatalf("immutable Secret's data changed: %q (known %v), want rejected", got, ok)
	}
	for _, r := range got {
		if strings.Contains(r, "secret-one") || strings.Contains(r, "secret-two") || strings.Contains(r, "c2VjcmV0") {
			t.Errorf("rejection %q prints the Secret's value", r)
		}
		if !strings.HasPrefix(r, "data: ") {
			t.Errorf("rejection %q, want it on data", r)
		}
	}
}

// TestUpdateRejectionsPrepareTheUpdate (differential seed 65611): the
// server bumps a DaemonSet's templateGeneration when an update changes
// its template (the strategy's PrepareForUpdate), so a new image is
// accepted; a new selector is not (immutable).
func TestUpdateRejectionsPrepareTheUpdate(t *testing.T) {
	old := object(t, `
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: ns, generation: 1, annotations: {deprecated.daemonset.template.generation: "1"}}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec: {containers: [{name: agent, image: "fluent-bit:3.0"}]}
`)
	image := old.DeepCopy()
	if err := unstructured.SetNestedSlice(image.Object, []any{map[string]any{"name": "agent", "image": "fluent-bit:3.1"}}, "spec", "template", "spec", "containers"); err != nil {
		t.Fatal(err)
	}
	if got, ok := UpdateRejections(old, image); !ok || len(got) != 0 {
		t.Errorf("a new image: %q (known %v), want accepted", got, ok)
	}
	selector := image.DeepCopy()
	if err := unstructured.SetNestedStringMap(selector.Object, map[string]string{"app": "agent", "tier": "node"}, "spec", "selector", "matchLabels"); err != nil {
		t.Fatal(err)
	}
	got, ok := UpdateRejections(old, selector)
	if !ok || !slices.Contains(got, "spec.selector: Invalid value: field is immutable") {
		t.Errorf("a new selector: %q (known %v), want the immutable selector", got, ok)
	}
}
