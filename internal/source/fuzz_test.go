package source

import (
	"testing"
)

// FuzzDecode: Decode must never panic or hang on any input; every document
// it returns is a Kubernetes object; every error names its file.
func FuzzDecode(f *testing.F) {
	f.Add([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		docs, err := Decode(data, "fuzz.yaml")
		for _, d := range docs {
			if d.Object == nil || d.Object.GetKind() == "" || d.Object.GetAPIVersion() == "" {
				t.Fatalf("document without kind/apiVersion: %+v", d)
			}
			if d.File != "fuzz.yaml" || d.Line < 1 {
				t.Fatalf("document position %s:%d", d.File, d.Line)
			}
			for _, p := range []string{"", "/metadata/name", "/spec/template/spec/containers/0/image", "/items/0", "/a~1b", "/~"} {
				line, _ := d.Position(p)
				if line < 1 {
					t.Fatalf("Position(%q) line %d", p, line)
				}
			}
			if _, err := d.Object.MarshalJSON(); err != nil {
				t.Fatalf("document does not marshal to JSON: %v", err)
			}
		}
		if err != nil {
			des := DocumentErrors(err)
			if len(des) == 0 {
				t.Fatalf("error without DocumentError: %v", err)
			}
			for _, de := range des {
				if de.File != "fuzz.yaml" {
					t.Fatalf("error for file %q", de.File)
				}
			}
		}
	})
}
