package render

import (
	"context"
	"fmt"
	"os"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/render"
	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// benchCheckout writes a checkout with a 200-object Kustomization
// (100 Deployments and 100 ConfigMaps in 20 files, no kustomization.yaml,
// postBuild variables) and a 50-template chart, the sizes hack/bench-render.sh
// also compares with flux build. RENDER_BENCH_DIR keeps it there for the
// script.
func benchCheckout(b *testing.B) string {
	b.Helper()
	dir := os.Getenv("RENDER_BENCH_DIR")
	if dir == "" {
		dir = b.TempDir()
	}
	write := func(name, body string) { testutil.WriteFile(b, dir, name, body) }
	for f := 0; f < 20; f++ {
		var body string
		for i := 0; i < 5; i++ {
			n := f*5 + i
			body += fmt.Sprintf(`---
apiVersion: apps/v1
kind: Deployment
metadata: {name: app-%d, labels: {env: "${env}"}}
spec:
  replicas: 2
  selector: {matchLabels: {app: app-%d}}
  template:
    metadata: {labels: {app: app-%d}}
    spec:
      containers:
        - {name: app, image: "nginx:1.27", env: [{name: CLUSTER, value: "${cluster}"}]}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cm-%d}
data: {region: "${region:=eu}", index: "%d"}
`, n, n, n, n, n)
		}
		write(fmt.Sprintf("app/objects-%02d.yaml", f), body)
	}
	write("charts/bench/Chart.yaml", "apiVersion: v2\nname: bench\nversion: 0.1.0\n")
	write("charts/bench/values.yaml", "replicas: 2\nimage: nginx:1.27\n")
	for i := 0; i < 50; i++ {
		write(fmt.Sprintf("charts/bench/templates/cm-%02d.yaml", i), fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-%d
  labels: {app: {{ .Release.Name | quote }}}
data:
  replicas: {{ .Values.replicas | quote }}
  image: {{ .Values.image | quote }}
`, i))
	}
	return dir
}

func BenchmarkRenderKustomization200(b *testing.B) {
	dir := benchCheckout(b)
	env, err := render.NewEnv(dir)
	if err != nil {
		b.Fatal(err)
	}
	ks := kustomization("./app", map[string]any{"postBuild": map[string]any{"substitute": map[string]any{"env": "prod", "cluster": "east"}}})
	b.ResetTimer()
	for b.Loop() {
		res := render.Render(context.Background(), env, []render.Renderer{New()}, []*unstructured.Unstructured{ks})
		if res[0].Err != nil || len(res[0].Objects) != 200 {
			b.Fatalf("%v, %d objects", res[0].Err, len(res[0].Objects))
		}
	}
}

func BenchmarkRenderHelmRelease50(b *testing.B) {
	dir := benchCheckout(b)
	env, err := render.NewEnv(dir)
	if err != nil {
		b.Fatal(err)
	}
	hr := helmRelease(map[string]any{"chart": chartSpec("./charts/bench", "GitRepository"), "values": map[string]any{"replicas": 3}})
	b.ResetTimer()
	for b.Loop() {
		res := render.Render(context.Background(), env, []render.Renderer{New()}, []*unstructured.Unstructured{hr})
		if res[0].Err != nil || len(res[0].Objects) != 50 {
			b.Fatalf("%v, %d objects", res[0].Err, len(res[0].Objects))
		}
	}
}
