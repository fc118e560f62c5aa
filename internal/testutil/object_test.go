package testutil

import (
	"os"
	"path/filepath"
	"testing"
)

func TestObject(t *testing.T) {
	o := Object(t, "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {replicas: 2}\n")
	if o.GetKind() != "Deployment" || o.GetName() != "web" {
		t.Errorf("kind %q name %q", o.GetKind(), o.GetName())
	}
	// int64 as the dynamic client gives it, not float64 as encoding/json.
	if r, ok := o.Object["spec"].(map[string]any)["replicas"].(int64); !ok || r != 2 {
		t.Errorf("replicas %#v, want int64 2", o.Object["spec"].(map[string]any)["replicas"])
	}
	r := &recorder{TB: t}
	// The recorder does not stop at Fatal: what matters is that it failed.
	Object(r, "a: [")
	if len(r.errs) == 0 {
		t.Errorf("bad YAML: %v", r.errs)
	}

	path := filepath.Join(t.TempDir(), "cm.yaml")
	if err := os.WriteFile(path, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := ReadObject(t, filepath.Dir(path), "cm.yaml"); got.GetName() != "cfg" {
		t.Errorf("ReadObject: %v", got.Object)
	}
	r = &recorder{TB: t}
	ReadObject(r, t.TempDir(), "missing.yaml")
	if len(r.errs) == 0 {
		t.Errorf("missing file: %v", r.errs)
	}
}

func TestAliasBomb(t *testing.T) {
	want := `a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
`
	if got := AliasBomb(3); got != want {
		t.Errorf("AliasBomb(3) =\n%s\nwant\n%s", got, want)
	}
}

func TestListItems(t *testing.T) {
	dir := t.TempDir()
	WriteFile(t, dir, "list.json", `{"kind":"List","items":[{"a":1},{"b":[2]}]}`)
	items := ListItems(t, dir, "list.json")
	if len(items) != 2 || string(items[0]) != `{"a":1}` || string(items[1]) != `{"b":[2]}` {
		t.Errorf("items %q", items)
	}
}
