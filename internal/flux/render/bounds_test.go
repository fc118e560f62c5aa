package render

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/bound"
	"github.com/kubectl-drift/kubectl-drift/internal/render"
	"github.com/kubectl-drift/kubectl-drift/internal/source"
	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// chartRepo writes a checkout holding charts/c with the given files and
// returns an Env on it.
func chartRepo(t *testing.T, files map[string]string) *render.Env {
	t.Helper()
	all := map[string]string{"charts/c/Chart.yaml": "apiVersion: v2\nname: c\nversion: 0.1.0\n"}
	for k, v := range files {
		all["charts/c/"+k] = v
	}
	root := testutil.WriteTree(t, all)
	env, err := render.NewEnv(root)
	if err != nil {
		t.Fatal(err)
	}
	return env
}

func renderChart(t *testing.T, env *render.Env) error {
	t.Helper()
	hr := helmRelease(map[string]any{"chart": chartSpec("./charts/c", "GitRepository")})
	res := render.Render(context.Background(), env, []render.Renderer{New()}, []*unstructured.Unstructured{hr})
	return res[0].Err
}

// TestHelmReleaseBounds: a chart is a program; each way it can run
// without end or grow without bound stops with one line naming the chart
// and the template, and a chart cannot read past its checkout or a file
// over the limit (issue 29).
func TestHelmReleaseBounds(t *testing.T) {
	cm := func(body string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata:\n  v: |\n    " + body + "\n"
	}
	for _, c := range []struct {
		name   string
		files  map[string]string
		limits bound.Limits
		want   []string
	}{
		{"nested until", map[string]string{"templates/cm.yaml": cm(`{{ range until 100000 }}{{ range until 100000 }}x{{ end }}{{ end }}`)},
			bound.Limits{}, []string{"templates/cm.yaml", "until would make 100000 more items, past the 1000000"}},
		{"until two billion", map[string]string{"templates/cm.yaml": cm(`{{ range until 2000000000 }}x{{ end }}`)},
			bound.Limits{}, []string{"templates/cm.yaml", "until would make 2000000000 more items"}},
		{"untilStep", map[string]string{"templates/cm.yaml": cm(`{{ range untilStep 0 2000000000 1 }}x{{ end }}`)},
			bound.Limits{}, []string{"untilStep would make"}},
		{"seq", map[string]string{"templates/cm.yaml": cm(`{{ seq 2000000000 }}`)},
			bound.Limits{}, []string{"seq would make"}},
		{"repeat", map[string]string{"templates/cm.yaml": cm(`{{ repeat 2000000000 "xx" }}`)},
			bound.Limits{}, []string{"repeat would make more than 16 MiB"}},
		{"indent", map[string]string{"templates/cm.yaml": cm(`{{ indent 2000000000 "x" }}`)},
			bound.Limits{}, []string{"templates/cm.yaml", "indent would make more than 16 MiB"}},
		{"nindent of many lines", map[string]string{"templates/cm.yaml": cm(`{{ $s := repeat 1000000 "\n" }}{{ nindent 100 $s }}`)},
			bound.Limits{}, []string{"templates/cm.yaml", "nindent would make more than 16 MiB"}},
		// text/template's own integer range calls no function: the
		// time limit stops it.
		{"range of an integer, slow", map[string]string{"templates/a.yaml": cm("a"), "templates/slow.yaml": cm(`{{ range 30000000 }}{{ end }}`), "templates/z.yaml": cm("z")},
			bound.Limits{Timeout: 100 * time.Millisecond}, []string{"chart ", "template c/templates/slow.yaml", "still running after 100ms"}},
		// and the memory limit one that grows its output fast.
		{"range of an integer, big", map[string]string{"templates/a.yaml": cm("a"), "templates/big.yaml": cm(`{{ range 400000 }}{{ "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef" }}{{ end }}`)},
			bound.Limits{Timeout: time.Minute, HeapGrowth: 8 << 20}, []string{"chart ", "template c/templates/big.yaml", "more than 8 MiB of memory"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := chartRepo(t, c.files)
			env.RenderLimits = c.limits
			start := time.Now()
			err := renderChart(t, env)
			if err == nil {
				t.Fatal("rendered")
			}
			msg := err.Error()
			// render.Render masks Secret values in the text, so the
			// chain is gone: the words of render.ErrBound say it.
			if !strings.Contains(msg, render.ErrBound.Error()) || strings.Contains(msg, "\n") {
				t.Errorf("error %q: want one line saying %q", msg, render.ErrBound)
			}
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q lacks %q", msg, w)
				}
			}
			if d := time.Since(start); d > 20*time.Second {
				t.Errorf("took %s to stop", d)
			}
		})
	}
}

// TestHelmReleaseTemplateFuncsAsSprig: within the bounds, the bounded
// functions render what sprig's do.
func TestHelmReleaseTemplateFuncsAsSprig(t *testing.T) {
	env := chartRepo(t, map[string]string{"templates/cm.yaml": `apiVersion: v1
kind: ConfigMap
metadata: {name: x}
data:
  until: "{{ until 3 }} {{ until -2 }} {{ until 0 }}"
  untilStep: "{{ untilStep 1 10 3 }} {{ untilStep 5 0 -2 }} {{ untilStep 0 5 0 }} {{ untilStep 5 0 1 }}"
  seq: "{{ seq 3 }}|{{ seq -2 }}|{{ seq 2 5 }}|{{ seq 5 2 }}|{{ seq 0 2 6 }}|{{ seq 6 -2 0 }}|{{ seq 6 2 0 }}|{{ seq }}"
  repeat: "{{ repeat 3 "ab" }}|{{ repeat 0 "ab" }}"
  indent: {{ "a\nb" | indent 2 | quote }}
  nindent: {{ "a\nb" | nindent 3 | quote }}
  indent0: {{ "a\n" | indent 0 | quote }}
`})
	hr := helmRelease(map[string]any{"chart": chartSpec("./charts/c", "GitRepository")})
	res := render.Render(context.Background(), env, []render.Renderer{New()}, []*unstructured.Unstructured{hr})
	if res[0].Err != nil {
		t.Fatal(res[0].Err)
	}
	data, _, _ := unstructured.NestedStringMap(res[0].Objects[0].Object, "data")
	// sprig v3.3.0 (util.go until/untilStep, functions.go seq) gives these.
	want := map[string]string{
		"until":     "[0 1 2] [0 -1] []",
		"untilStep": "[1 4 7] [5 3 1] [] []",
		"seq":       "1 2 3|1 0 -1 -2|2 3 4 5|5 4 3 2|0 2 4 6|6 4 2 0||",
		"repeat":    "ababab|",
		// sprig's indent and nindent (strings.go).
		"indent":  "  a\n  b",
		"nindent": "\n   a\n   b",
		"indent0": "a\n",
	}
	for k, v := range want {
		if data[k] != v {
			t.Errorf("%s = %q, want %q", k, data[k], v)
		}
	}
}

// TestHelmReleaseChartFilesChecked: a file over the limit (values.yaml
// included) and a symlink out of the checkout, as a template or as a
// file .Files.Get would read, are refused before Helm reads them.
func TestHelmReleaseChartFilesChecked(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "hostname")
	if err := os.WriteFile(outside, []byte("secret-host\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		setup func(t *testing.T, chart string)
		want  string
	}{
		{"big values.yaml", func(t *testing.T, chart string) {
			big := "a: " + strings.Repeat("x", int(source.DefaultMaxFileBytes)+1) + "\n"
			if err := os.WriteFile(filepath.Join(chart, "values.yaml"), []byte(big), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "values.yaml is 16 MiB, over the 16 MiB limit"},
		{"template linked outside", func(t *testing.T, chart string) {
			if err := os.Symlink(outside, filepath.Join(chart, "templates", "leak.yaml")); err != nil {
				t.Fatal(err)
			}
		}, "templates/leak.yaml is a symlink to " + outside + ", outside the checkout"},
		{"file linked outside", func(t *testing.T, chart string) {
			if err := os.Symlink(outside, filepath.Join(chart, "host.txt")); err != nil {
				t.Fatal(err)
			}
		}, "host.txt is a symlink to " + outside},
		{"directory linked outside", func(t *testing.T, chart string) {
			if err := os.Symlink(filepath.Dir(outside), filepath.Join(chart, "files")); err != nil {
				t.Fatal(err)
			}
		}, "files is a symlink to"},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := chartRepo(t, map[string]string{"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {h: {{ .Files.Get \"host.txt\" | quote }}}\n"})
			c.setup(t, filepath.Join(env.Root, "charts", "c"))
			err := renderChart(t, env)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want %q", err, c.want)
			}
			if strings.Contains(err.Error(), "secret-host") {
				t.Fatalf("the outside file was read: %v", err)
			}
		})
	}
	// A link inside the checkout is followed, as Helm follows it.
	env := chartRepo(t, map[string]string{"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {h: {{ .Files.Get \"shared.txt\" | quote }}}\n"})
	testutil.WriteFile(t, env.Root, "shared/shared.txt", "inside")
	if err := os.Symlink(filepath.Join(env.Root, "shared", "shared.txt"), filepath.Join(env.Root, "charts", "c", "shared.txt")); err != nil {
		t.Fatal(err)
	}
	hr := helmRelease(map[string]any{"chart": chartSpec("./charts/c", "GitRepository")})
	res := render.Render(context.Background(), env, []render.Renderer{New()}, []*unstructured.Unstructured{hr})
	if res[0].Err != nil {
		t.Fatal(res[0].Err)
	}
	if h, _, _ := unstructured.NestedString(res[0].Objects[0].Object, "data", "h"); h != "inside" {
		t.Fatalf("data.h = %q, want the linked file's content", h)
	}
}

// TestKustomizationRemoteBaseBounded: a remote base on a server that
// never answers ends the build at the fetch timeout with one line naming
// the URL, after saying on Warn that it fetches; --no-remote-bases
// refuses it before any connection (issue 29).
func TestKustomizationRemoteBaseBounded(t *testing.T) {
	srv := testutil.NewSilentServer(t)
	url := "http://" + srv.Addr + "/base/deploy.yaml"
	root := testutil.WriteTree(t, map[string]string{
		"apps/kustomization.yaml": "resources:\n- " + url + "\n",
	})
	env, err := render.NewEnv(root)
	if err != nil {
		t.Fatal(err)
	}
	var warned []string
	env.Warn = func(m string) { warned = append(warned, m) }
	env.FetchTimeout = 300 * time.Millisecond
	ks := kustomization("./apps", nil)
	start := time.Now()
	res := render.Render(context.Background(), env, []render.Renderer{New()}, []*unstructured.Unstructured{ks})
	if res[0].Err == nil {
		t.Fatal("rendered")
	}
	msg := res[0].Err.Error()
	if !strings.Contains(msg, "still running after 300ms (fetching "+url+")") || strings.Contains(msg, "\n") {
		t.Errorf("error %q: want one line naming the timeout and %s", msg, url)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %s", d)
	}
	if len(warned) != 1 || !strings.Contains(warned[0], url) || !strings.Contains(warned[0], "--no-remote-bases") {
		t.Errorf("warned %q", warned)
	}

	before := srv.Accepted()
	env.NoRemoteBases = true
	res = render.Render(context.Background(), env, []render.Renderer{New()}, []*unstructured.Unstructured{ks})
	if res[0].Err == nil || !strings.Contains(res[0].Err.Error(), "refused by --no-remote-bases") {
		t.Fatalf("with --no-remote-bases: %v", res[0].Err)
	}
	if n := srv.Accepted() - before; n != 0 {
		t.Errorf("--no-remote-bases still connected %d times", n)
	}
}

// TestHelmReleaseValuesFiles: spec.chart.spec.valuesFiles compose the
// chart's default values in order, as source-controller builds the
// chart helm-controller installs (the chart's values.yaml counts only
// when listed); a missing file is an error unless
// ignoreMissingValuesFiles, and a path leaving the source is refused
// (issue 29: they were silently ignored).
func TestHelmReleaseValuesFiles(t *testing.T) {
	env := chartRepo(t, map[string]string{
		"values.yaml":       "a: chart\nb: chart\n",
		"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {a: {{ .Values.a | quote }}, b: {{ .Values.b | default \"unset\" | quote }}, c: {{ .Values.c | default \"unset\" | quote }}}\n",
	})
	testutil.WriteFile(t, env.Root, "env/base.yaml", "a: base\nc: base\n")
	testutil.WriteFile(t, env.Root, "env/prod.yaml", "c: prod\n")
	hr := func(files []any, ignoreMissing bool) *unstructured.Unstructured {
		spec := chartSpec("./charts/c", "GitRepository")
		spec["spec"].(map[string]any)["valuesFiles"] = files
		if ignoreMissing {
			spec["spec"].(map[string]any)["ignoreMissingValuesFiles"] = true
		}
		return helmRelease(map[string]any{"chart": spec})
	}
	renderData := func(obj *unstructured.Unstructured) (map[string]string, error) {
		res := render.Render(context.Background(), env, []render.Renderer{New()}, []*unstructured.Unstructured{obj})
		if res[0].Err != nil {
			return nil, res[0].Err
		}
		d, _, _ := unstructured.NestedStringMap(res[0].Objects[0].Object, "data")
		return d, nil
	}
	got, err := renderData(hr([]any{"env/base.yaml", "env/prod.yaml"}, false))
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"a": "base", "b": "unset", "c": "prod"}; !reflect.DeepEqual(got, want) {
		t.Errorf("data = %v, want %v", got, want)
	}
	got, err = renderData(hr([]any{"charts/c/values.yaml", "env/prod.yaml"}, false))
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"a": "chart", "b": "chart", "c": "prod"}; !reflect.DeepEqual(got, want) {
		t.Errorf("with the chart's values.yaml listed: data = %v, want %v", got, want)
	}
	if _, err := renderData(hr([]any{"env/base.yaml", "env/missing.yaml"}, false)); err == nil || !strings.Contains(err.Error(), `no values file found at path "/env/missing.yaml"`) {
		t.Errorf("missing file: %v", err)
	}
	got, err = renderData(hr([]any{"env/missing.yaml", "env/prod.yaml"}, true))
	if err != nil || got["c"] != "prod" {
		t.Errorf("ignoreMissingValuesFiles: %v %v", got, err)
	}
	if _, err := renderData(hr([]any{"../../etc/passwd"}, false)); err == nil || !strings.Contains(err.Error(), "leaves the source directory") {
		t.Errorf("a path leaving the source: %v", err)
	}
}
