package diff

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/model/jsonpointer"
)

// FuzzCompute: any two JSON objects compare without panicking, drifts come
// sorted, every path is a valid pointer, and an object never drifts from
// itself.
func FuzzCompute(f *testing.F) {
	f.Add([]byte(`{"kind":"Deployment","spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"a","image":"x"},{"name":"b"}]}}}}`),
		[]byte(`{"kind":"Deployment","spec":{"replicas":3,"template":{"spec":{"containers":[{"name":"b","image":"y"},{"name":"a","image":"x"}]}}}}`))
	f.Add([]byte(`{"apiVersion":"v1","kind":"Secret","stringData":{"a":"b"},"data":{"c":"!!"}}`),
		[]byte(`{"apiVersion":"v1","kind":"Secret","data":{"a":"Yg==","c":1}}`))
	f.Add([]byte(`{"spec":{"ports":[{"port":80},{"port":80}]},"metadata":{"finalizers":["a","a",{}]}}`),
		[]byte(`{"spec":{"ports":[{"port":"80","protocol":"TCP"}]},"metadata":{"finalizers":["a"],"managedFields":[{"manager":"m","fieldsV1":{"f:spec":{"f:ports":{"k:{\"port\":80,\"protocol\":\"TCP\"}":{}}}}}]}}`))
	f.Add([]byte(`{"kind":"Deployment","spec":{"template":{"spec":{"containers":[{"name":"a","ports":[{"containerPort":80}]}]}}}}`),
		[]byte(`{"kind":"Deployment","metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"a\",\"ports\":[{\"containerPort\":80}],\"x\":1}]}}}}"},"managedFields":[{"manager":"argocd-controller","operation":"Update","fieldsV1":{"f:metadata":{"f:annotations":{"f:kubectl.kubernetes.io/last-applied-configuration":{}}},"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"a\"}":{"f:x":{},"f:y":{},"f:ports":{"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":{"f:protocol":{}}}}}}}}}}]},"spec":{"template":{"spec":{"containers":[{"name":"a","x":1,"y":2,"ports":[{"containerPort":80,"protocol":"TCP"}]}]}}}}`))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		var dm, lm map[string]any
		if json.Unmarshal(a, &dm) != nil || json.Unmarshal(b, &lm) != nil || dm == nil || lm == nil {
			return
		}
		desired, live := &unstructured.Unstructured{Object: dm}, &unstructured.Unstructured{Object: lm}
		for _, owned := range []func(string) bool{nil, func(p string) bool { return strings.Count(p, "/")%2 == 0 }} {
			drifts, err := Compute(desired, live, Options{Owned: owned})
			if err != nil {
				continue
			}
			if !sort.SliceIsSorted(drifts, func(i, j int) bool { return drifts[i].Path < drifts[j].Path }) {
				t.Fatal("drifts not sorted")
			}
			for _, d := range drifts {
				if _, err := jsonpointer.Parse(d.Path); err != nil {
					t.Fatalf("bad pointer %q: %v", d.Path, err)
				}
				if d.FieldPath == "" {
					t.Fatalf("no field path for %s", d.Path)
				}
			}
		}
		self, err := Compute(live, live, Options{})
		if err == nil && len(self) != 0 {
			t.Fatalf("object drifts from itself: %+v", self)
		}
	})
}
