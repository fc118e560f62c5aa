package drift

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/source"
	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

func TestTypeMatchesKind(t *testing.T) {
	deploy := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	policy := schema.GroupVersionKind{Group: "networking.k8s.io", Version: "v1", Kind: "NetworkPolicy"}
	for _, tc := range []struct {
		typ  string
		gvk  schema.GroupVersionKind
		want bool
	}{
		{"deploy", deploy, true},
		{"deployment", deploy, true},
		{"deployments", deploy, true},
		{"Deployment", deploy, true},
		{"deployments.apps", deploy, true},
		{"deployments.v1.apps", deploy, true},
		{"deployments.extensions", deploy, false},
		{"statefulset", deploy, false},
		{"networkpolicies", policy, true},
		{"netpol", policy, true},
	} {
		if got := TypeMatchesKind(tc.typ, tc.gvk); got != tc.want {
			t.Errorf("TypeMatchesKind(%q, %s) = %v", tc.typ, tc.gvk.Kind, got)
		}
	}
}

const twoConfigMaps = `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: a, namespace: shop}
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: b, namespace: shop}
`

// LiveFile picks the named object of a List, remembers every object read
// and says what is wrong with a file that does not name one.
func TestInputsLiveFile(t *testing.T) {
	dir := t.TempDir()
	file := testutil.WriteFile(t, dir, "live.yaml", twoConfigMaps)
	var remembered []string
	in := Inputs{Remember: func(objs ...*unstructured.Unstructured) {
		for _, o := range objs {
			remembered = append(remembered, o.GetName())
		}
	}}
	got, err := in.LiveFile(file, "cm", "b")
	if err != nil || got.GetName() != "b" {
		t.Fatalf("LiveFile(cm, b) = %v, %v; want ConfigMap b", got, err)
	}
	if strings.Join(remembered, ",") != "a,b" {
		t.Errorf("remembered %v, want a,b (every object read, for the Secret scrubber)", remembered)
	}
	for _, tc := range []struct{ typ, name, want string }{
		{"", "", "holds 2 objects: name one as TYPE/NAME"},
		{"deploy", "b", `holds no deploy named "b"`},
	} {
		if _, err := in.LiveFile(file, tc.typ, tc.name); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("LiveFile(%q, %q) error = %v, want %q", tc.typ, tc.name, err, tc.want)
		}
	}
}

// Desired: no file means inferred; -f picks the live object's document;
// a -f naming a kustomization directory warns; one bad document fails
// on one line, still unwrapping to the loader's error.
func TestInputsDesired(t *testing.T) {
	live := testutil.Object(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b, namespace: shop}\n")
	var warned []string
	in := Inputs{Warn: func(msg string) { warned = append(warned, msg) }}

	d, err := in.Desired(DesiredFiles{}, live)
	if err != nil || d.Object != nil || d.Source != model.SourceManagedFields {
		t.Fatalf("Desired(no file) = %+v, %v; want inferred", d, err)
	}

	dir := t.TempDir()
	file := testutil.WriteFile(t, dir, "cms.yaml", twoConfigMaps)
	d, err = in.Desired(DesiredFiles{Filenames: []string{file}}, live)
	if err != nil || d.Object.GetName() != "b" || d.Source != model.SourceFile || len(d.FileDocs) != 2 {
		t.Fatalf("Desired(-f) = %+v, %v; want ConfigMap b from the file, both documents kept for the engines", d, err)
	}

	overlay := testutil.WriteTree(t, map[string]string{
		"kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [cm.yaml]\n",
		"cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b, namespace: shop}\n",
	})
	if _, err := in.Desired(DesiredFiles{Filenames: []string{overlay}}, live); err != nil {
		t.Fatal(err)
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "use -k "+overlay) {
		t.Errorf("warnings %q; want one naming -k %s", warned, overlay)
	}

	// A bare kustomization is no object: the error carries the hint.
	testutil.WriteFile(t, overlay, "kustomization.yaml", "resources: [cm.yaml]\n")
	if _, err := in.Desired(DesiredFiles{Filenames: []string{overlay}}, live); err == nil || !strings.Contains(err.Error(), "use -k "+overlay) {
		t.Errorf("Desired(bare kustomization) error = %v; want the -k hint", err)
	}

	bad1 := testutil.WriteFile(t, dir, "bad1.yaml", "a: [\n")
	bad2 := testutil.WriteFile(t, dir, "bad2.yaml", "b: {\n")
	_, err = in.Desired(DesiredFiles{Filenames: []string{bad1, bad2}}, live)
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "more problems") {
		t.Fatalf("Desired(bad file) error = %q; want one line counting the other problems", err)
	}
	if len(source.DocumentErrors(errors.Unwrap(err))) == 0 && len(source.DocumentErrors(err)) == 0 {
		t.Errorf("error %v does not unwrap to the loader's document errors", err)
	}
}

// Rules: a --rules file with no engine's object is read, warned about
// once and noted, so that it is not ignored silently.
func TestInputsRulesNoEngineObject(t *testing.T) {
	file := filepath.Join(t.TempDir(), "cm.yaml")
	if err := os.WriteFile(file, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var warned []string
	docs, notes, err := Inputs{Warn: func(m string) { warned = append(warned, m) }}.Rules("auto", []string{file})
	if err != nil || len(docs) != 1 {
		t.Fatalf("Rules = %d docs, %v", len(docs), err)
	}
	if len(warned) != 1 || len(notes) != 1 || notes[0].Reason != "rules-unused" || notes[0].Message != warned[0] ||
		!strings.Contains(warned[0], "it adds no rule") {
		t.Errorf("warned %q, notes %+v; want one rules-unused warning saying it adds no rule", warned, notes)
	}
}
