package compare

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// benchRules builds n rules per engine over a realistic spread of kinds,
// names and paths (many rules share selector strings, as in real repos).
func benchRules(n int) []model.Rule {
	kinds := []struct{ g, k string }{{"apps", "Deployment"}, {"apps", "StatefulSet"}, {"", "Service"}, {"", "ConfigMap"}, {"batch", "CronJob"}, {"networking.k8s.io", "Ingress"}, {"cert-manager.io", "Certificate"}}
	var out []model.Rule
	for i := 0; i < n; i++ {
		k := kinds[i%len(kinds)]
		p := fmt.Sprintf("/spec/field%d", i%13)
		a := argo(k.g, k.k).ptr(p)
		f := flux(k.g, k.k).ptr(p)
		if i%5 == 0 {
			a = a.name(fmt.Sprintf("app-%d", i))
			f = f.name(fmt.Sprintf("app-%d|app-%d-canary", i, i))
		}
		if i%7 == 0 {
			a = a.jq(fmt.Sprintf(".metadata.labels[\"l%d\"]", i))
		}
		out = append(out, a.V(), f.V())
	}
	return out
}

func BenchmarkCompare(b *testing.B) {
	for _, n := range []int{50, 250} {
		rules := benchRules(n)
		b.Run(fmt.Sprintf("rules=%d", 2*n), func(b *testing.B) {
			for b.Loop() {
				Compare(rules, nil, Options{Engines: testEngines})
			}
		})
	}
}

func BenchmarkCompareWithObjects(b *testing.B) {
	rules := benchRules(100)
	var objs []*unstructured.Unstructured
	for i := 0; i < 500; i++ {
		objs = append(objs, obj("apps/v1", "Deployment", "ns", fmt.Sprintf("app-%d", i), map[string]any{"spec": map[string]any{"field1": int64(1), "field2": "x"}}))
	}
	for b.Loop() {
		Compare(rules, objs, Options{Engines: testEngines})
	}
}
