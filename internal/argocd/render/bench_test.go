package render

import (
	"fmt"
	"strings"
	"testing"
)

// benchFiles is a directory Application of 200 objects (20 files of 5
// Deployments and 5 ConfigMaps, recursed) and a 50-template chart: the
// sizes of the Flux render benchmarks (internal/flux/render bench_test.go).
func benchFiles() map[string]string {
	files := map[string]string{
		"charts/bench/Chart.yaml":  "apiVersion: v2\nname: bench\nversion: 0.1.0\n",
		"charts/bench/values.yaml": "replicas: 2\nimage: nginx:1.27\n",
	}
	for f := 0; f < 20; f++ {
		var b strings.Builder
		for i := 0; i < 5; i++ {
			n := f*5 + i
			fmt.Fprintf(&b, "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: app-%d}\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: app-%d}}\n  template:\n    metadata: {labels: {app: app-%d}}\n    spec: {containers: [{name: app, image: nginx:1.27}]}\n", n, n, n)
			fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-%d}\ndata: {index: \"%d\"}\n", n, n)
		}
		files[fmt.Sprintf("app/d%02d/objects.yaml", f)] = b.String()
	}
	for i := 0; i < 50; i++ {
		files[fmt.Sprintf("charts/bench/templates/cm-%02d.yaml", i)] = fmt.Sprintf(
			"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: {{ .Release.Name }}-%d}\ndata: {replicas: {{ .Values.replicas | quote }}, image: {{ .Values.image | quote }}}\n", i)
	}
	return files
}

func benchRender(b *testing.B, spec string, want int) {
	env := checkout(b, benchFiles())
	b.ResetTimer()
	for b.Loop() {
		objs, err := renderApp(b, env, spec)
		if err != nil || len(objs) != want {
			b.Fatalf("%v, %d objects", err, len(objs))
		}
	}
}

func BenchmarkRenderArgoDirectory200(b *testing.B) {
	benchRender(b, "metadata: {name: bench, namespace: argocd}\nspec:\n  destination: {namespace: shop}\n  source: {repoURL: r, path: app, directory: {recurse: true}}\n", 200)
}

func BenchmarkRenderArgoHelm50(b *testing.B) {
	benchRender(b, "metadata: {name: bench, namespace: argocd}\nspec:\n  destination: {namespace: shop}\n  source: {repoURL: r, path: charts/bench, helm: {parameters: [{name: replicas, value: '3'}]}}\n", 50)
}
