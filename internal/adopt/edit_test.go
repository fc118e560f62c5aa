package adopt

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

func readLive(t *testing.T, name string) map[string]any {
	t.Helper()
	return testutil.ReadObject(t, "testdata", name).Object
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	testutil.Golden(t, filepath.Join("testdata", name), got)
}

var web = Object{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "web"}

// The goldens hold the input with only the adopted values changed: each
// test's golden is reviewed against its .in.yaml with diff.
func TestEditGoldens(t *testing.T) {
	live := readLive(t, "live-web.yaml")
	cases := []struct {
		in, out string
		obj     Object
		live    map[string]any
		changes []Change
	}{
		{
			in: "comments.in.yaml", out: "comments.golden.yaml", obj: web, live: live,
			changes: []Change{
				{Pointer: "/spec/replicas", Value: 5.0},
				// Live index 0 is app, which is item 1 in the file.
				{Pointer: "/spec/template/spec/containers/0/image", Value: "shop/web:1.4.1"},
				{Pointer: "/spec/template/spec/containers/1/image", Value: "envoy:1.31"},
				// Live env is in another order than Git.
				{Pointer: "/spec/template/spec/containers/0/env/1/value", Value: "debug"},
				{Pointer: "/metadata/annotations/incident", Value: "INC-42"},
				{Pointer: "/metadata/labels/hotfix", Value: "true"},
				{Pointer: "/spec/template/spec/containers/0/resources/limits/cpu", Value: "500m"},
				// ports match by containerPort with protocol defaulted to TCP.
				{Pointer: "/spec/template/spec/containers/0/ports/0/name", Value: "http"},
			},
		},
		{
			in: "anchors.in.yaml", out: "anchors.golden.yaml", obj: web,
			live: map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{
				map[string]any{"name": "app", "image": "shop/web:1.4.0"},
				map[string]any{"name": "proxy", "image": "envoy:1.31"},
			}}}}},
			changes: []Change{
				// *img used here only: the alias becomes the value; &img stays.
				{Pointer: "/spec/template/spec/containers/1/image", Value: "envoy:1.31"},
				// &n is referenced by nothing: the value changes, the anchor stays.
				{Pointer: "/spec/replicas", Value: 3.0},
			},
		},
		{
			in: "multidoc.in.yaml", out: "multidoc.golden.yaml", obj: web,
			live: map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{
				map[string]any{"name": "app", "ports": []any{
					map[string]any{"containerPort": 8080.0, "protocol": "TCP", "name": "web"},
					map[string]any{"containerPort": 9090.0, "protocol": "TCP", "name": "metrics"},
				}},
			}}}}},
			changes: []Change{
				{Pointer: "/spec/replicas", Value: 4.0},
				{Pointer: "/spec/template/spec/containers/0/ports/0/name", Value: "web"},
			},
		},
		{
			// JSON is YAML in flow style: entries are added flow-style.
			in: "flow.in.yaml", out: "flow.golden.yaml", obj: web,
			live: map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{
				map[string]any{"name": "app", "args": []any{"--port", "9090"}},
			}}}}},
			changes: []Change{
				{Pointer: "/spec/replicas", Value: 3.0},
				{Pointer: "/metadata/labels/hotfix", Value: "true"},
				{Pointer: "/spec/template/spec/containers/0/image", Value: "shop/web:1.4.1"},
				{Pointer: "/spec/template/spec/containers/0/args/1", Value: "9090"},
				{Pointer: "/spec/template/spec/containers/0/resources", Value: map[string]any{"limits": map[string]any{"cpu": "1"}}},
			},
		},
		{
			in: "blockscalar.in.yaml", out: "blockscalar.golden.yaml",
			obj:  Object{Kind: "ConfigMap", Namespace: "shop", Name: "web-config"},
			live: readLive(t, "live-config.yaml"),
			changes: []Change{
				{Pointer: "/data/nginx.conf", Value: "worker_processes 4;\nevents {}\n"},
				{Pointer: "/data/mode", Value: "folded text, edited"},
				{Pointer: "/data/level", Value: "debug"},
				{Pointer: "/data/extra", Value: "yes"},
			},
		},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			in, err := os.ReadFile(filepath.Join("testdata", c.in))
			if err != nil {
				t.Fatal(err)
			}
			got, err := EditDocument(in, c.obj, c.changes, KubernetesLists(c.live))
			if err != nil {
				t.Fatal(err)
			}
			golden(t, c.out, got)
		})
	}
}

func TestValuesFileGolden(t *testing.T) {
	in, err := os.ReadFile("testdata/values.in.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got, err := EditAt(in, 0, []Change{
		{Pointer: "/replicaCount", Value: 3.0},
		{Pointer: "/image/tag", Value: "1.4.1"},
		{Pointer: "/resources/limits/memory", Value: "256Mi"},
	}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "values.golden.yaml", got)
}

func TestRefusals(t *testing.T) {
	anchors, err := os.ReadFile("testdata/anchors.in.yaml")
	if err != nil {
		t.Fatal(err)
	}
	comments, err := os.ReadFile("testdata/comments.in.yaml")
	if err != nil {
		t.Fatal(err)
	}
	live := readLive(t, "live-web.yaml")
	cases := []struct {
		name   string
		data   []byte
		change Change
		opts   Options
		want   Reason
	}{
		{"anchor used elsewhere", anchors, Change{Pointer: "/metadata/labels/app", Value: "shop"}, Options{}, ReasonShared},
		{"anchored scalar used by an alias", anchors,
			Change{Pointer: "/spec/template/spec/containers/0/image", Value: "x"},
			KubernetesLists(map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{
				map[string]any{"name": "app"}, map[string]any{"name": "proxy"}}}}}}), ReasonShared},
		{"number where the file has a string", comments, Change{Pointer: "/spec/template/spec/containers/0/env/0/value", Value: 3.0}, KubernetesLists(live), ReasonTypeMismatch},
		{"string where the file has a number", comments, Change{Pointer: "/spec/replicas", Value: "five"}, KubernetesLists(live), ReasonTypeMismatch},
		{"list item not in the file", comments, Change{Pointer: "/spec/template/spec/containers/0/env/0/value", Value: "x"},
			KubernetesLists(map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{
				map[string]any{"name": "app", "env": []any{map[string]any{"name": "NEW"}}}}}}}}), ReasonNotFound},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := EditDocument(c.data, web, []Change{c.change}, c.opts)
			var ee *EditError
			if !errors.As(err, &ee) || ee.Reason != c.want {
				t.Fatalf("got %v, want an EditError %s", err, c.want)
			}
		})
	}
}

func TestTemplateValueRefused(t *testing.T) {
	in := []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  a: \"{{ .Values.a }}\"\n")
	_, err := EditDocument(in, Object{Kind: "ConfigMap", Name: "c"}, []Change{{Pointer: "/data/a", Value: "b"}}, Options{})
	var ee *EditError
	if !errors.As(err, &ee) || ee.Reason != ReasonTemplate {
		t.Fatalf("got %v, want a template refusal", err)
	}
}

func TestRemoveKey(t *testing.T) {
	in := []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  a: x # gone live\n  b: |\n    two\n    lines\n  c: y\n")
	got, err := EditDocument(in, Object{Kind: "ConfigMap", Name: "c"}, []Change{{Pointer: "/data/a", Remove: true}, {Pointer: "/data/b", Remove: true}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  c: y\n"
	if string(got) != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}
