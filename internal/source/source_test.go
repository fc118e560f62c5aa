package source

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func names(docs []Document) []string {
	out := make([]string, len(docs))
	for i, d := range docs {
		out[i] = d.Object.GetKind() + "/" + d.Object.GetName()
	}
	return out
}

func TestLoadFilesDirectory(t *testing.T) {
	docs, err := LoadFiles([]string{"testdata/manifests"}, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(names(docs), ",")
	// Sorted files, non-manifest files skipped, subdirectory not entered.
	if want := "ConfigMap/first,Deployment/web,ConfigMap/from-list-a,ConfigMap/from-list-b"; got != want {
		t.Errorf("docs = %s, want %s", got, want)
	}
	docs, err = LoadFiles([]string{"testdata/manifests"}, nil, Options{Recursive: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(names(docs), ","); !strings.HasSuffix(got, ",Secret/nested") || len(docs) != 5 {
		t.Errorf("recursive docs = %s", got)
	}
}

func TestDocumentsKeepFileLineIndex(t *testing.T) {
	docs, err := LoadFiles([]string{"testdata/manifests/app.yaml", "testdata/manifests/list.json"}, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	type pos struct {
		file        string
		line, index int
	}
	want := []pos{
		{"testdata/manifests/app.yaml", 2, 0},
		{"testdata/manifests/app.yaml", 10, 2},
		{"testdata/manifests/list.json", 5, 0},
		{"testdata/manifests/list.json", 6, 0},
	}
	if len(docs) != len(want) {
		t.Fatalf("%d docs, want %d", len(docs), len(want))
	}
	for i, d := range docs {
		if got := (pos{d.File, d.Line, d.Index}); got != want[i] {
			t.Errorf("doc %d at %+v, want %+v", i, got, want[i])
		}
	}
	// Numbers are int64, as unstructured.Unstructured expects.
	if r, ok := docs[1].Object.Object["spec"].(map[string]any)["replicas"].(int64); !ok || r != 3 {
		t.Errorf("replicas = %#v", docs[1].Object.Object["spec"].(map[string]any)["replicas"])
	}
}

func TestPosition(t *testing.T) {
	docs, err := LoadFiles([]string{"testdata/manifests/app.yaml"}, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := docs[1]
	tests := []struct {
		pointer   string
		line, col int
	}{
		{"/spec/replicas", 17, 3},
		{"/spec/template/spec/containers/1", 23, 11},
		{"/spec/template/spec/containers/1/image", 24, 11},
		{"/metadata/labels/app.kubernetes.io~1name", 15, 5},
		{"", 10, 1},
		// Absent fields and bad pointers: the document start.
		{"/spec/paused", 10, 0},
		{"/spec/template/spec/containers/7", 10, 0},
		{"/spec/replicas/x", 10, 0},
		{"spec", 10, 0},
	}
	for _, tc := range tests {
		line, col := d.Position(tc.pointer)
		if line != tc.line || col != tc.col {
			t.Errorf("Position(%q) = %d:%d, want %d:%d", tc.pointer, line, col, tc.line, tc.col)
		}
	}
	if line, col := (Document{Line: 4}).Position("/a"); line != 4 || col != 0 {
		t.Errorf("Position without node = %d:%d", line, col)
	}
}

// Items flattened out of a List keep positions relative to themselves.
func TestPositionInListItemOfJSON(t *testing.T) {
	docs, err := LoadFiles([]string{"testdata/manifests/list.json"}, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("testdata/manifests/list.json")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(raw), "\n")
	for i, name := range []string{"from-list-a", "from-list-b"} {
		line, col := docs[i].Position("/metadata/name")
		if line < 1 || line > len(lines) {
			t.Fatalf("Position = %d:%d", line, col)
		}
		want := strings.Index(lines[line-1], `"name"`) + 1
		if !strings.Contains(lines[line-1], name) || col != want {
			t.Errorf("%s: Position = %d:%d (%q), want column %d", name, line, col, lines[line-1], want)
		}
	}
}

func TestStdin(t *testing.T) {
	in := strings.NewReader("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: from-stdin\n")
	docs, err := LoadFiles([]string{"-"}, in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 1 || docs[0].File != "-" || docs[0].Object.GetName() != "from-stdin" {
		t.Errorf("docs = %+v", docs)
	}
	if _, err := LoadFiles([]string{"-", "-"}, strings.NewReader(""), Options{}); err == nil {
		t.Error("stdin twice: no error")
	}
}

func TestBadDocuments(t *testing.T) {
	tests := []struct {
		name, input string
		line        int
		msg         string
	}{
		{"malformed", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n   bad: indent\n", 5, "invalid YAML"},
		{"tabs", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n\tname: x\n", 4, "invalid YAML"},
		{"scalar document", "just a string\n", 1, "document is a string"},
		{"sequence document", "- a\n- b\n", 1, "document is a sequence"},
		{"missing kind", "apiVersion: v1\nmetadata:\n  name: x\n", 1, "without kind"},
		{"missing apiVersion", "kind: ConfigMap\n", 1, "without apiVersion"},
		{"missing both", "metadata:\n  name: x\n", 1, "apiVersion and kind are missing"},
		{"metadata scalar", "apiVersion: v1\nkind: ConfigMap\nmetadata: x\n", 1, "metadata is a string"},
		{"duplicate key", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  name: b\n", 5, `duplicate key "name" (first at line 4)`},
		{"self alias", "apiVersion: v1\nkind: ConfigMap\ndata: &a\n  x: *a\n", 4, "refers to itself"},
		{"unknown alias", "apiVersion: v1\nkind: ConfigMap\ndata: *nope\n", 0, "unknown anchor"},
		{"infinity", "apiVersion: v1\nkind: ConfigMap\nx: .inf\n", 3, "cannot be represented in JSON"},
		{"complex key", "apiVersion: v1\nkind: ConfigMap\n? [a, b]\n: c\n", 3, "mapping key must be a scalar"},
		{"list item not object", "apiVersion: v1\nkind: List\nitems:\n- 5\n", 4, "items[0] is a number"},
		{"binary junk", "\x00\x01\x02\xff\xfe", 0, "invalid YAML"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			docs, err := Decode([]byte(tc.input), "bad.yaml")
			if err == nil {
				t.Fatalf("no error; docs %v", names(docs))
			}
			des := DocumentErrors(err)
			if len(des) != 1 {
				t.Fatalf("%d DocumentErrors in %v", len(des), err)
			}
			if des[0].File != "bad.yaml" || des[0].Line != tc.line {
				t.Errorf("error at %s:%d, want bad.yaml:%d (%v)", des[0].File, des[0].Line, tc.line, err)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q does not say %q", err, tc.msg)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
}

// One bad document does not hide the good ones around it.
func TestBadDocumentSkipped(t *testing.T) {
	in := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\nkind: Oops\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n"
	docs, err := Decode([]byte(in), "mixed.yaml")
	if got := strings.Join(names(docs), ","); got != "ConfigMap/a,ConfigMap/b" {
		t.Errorf("docs = %s", got)
	}
	des := DocumentErrors(err)
	if len(des) != 1 || des[0].Line != 5 {
		t.Errorf("errors = %v", err)
	}
}

func TestTooManyBadDocumentsStops(t *testing.T) {
	in := strings.Repeat("a: b\n---\n", 10000) + "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: late}\n"
	docs, err := Decode([]byte(in), "junk.yaml")
	des := DocumentErrors(err)
	if len(docs) != 0 || len(des) != maxErrorsPerFile+1 || !strings.Contains(des[len(des)-1].Error(), "stopped reading") {
		t.Errorf("docs %d, errors %d, last %v", len(docs), len(des), des[len(des)-1])
	}
}

func TestYAMLFeatures(t *testing.T) {
	in := `apiVersion: v1
kind: ConfigMap
metadata:
  name: features
  labels: &labels
    app: web
    tier: front
  annotations:
    <<: *labels
    tier: overridden
data:
  bool-like-yes: yes
  quoted: "0x10"
  ts: 2026-01-02T03:04:05Z
  empty:
  hex: 0x10
  big: 123456789012345678901234567890
  mode: 0644
  ? 10
  : ten
`
	docs, err := Decode([]byte(in), "f.yaml")
	if err != nil {
		t.Fatal(err)
	}
	o := docs[0].Object.Object
	ann := o["metadata"].(map[string]any)["annotations"].(map[string]any)
	if ann["app"] != "web" || ann["tier"] != "overridden" {
		t.Errorf("merge key: annotations = %v", ann)
	}
	data := o["data"].(map[string]any)
	checks := map[string]any{
		"bool-like-yes": "yes", // YAML 1.2, as kustomize/Flux read it
		"quoted":        "0x10",
		"ts":            "2026-01-02T03:04:05Z",
		"empty":         nil,
		"hex":           int64(16),
		"big":           1.2345678901234568e+29,
		"10":            "ten",
		"mode":          int64(420), // YAML 1.1 octal, as kubectl reads defaultMode: 0644
	}
	for k, want := range checks {
		if got, ok := data[k]; !ok || got != want {
			t.Errorf("data[%s] = %#v, want %#v", k, got, want)
		}
	}
}

// billionLaughs is the classic alias bomb: 9 levels of 10 references expand
// to 10^9 strings.
func billionLaughs() string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: lol\n")
	b.WriteString("a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i := 1; i <= 9; i++ {
		b.WriteString("a" + itoa(i) + ": &a" + itoa(i) + " [")
		for j := 0; j < 10; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*a" + itoa(i-1))
		}
		b.WriteString("]\n")
	}
	return b.String()
}

func itoa(i int) string { return string(rune('0' + i)) }

// The alias bomb is refused, and refusing it costs bounded memory (the
// measure of "fails fast" that does not depend on the machine's speed).
func TestAliasBombRefused(t *testing.T) {
	bomb := []byte(billionLaughs())
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	docs, err := Decode(bomb, "bomb.yaml")
	runtime.ReadMemStats(&after)
	if err == nil || !errors.Is(err, ErrAliasBomb) {
		t.Fatalf("alias bomb not refused: err=%v docs=%d", err, len(docs))
	}
	if len(docs) != 0 {
		t.Errorf("bomb produced %d documents", len(docs))
	}
	if des := DocumentErrors(err); len(des) != 1 || des[0].File != "bomb.yaml" || des[0].Line == 0 {
		t.Errorf("bomb error without position: %v", err)
	}
	const budget = 64 << 20
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > budget {
		t.Errorf("refusing the bomb allocated %d MiB, want < %d MiB", alloc>>20, budget>>20)
	}
	// A document that reuses anchors sensibly is fine.
	ok := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ok\n  labels: &l {a: b}\n  annotations: *l\n"
	if _, err := Decode([]byte(ok), "ok.yaml"); err != nil {
		t.Errorf("modest aliases refused: %v", err)
	}
}

// Deep nesting is refused by the parser's own depth limit, not a stack
// overflow.
func TestDeepNesting(t *testing.T) {
	deep := "apiVersion: v1\nkind: ConfigMap\nx: " + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + "\n"
	_, err := Decode([]byte(deep), "deep.yaml")
	if err == nil || !strings.Contains(err.Error(), "depth") {
		t.Errorf("deep nesting: %v", err)
	}
}

// A 50 MB file is refused from its size, before it is read; it is sparse so
// the test writes almost nothing to disk. The other file still loads.
func TestFileOverSizeLimit(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(50 << 20); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	small := filepath.Join(dir, "small.yaml")
	if err := os.WriteFile(small, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: small\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	docs, err := LoadFiles([]string{dir}, nil, Options{})
	runtime.ReadMemStats(&after)
	if len(docs) != 1 || docs[0].Object.GetName() != "small" {
		t.Errorf("docs = %v", names(docs))
	}
	des := DocumentErrors(err)
	if len(des) != 1 || des[0].File != big || !strings.Contains(des[0].Error(), "over the 16 MiB limit") {
		t.Fatalf("err = %v", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
		t.Errorf("refusing a 50 MB file allocated %d MiB: it was read", alloc>>20)
	}
}

// endless is a reader that never ends: stdin piped from a generator.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = "a: b\n"[i%5]
	}
	return len(p), nil
}

func TestStdinOverLimit(t *testing.T) {
	_, err := LoadFiles([]string{"-"}, endless{}, Options{MaxFileBytes: 1 << 20})
	if des := DocumentErrors(err); len(des) != 1 || des[0].File != "-" || !strings.Contains(err.Error(), "over the 1 MiB limit") {
		t.Fatalf("err = %v", err)
	}
}

func TestUnreadableFileInDirectory(t *testing.T) {
	dir := t.TempDir()
	if err := os.Symlink(filepath.Join(dir, "gone.yaml"), filepath.Join(dir, "dangling.yaml")); err != nil {
		t.Skip(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ok.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ok}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	docs, err := LoadFiles([]string{dir}, nil, Options{})
	if len(docs) != 1 {
		t.Errorf("docs = %v", names(docs))
	}
	if des := DocumentErrors(err); len(des) != 1 || !strings.HasSuffix(des[0].File, "dangling.yaml") {
		t.Errorf("err = %v", err)
	}
}

func TestMissingPath(t *testing.T) {
	_, err := LoadFiles([]string{"testdata/does-not-exist.yaml"}, nil, Options{})
	if err == nil || !strings.Contains(err.Error(), "does-not-exist.yaml") || len(DocumentErrors(err)) != 0 {
		t.Errorf("err = %v", err)
	}
	if _, err := LoadFiles([]string{"-"}, nil, Options{}); err == nil {
		t.Error("stdin without reader: no error")
	}
}

func TestEmptyInput(t *testing.T) {
	for _, in := range []string{"", "---\n", "# only a comment\n", "---\n---\nnull\n"} {
		docs, err := Decode([]byte(in), "e.yaml")
		if err != nil || len(docs) != 0 {
			t.Errorf("Decode(%q) = %v, %v", in, names(docs), err)
		}
	}
}

func TestLoadKustomize(t *testing.T) {
	docs, err := LoadKustomize("testdata/kustomize/overlay")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range docs {
		got = append(got, d.Object.GetKind()+" "+d.Object.GetNamespace()+"/"+d.Object.GetName())
	}
	// kubectl's legacy order (ConfigMaps before Deployments); the generated
	// ConfigMap carries kustomize's content hash.
	if len(got) != 2 || got[1] != "Deployment shop/web" || !strings.HasPrefix(got[0], "ConfigMap shop/web-config-") {
		t.Fatalf("docs = %v", got)
	}
	dep := docs[1].Object.Object
	spec := dep["spec"].(map[string]any)
	if spec["replicas"] != int64(3) {
		t.Errorf("patched replicas = %#v", spec["replicas"])
	}
	c := spec["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
	if c["image"] != "registry.example/web:2.0" {
		t.Errorf("image = %v", c["image"])
	}
	if docs[0].File != "testdata/kustomize/overlay" {
		t.Errorf("File = %q", docs[0].File)
	}
	for _, bad := range []string{"testdata/manifests", "testdata/nope", "testdata/manifests/app.yaml"} {
		if _, err := LoadKustomize(bad); err == nil {
			t.Errorf("LoadKustomize(%s): no error", bad)
		}
	}
}

// An unquoted `group: *` is a YAML alias without a name: the file's other
// documents and rules are kept, and the error says how to fix it.
func TestUnquotedStarIsReportedWithHintAndTheRestIsKept(t *testing.T) {
	in := "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: a\nspec:\n  ignoreDifferences:\n  - group: *\n    kind: Deployment\n    jsonPointers: [/spec/replicas]\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: after\n"
	docs, err := Decode([]byte(in), "apps.yaml")
	if len(docs) != 2 {
		t.Fatalf("%d documents, want 2 (the file is read with the star quoted)", len(docs))
	}
	g, _, _ := unstructured.NestedSlice(docs[0].Object.Object, "spec", "ignoreDifferences")
	if len(g) != 1 || g[0].(map[string]any)["group"] != "*" {
		t.Errorf("ignoreDifferences = %v, want group '*'", g)
	}
	des := DocumentErrors(err)
	if len(des) != 1 || des[0].Line != 7 || !strings.Contains(des[0].Err.Error(), "quote it: '*'") {
		t.Errorf("errors = %v, want one at line 7 with the hint", err)
	}
}

func TestWithObjectSkipsDocumentsWithoutObject(t *testing.T) {
	a := &unstructured.Unstructured{Object: map[string]any{"kind": "ConfigMap", "metadata": map[string]any{"name": "a"}}}
	b := &unstructured.Unstructured{Object: map[string]any{"kind": "Secret", "metadata": map[string]any{"name": "b"}}}
	got := WithObject([]Document{{File: "empty.yaml"}, {Object: a}, {}, {Object: b}})
	if strings.Join(names(got), ",") != "ConfigMap/a,Secret/b" {
		t.Errorf("WithObject = %v, want ConfigMap/a,Secret/b in order", names(got))
	}
	if got := WithObject(nil); len(got) != 0 {
		t.Errorf("WithObject(nil) = %v", got)
	}
}
