package managedfields

import "testing"

func TestLookup(t *testing.T) {
	obj := map[string]any{"metadata": map[string]any{"annotations": map[string]any{"a/b": "x", "c~d": "y"}},
		"list": []any{"zero", map[string]any{"k": int64(1)}}}
	for ptr, want := range map[string]any{
		"/metadata/annotations/a~1b": "x",
		"/metadata/annotations/c~0d": "y",
		"/list/0":                    "zero",
		"/list/1/k":                  int64(1),
	} {
		if got, ok := Lookup(obj, ptr); !ok || got != want {
			t.Errorf("Lookup(%q) = %v, %v", ptr, got, ok)
		}
	}
	for _, ptr := range []string{"/list/2", "/list/-1", "/list/x", "/nope", "no-slash", "/list/0/deeper"} {
		if _, ok := Lookup(obj, ptr); ok {
			t.Errorf("Lookup(%q) found something", ptr)
		}
	}
}
