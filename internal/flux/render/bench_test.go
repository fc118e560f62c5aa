package render

import (
	"context"
	"fmt"
	"os"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-drift/kubectl-drift/internal/render"
	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// benchKustomization is the Kustomization BenchmarkRenderKustomization200
// renders: ./app with postBuild variables.
func benchKustomization() *unstructured.Unstructured {
	ks := kustomization("./app", map[string]any{"postBuild": map[string]any{"substitute": map[string]any{"env": "prod", "cluster": "east"}}})
	ks.SetName("bench")
	return ks
}

// benchHelmRelease is the HelmRelease BenchmarkRenderHelmRelease50 renders:
// the checkout's chart with replicas 3.
func benchHelmRelease() *unstructured.Unstructured {
	hr := helmRelease(map[string]any{"chart": chartSpec("./charts/bench", "GitRepository"), "values": map[string]any{"replicas": 3}})
	hr.SetName("bench")
	return hr
}

// benchCheckout writes a checkout with a 200-object Kustomization
// (100 Deployments and 100 ConfigMaps in 20 files, no kustomization.yaml,
// postBuild variables) and a 50-template chart, the sizes hack/bench-render.sh
// also compares with flux build. RENDER_BENCH_DIR keeps it there for the
// script, with the two objects the benchmarks render (ks.yaml, hr.yaml), so
// that the script hands the real tools the same inputs.
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
	for name, obj := range map[string]*unstructured.Unstructured{"ks.yaml": benchKustomization(), "hr.yaml": benchHelmRelease()} {
		body, err := yaml.Marshal(obj.Object)
		if err != nil {
			b.Fatal(err)
		}
		write(name, string(body))
	}
	return dir
}

func BenchmarkRenderKustomization200(b *testing.B) { benchRender(b, benchKustomization(), 200) }

func BenchmarkRenderHelmRelease50(b *testing.B) { benchRender(b, benchHelmRelease(), 50) }

// benchRender renders obj from the bench checkout once per iteration and
// checks that it gives want objects.
func benchRender(b *testing.B, obj *unstructured.Unstructured, want int) {
	env, err := render.NewEnv(benchCheckout(b))
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		res := render.Render(context.Background(), env, []render.Renderer{New()}, []*unstructured.Unstructured{obj})
		if res[0].Err != nil || len(res[0].Objects) != want {
			b.Fatalf("%v, %d objects, want %d", res[0].Err, len(res[0].Objects), want)
		}
	}
}
