package testutil

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// Object decodes one YAML manifest written in a test. It decodes the way
// the dynamic client decodes the API server's JSON (integers are int64),
// so a fixture reads like an object fetched from a cluster; bad YAML fails
// the test.
func Object(t testing.TB, manifest string) *unstructured.Unstructured {
	t.Helper()
	js, err := yaml.YAMLToJSON([]byte(manifest))
	if err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(js); err != nil {
		t.Fatal(err)
	}
	return obj
}

// ReadObject is Object for the manifest in the file whose path is the
// elements joined (a fixture under testdata/, often saved from the real
// API server with its managedFields).
func ReadObject(t testing.TB, elem ...string) *unstructured.Unstructured {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(elem...))
	if err != nil {
		t.Fatal(err)
	}
	return Object(t, string(b))
}

// KeepManagers drops obj's managedFields entries whose manager keep
// refuses: a captured object as if only those managers had written it.
func KeepManagers(obj *unstructured.Unstructured, keep func(manager string) bool) {
	mf := obj.GetManagedFields()
	kept := mf[:0]
	for _, e := range mf {
		if keep(e.Manager) {
			kept = append(kept, e)
		}
	}
	obj.SetManagedFields(kept)
}

// ListItems reads a LIST response saved from the API server (a JSON
// object with items, such as internal/scan/testdata/list-*.json) from the
// file whose path is the elements joined, and returns its items as sent.
func ListItems(t testing.TB, elem ...string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(elem...))
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(data, &list); err != nil {
		t.Fatal(err)
	}
	items := make([][]byte, len(list.Items))
	for i, it := range list.Items {
		items[i] = it
	}
	return items
}
