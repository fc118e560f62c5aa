package argocd

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// BenchmarkJudge measures one object's Argo CD verdicts with the cluster
// schema: normalization (managers via structured-merge-diff, pointers,
// jq), the 3-way diff and the why-not notes. scan runs this per object.
func BenchmarkJudge(b *testing.B) {
	for _, name := range []string{"mgr-set-image", "merged-app-and-cm", "ssa-scale"} {
		b.Run(name, func(b *testing.B) {
			t := &testing.T{}
			dir := "testdata/parity/cases/" + name
			var inputs []Input
			for _, f := range []string{"application.yaml", "argocd-cm.yaml"} {
				if u := readTestObject(t, dir+"/"+f); u != nil {
					inputs = append(inputs, Input{Object: u})
				}
			}
			parser, err := parityParser()
			if err != nil {
				b.Fatal(err)
			}
			a, err := New(Options{Inputs: inputs, GVKParser: parser})
			if err != nil {
				b.Fatal(err)
			}
			live, desired := readTestObject(t, dir+"/live.json"), readTestObject(t, dir+"/desired.yaml")
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				rep := model.NewReport(model.ResourceID{}, model.SourceFile)
				rep.Drifts = []model.FieldDrift{replicas}
				if err := a.Judge(context.Background(), model.JudgeInput{Live: live, Desired: desired, Report: rep}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// longListDeployment is a Deployment whose one container has n env vars
// (name, value), and a Service with n ports: the shapes of issue 29's
// long lists, merged by key ("name", "port") in a strategic merge.
func longListDeployment(n int, change int) *unstructured.Unstructured {
	env := make([]any, n)
	for i := range n {
		v := fmt.Sprintf("v%d", i)
		if i == change {
			v = "changed"
		}
		env[i] = map[string]any{"name": fmt.Sprintf("E%d", i), "value": v}
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "big", "namespace": "shop"},
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
			"containers": []any{map[string]any{"name": "app", "image": "nginx", "env": env}}}}},
	}}
}

func longListService(n int, change int) *unstructured.Unstructured {
	ports := make([]any, n)
	for i := range n {
		target := int64(10000 + i)
		if i == change {
			target = 1
		}
		ports[i] = map[string]any{"name": fmt.Sprintf("p%d", i), "port": int64(1 + i), "protocol": "TCP", "targetPort": target}
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{"name": "big", "namespace": "shop"},
		"spec":     map[string]any{"ports": ports},
	}}
}

// withAppliedAndManagedFields makes live an object Argo CD applied
// client-side: orig as its last-applied-configuration, and managedFields
// naming every list item (kubectl's client-side apply records them).
func withAppliedAndManagedFields(tb testing.TB, live, orig *unstructured.Unstructured, listPath []string, key string) *unstructured.Unstructured {
	tb.Helper()
	live = live.DeepCopy()
	b, err := json.Marshal(orig.Object)
	if err != nil {
		tb.Fatal(err)
	}
	live.SetAnnotations(map[string]string{LastAppliedAnnotation: string(b)})
	items, _, _ := unstructured.NestedSlice(live.Object, listPath...)
	fields := map[string]any{".": map[string]any{}}
	for _, it := range items {
		kb, _ := json.Marshal(map[string]any{key: it.(map[string]any)[key]})
		fields["k:"+string(kb)] = map[string]any{".": map[string]any{}, "f:" + key: map[string]any{}}
	}
	f := fields
	for i := len(listPath) - 1; i >= 0; i-- {
		f = map[string]any{"f:" + listPath[i]: f}
	}
	_ = unstructured.SetNestedSlice(live.Object, []any{map[string]any{
		"manager": "argocd-controller", "operation": "Update", "apiVersion": live.GetAPIVersion(),
		"fieldsType": "FieldsV1", "fieldsV1": f,
	}}, "metadata", "managedFields")
	return live
}

// BenchmarkThreeWayDiffLongList measures Argo CD's three-way diff
// (threeWayDiff: gitops-engine ThreeWayDiff) of an object with a long
// list merged by key, applied client-side (last-applied-configuration)
// and one item changed live. ns/item must stay flat from 1k to 10k
// (issue 29: strategicpatch rescans the list per item).
func BenchmarkThreeWayDiffLongList(b *testing.B) {
	shapes := []struct {
		name     string
		mk       func(n, change int) *unstructured.Unstructured
		listPath []string
		key      string
	}{
		{"env", longListDeployment, []string{"spec", "template", "spec", "containers"}, "name"},
		{"ports", longListService, []string{"spec", "ports"}, "port"},
	}
	for _, s := range shapes {
		for _, n := range []int{1_000, 10_000} {
			b.Run(fmt.Sprintf("%s/%d", s.name, n), func(b *testing.B) {
				config := s.mk(n, -1)
				live := withAppliedAndManagedFields(b, s.mk(n, n/2), config, s.listPath, s.key)
				b.ReportAllocs()
				for b.Loop() {
					dr, err := threeWayDiff(config, config, live)
					if err != nil {
						b.Fatal(err)
					}
					if !dr.Modified {
						b.Fatal("the changed item is not seen")
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/item")
			})
		}
	}
}
