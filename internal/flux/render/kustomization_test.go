package render

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"helm.sh/helm/v4/pkg/chart/common"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-drift/kubectl-drift/internal/render"
	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

func testEnv(t *testing.T) *render.Env {
	t.Helper()
	env, err := render.NewEnv("testdata/repo")
	if err != nil {
		t.Fatal(err)
	}
	return env
}

func target(t *testing.T, env *render.Env, name string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range render.Targets(env, []render.Renderer{New()}) {
		if o.GetName() == name {
			return o
		}
	}
	t.Fatalf("no Kustomization %s in the checkout", name)
	return nil
}

// kustomization is a Kustomization of the test repo at path, with spec
// fields laid over.
func kustomization(path string, spec map[string]any) *unstructured.Unstructured {
	s := map[string]any{"interval": "10m", "prune": true, "path": path,
		"sourceRef": map[string]any{"kind": "GitRepository", "name": "repo"}}
	for k, v := range spec {
		s[k] = v
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
		"metadata": map[string]any{"name": "t", "namespace": "flux-system"},
		"spec":     s,
	}}
}

func renderYAML(t *testing.T, env *render.Env, objs []*unstructured.Unstructured) string {
	t.Helper()
	var b strings.Builder
	for _, o := range objs {
		o = o.DeepCopy()
		env.MaskObject(o)
		data, err := yaml.Marshal(o.Object)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString("---\n")
		b.Write(data)
	}
	return b.String()
}

// TestKustomizationGolden renders a Kustomization that uses every spec
// field the generator folds in (targetNamespace, namePrefix, images,
// patches), commonMetadata and postBuild with inline variables, a ConfigMap,
// a Secret and an optional missing reference, in a directory without a
// kustomization.yaml.
func TestKustomizationGolden(t *testing.T) {
	env := testEnv(t)
	res := render.Render(context.Background(), env, []render.Renderer{New()}, []*unstructured.Unstructured{target(t, env, "podinfo")})
	if res[0].Err != nil {
		t.Fatal(res[0].Err)
	}
	got := renderYAML(t, env, res[0].Objects)
	if strings.Contains(got, "s3cr3t-token") {
		t.Fatalf("a Secret value substituted into a Deployment is printed:\n%s", got)
	}
	testutil.Golden(t, filepath.Join("testdata", "podinfo-rendered.yaml"), []byte(got))
	// The unmasked object carries the Secret's value: the desired state
	// explain compares must be the real one.
	var token string
	for _, o := range res[0].Objects {
		if o.GetKind() == "Deployment" {
			cs, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
			envs, _, _ := unstructured.NestedSlice(cs[0].(map[string]any), "env")
			for _, e := range envs {
				if e.(map[string]any)["name"] == "TOKEN" {
					token, _ = e.(map[string]any)["value"].(string)
				}
			}
		}
	}
	if token != "s3cr3t-token" {
		t.Errorf("TOKEN = %q, want the Secret's value", token)
	}
}

func TestKustomizationExistingKustomizationFile(t *testing.T) {
	env := testEnv(t)
	res := render.Render(context.Background(), env, []render.Renderer{New()}, []*unstructured.Unstructured{target(t, env, "plain")})
	if res[0].Err != nil {
		t.Fatal(res[0].Err)
	}
	if len(res[0].Objects) != 1 {
		t.Fatalf("got %d objects", len(res[0].Objects))
	}
	o := res[0].Objects[0]
	if o.GetNamespace() != "plain" || o.GetLabels()["kustomize.toolkit.fluxcd.io/name"] != "plain" {
		t.Errorf("got %s/%s labels %v", o.GetNamespace(), o.GetName(), o.GetLabels())
	}
}

func TestKustomizationErrors(t *testing.T) {
	env := testEnv(t)
	outside := t.TempDir()
	// A symlink inside the checkout that points out of it.
	link := filepath.Join("testdata", "repo", "apps", "escape-link")
	_ = os.Remove(link)
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Remove(link) })

	cases := []struct {
		name   string
		ks     *unstructured.Unstructured
		strict bool
		remote bool
		want   string
	}{
		{name: "dotdot", ks: kustomization("../../outside", nil), want: `leaves the source directory`},
		{name: "symlink", ks: kustomization("./apps/escape-link", nil), want: `through a symlink`},
		{name: "missing", ks: kustomization("./apps/nope", nil), want: `no such file or directory`},
		{name: "cycle", ks: kustomization("./base/cycle-a", nil), want: `cycle`},
		{name: "remote refused", ks: kustomization("./apps/remote", nil), remote: true, want: `apps/remote/kustomization.yaml: remote base "https://github.com/stefanprodan/podinfo//kustomize?ref=6.7.0" refused by --no-remote-bases`},
		{name: "strict missing variable", strict: true,
			ks:   kustomization("./apps/strict", map[string]any{"postBuild": map[string]any{"substitute": map[string]any{"env": "x"}}}),
			want: `undefined_var`},
		{name: "bad variable name",
			ks:   kustomization("./apps/strict", map[string]any{"postBuild": map[string]any{"substitute": map[string]any{"bad-name": "x"}}}),
			want: `var name is invalid`},
		{name: "substituteFrom missing",
			ks:   kustomization("./apps/strict", map[string]any{"postBuild": map[string]any{"substituteFrom": []any{map[string]any{"kind": "ConfigMap", "name": "nope"}}}}),
			want: `substitute from 'ConfigMap/nope' error`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := *env
			e.StrictSubstitute = c.strict
			e.NoRemoteBases = c.remote
			res := render.Render(context.Background(), &e, []render.Renderer{New()}, []*unstructured.Unstructured{c.ks})
			if res[0].Err == nil {
				t.Fatalf("no error; rendered %d objects", len(res[0].Objects))
			}
			msg := res[0].Err.Error()
			t.Log(msg)
			if !strings.Contains(msg, c.want) || !strings.HasPrefix(msg, "Kustomization/flux-system/t: ") || strings.Contains(msg, "\n") {
				t.Errorf("error %q: want one line naming Kustomization/flux-system/t and %q", msg, c.want)
			}
		})
	}
}

// TestKustomizationNotStrict: without strict mode a variable with no value
// becomes empty, as kustomize-controller does by default.
func TestKustomizationNotStrict(t *testing.T) {
	env := testEnv(t)
	ks := kustomization("./apps/strict", map[string]any{"postBuild": map[string]any{"substitute": map[string]any{"env": "x"}}})
	res := render.Render(context.Background(), env, []render.Renderer{New()}, []*unstructured.Unstructured{ks})
	if res[0].Err != nil {
		t.Fatal(res[0].Err)
	}
	// "value: ${undefined_var}" becomes "value:" (null), as flux build
	// prints it.
	data, _, _ := unstructured.NestedMap(res[0].Objects[0].Object, "data")
	if v, ok := data["value"]; !ok || v != nil || data["known"] != "x" {
		t.Errorf("data = %#v", data)
	}
}

// TestHelmReleaseGolden templates a HelmRelease from a chart in the
// checkout: values from the chart, a valuesFrom ConfigMap (whole file and
// a targetPath key), a Secret key at a targetPath, an optional missing
// reference and inline values (which win), a kustomize post-renderer,
// commonMetadata and the origin labels; release name and namespace from
// targetNamespace; the pre-install hook left out.
func TestHelmReleaseGolden(t *testing.T) {
	env := testEnv(t)
	res := render.Render(context.Background(), env, []render.Renderer{New()}, []*unstructured.Unstructured{target(t, env, "web")})
	if res[0].Err != nil {
		t.Fatal(res[0].Err)
	}
	got := renderYAML(t, env, res[0].Objects)
	if strings.Contains(got, "s3cr3t-token") {
		t.Fatalf("a Secret value from valuesFrom is printed:\n%s", got)
	}
	testutil.Golden(t, filepath.Join("testdata", "web-helmrelease-rendered.yaml"), []byte(got))
}

func helmRelease(spec map[string]any) *unstructured.Unstructured {
	s := map[string]any{"interval": "10m"}
	for k, v := range spec {
		s[k] = v
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
		"metadata": map[string]any{"name": "h", "namespace": "flux-system"},
		"spec":     s,
	}}
}

func chartSpec(chart, kind string) map[string]any {
	return map[string]any{"spec": map[string]any{"chart": chart, "sourceRef": map[string]any{"kind": kind, "name": "repo"}}}
}

func TestHelmReleaseErrors(t *testing.T) {
	env := testEnv(t)
	for _, c := range []struct {
		name string
		hr   *unstructured.Unstructured
		want string
	}{
		{"remote repository", helmRelease(map[string]any{"chart": chartSpec("podinfo", "HelmRepository")}), `chart "podinfo" from HelmRepository/flux-system/repo: not available offline`},
		{"chart fails to template", helmRelease(map[string]any{"chart": chartSpec("./charts/broken", "GitRepository")}), `value 'name' is required`},
		{"chart outside", helmRelease(map[string]any{"chart": chartSpec("../../x", "GitRepository")}), `leaves the source directory`},
		{"values not YAML", helmRelease(map[string]any{"chart": chartSpec("./charts/web", "GitRepository"),
			"valuesFrom": []any{map[string]any{"kind": "ConfigMap", "name": "web-values", "valuesKey": "greeting"}}}), `web-values`},
		{"valuesFrom missing", helmRelease(map[string]any{"chart": chartSpec("./charts/web", "GitRepository"),
			"valuesFrom": []any{map[string]any{"kind": "Secret", "name": "nope"}}}), `nope`},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := render.Render(context.Background(), env, []render.Renderer{New()}, []*unstructured.Unstructured{c.hr})
			if res[0].Err == nil {
				t.Fatalf("no error; rendered %d objects", len(res[0].Objects))
			}
			msg := res[0].Err.Error()
			t.Log(msg)
			if !strings.Contains(msg, c.want) || !strings.HasPrefix(msg, "HelmRelease/flux-system/h: ") {
				t.Errorf("error %q: want one line naming HelmRelease/flux-system/h and %q", msg, c.want)
			}
		})
	}
}

// TestHelmReleaseRepositoryMapped: a chart repository's chart renders when
// --source-map maps the repository URL to a directory of unpacked charts.
func TestHelmReleaseRepositoryMapped(t *testing.T) {
	env := testEnv(t)
	hr := helmRelease(map[string]any{"chart": map[string]any{"spec": map[string]any{"chart": "web", "sourceRef": map[string]any{"kind": "HelmRepository", "name": "charts"}}}})
	res := render.Render(context.Background(), env, []render.Renderer{New()}, []*unstructured.Unstructured{hr})
	if res[0].Err == nil || !strings.Contains(res[0].Err.Error(), "not available offline") {
		t.Fatalf("unmapped: %v", res[0].Err)
	}
	e := *env
	e.SourceMap = map[string]string{"https://charts.example.invalid": filepath.Join(env.Root, "charts")}
	res = render.Render(context.Background(), &e, []render.Renderer{New()}, []*unstructured.Unstructured{hr})
	if res[0].Err != nil {
		t.Fatal(res[0].Err)
	}
	if len(res[0].Objects) != 1 || res[0].Objects[0].GetName() != "h" || res[0].Objects[0].GetNamespace() != "flux-system" {
		t.Errorf("got %v", res[0].Objects)
	}
}

// TestHelmReleaseCapabilities: with a cluster the templates see its
// version and served API versions (as helm-controller's installs do);
// offline, Helm's defaults; a discovery failure is the HelmRelease's error.
func TestHelmReleaseCapabilities(t *testing.T) {
	hr := helmRelease(map[string]any{"chart": chartSpec("./charts/caps", "GitRepository")})
	data := func(t *testing.T, env *render.Env) map[string]any {
		t.Helper()
		res := render.Render(context.Background(), env, []render.Renderer{New()}, []*unstructured.Unstructured{hr})
		if res[0].Err != nil {
			t.Fatal(res[0].Err)
		}
		if len(res[0].Objects) != 1 {
			t.Fatalf("got %d objects", len(res[0].Objects))
		}
		d, _, _ := unstructured.NestedMap(res[0].Objects[0].Object, "data")
		return d
	}
	env := testEnv(t)
	offline := data(t, env)
	def := common.DefaultCapabilities.KubeVersion
	if offline["kubeVersion"] != def.Version || offline["widgets"] != "false" || offline["apps"] != "true" {
		t.Errorf("offline: got %v, want Helm's defaults (%s, no example.com/v1/Widget)", offline, def.Version)
	}

	env.Capabilities = func(context.Context) (*render.Capabilities, error) {
		return &render.Capabilities{KubeVersion: "v1.99.3-gke.7", Major: "1", Minor: "99+",
			APIVersions: []string{"apps/v1", "example.com/v1", "example.com/v1/Widget"}}, nil
	}
	got := data(t, env)
	want := map[string]any{"kubeVersion": "v1.99.3-gke.7", "minor": "99+", "widgets": "true", "apps": "true"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("cluster: %s = %v, want %v", k, got[k], v)
		}
	}

	env.Capabilities = func(context.Context) (*render.Capabilities, error) {
		return nil, errors.New("discovery: connection refused")
	}
	res := render.Render(context.Background(), env, []render.Renderer{New()}, []*unstructured.Unstructured{hr})
	if res[0].Err == nil || !strings.Contains(res[0].Err.Error(), "connection refused") || !strings.HasPrefix(res[0].Err.Error(), "HelmRelease/flux-system/h: ") {
		t.Errorf("discovery failure: got %v", res[0].Err)
	}
}

// TestKustomizationUnderOddDirectoryNames renders a Kustomization whose
// kustomization.yaml is generated, from a checkout under a directory
// whose name has '+', a space or '@': the generated file used to be kept
// in kyaml's in-memory tree, which refuses such names ("illegal name").
func TestKustomizationUnderOddDirectoryNames(t *testing.T) {
	for _, parent := range []string{"a+b", "a b", "a@b"} {
		t.Run(parent, func(t *testing.T) {
			root := testutil.CopyTree(t, "testdata/kustomization-without-kustomization-file", filepath.Join(t.TempDir(), parent, "repo"))
			env, err := render.NewEnv(root)
			if err != nil {
				t.Fatal(err)
			}
			res := render.Render(context.Background(), env, []render.Renderer{New()}, []*unstructured.Unstructured{target(t, env, "app")})
			if res[0].Err != nil {
				t.Fatal(res[0].Err)
			}
			if len(res[0].Objects) != 1 || res[0].Objects[0].GetName() != "cm" || res[0].Objects[0].GetNamespace() != "apps" {
				t.Errorf("got %s", renderYAML(t, env, res[0].Objects))
			}
		})
	}
}

// withoutNamespace is the checkout of kustomizations-without-namespace,
// with Env.Lands asking this renderer.
func withoutNamespace(t *testing.T) *render.Env {
	t.Helper()
	env, err := render.NewEnv("testdata/kustomizations-without-namespace")
	if err != nil {
		t.Fatal(err)
	}
	env.Lands = render.LandsBy(env, []render.Renderer{New()})
	return env
}

// TestLookupNamespaceMustMatch: NAMESPACE/NAME finds a Kustomization of
// the checkout without metadata.namespace only in the namespace its
// parent applies it to (the parent's targetNamespace), and one whose
// namespace nothing says in any namespace, as before.
func TestLookupNamespaceMustMatch(t *testing.T) {
	env := withoutNamespace(t)
	gvk := kustomizev1.GroupVersion.WithKind(kustomizev1.KustomizationKind)
	for _, c := range []struct {
		ns, name string
		found    bool
	}{
		{"team-x", "child", true},
		{"wrong-ns", "child", false},
		{"flux-system", "child", false},
		{"flux-system", "parent", true},
		{"wrong-ns", "parent", false},
		{"anywhere", "loose", true},
	} {
		_, err := env.Lookup(context.Background(), gvk, c.ns, c.name)
		if found := err == nil; found != c.found {
			t.Errorf("%s/%s: found %v, want %v (%v)", c.ns, c.name, found, c.found, err)
		}
	}
}

// TestNamespaceLabelOfKustomizationWithoutNamespace: the objects of a
// Kustomization without metadata.namespace are labelled with the
// namespace its parent applies it to; when nothing says which, a warning
// says so and no empty label is written.
func TestNamespaceLabelOfKustomizationWithoutNamespace(t *testing.T) {
	env := withoutNamespace(t)
	var warnings []string
	env.Warn = func(msg string) { warnings = append(warnings, msg) }
	label := "kustomize.toolkit.fluxcd.io/namespace"

	res := render.Render(context.Background(), env, []render.Renderer{New()}, []*unstructured.Unstructured{target(t, env, "child")})
	if res[0].Err != nil {
		t.Fatal(res[0].Err)
	}
	if got := res[0].Objects[0].GetLabels()[label]; got != "team-x" || len(warnings) != 0 {
		t.Errorf("child: label %q, warnings %q; want team-x, none", got, warnings)
	}

	res = render.Render(context.Background(), env, []render.Renderer{New()}, []*unstructured.Unstructured{target(t, env, "loose")})
	if res[0].Err != nil {
		t.Fatal(res[0].Err)
	}
	if got, ok := res[0].Objects[0].GetLabels()[label]; ok {
		t.Errorf("loose: label %q written, want none", got)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "Kustomization loose has no metadata.namespace") || strings.Contains(warnings[0], "\n") {
		t.Errorf("warnings %q", warnings)
	}
}

// TestHelmReleaseWithoutNamespace: a HelmRelease of the checkout without
// metadata.namespace takes the namespace its parent Kustomization applies
// it to, and its sourceRef without a namespace is in that namespace
// (helm-controller api/v2 HelmChartTemplate.GetNamespace(hr.Namespace));
// named NAMESPACE/NAME it is in that namespace. When nothing says, the
// error names the reference without an empty namespace
// ("HelmRepository//podinfo" before) and a warning says why; the
// HelmRelease that fluxcd/flux2-hub-spoke-example's
// deploy/infra-controllers/cert-manager.yaml holds is of that kind.
func TestHelmReleaseWithoutNamespace(t *testing.T) {
	root := t.TempDir()
	write := func(p, c string) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, p), []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	hr := func(name string) string {
		return "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: " + name + "}\n" +
			"spec:\n  interval: 1m\n  chart: {spec: {chart: podinfo, sourceRef: {kind: HelmRepository, name: podinfo}}}\n"
	}
	write("clusters/apps.yaml", "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: apps, namespace: flux-system}\n"+
		"spec: {interval: 1m, path: ./apps, prune: true, targetNamespace: team-a, sourceRef: {kind: GitRepository, name: flux-system}}\n")
	write("apps/hr.yaml", hr("landed"))
	write("loose/hr.yaml", hr("loose"))
	env, err := render.NewEnv(root)
	if err != nil {
		t.Fatal(err)
	}
	env.Lands = render.LandsBy(env, []render.Renderer{New()})
	var warnings []string
	env.Warn = func(msg string) { warnings = append(warnings, msg) }
	gvk := helmv2.GroupVersion.WithKind(helmv2.HelmReleaseKind)
	errOf := func(obj *unstructured.Unstructured) string {
		t.Helper()
		res := render.Render(context.Background(), env, []render.Renderer{New()}, []*unstructured.Unstructured{obj})
		if res[0].Err == nil {
			t.Fatalf("%s rendered without its chart", obj.GetName())
		}
		return res[0].Err.Error()
	}
	landed, err := render.Resolve(context.Background(), env, render.Ref{GVK: gvk, Namespace: "team-a", Name: "landed"})
	if err != nil {
		t.Fatal(err)
	}
	if msg := errOf(landed); !strings.Contains(msg, "from HelmRepository/team-a/podinfo:") {
		t.Errorf("landed: %q, want the reference in team-a", msg)
	}
	named, err := render.Resolve(context.Background(), env, render.Ref{GVK: gvk, Namespace: "default", Name: "loose"})
	if err != nil {
		t.Fatal(err)
	}
	if msg := errOf(named); !strings.Contains(msg, "from HelmRepository/default/podinfo:") {
		t.Errorf("loose named default/loose: %q, want the reference in default", msg)
	}
	warnings = nil
	msg := errOf(target(t, env, "loose"))
	if strings.Contains(msg, "//") || !strings.Contains(msg, "HelmRepository/podinfo (in the HelmRelease's namespace, unknown") {
		t.Errorf("loose: %q, want the reference without an empty namespace, saying it is unknown", msg)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "HelmRelease loose has no metadata.namespace") {
		t.Errorf("warnings %q", warnings)
	}
}
