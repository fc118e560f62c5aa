package serve

import (
	"math"
	"os"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/kubectl-drift/kubectl-drift/internal/scan"
)

// cachedObjects are real objects with their managedFields, as
// `kubectl get deployments,configmaps -o json --show-managed-fields`
// printed them on kube-apiserver v1.37.2 after hack/bench-lib.sh's
// bench_gen objects were server-side applied as kustomize-controller,
// web-00001 scaled and cfg-00003 labelled by kubectl: what serve caches
// at scale (testdata/cached-objects.json).
func cachedObjects(t testing.TB) []*unstructured.Unstructured {
	t.Helper()
	b, err := os.ReadFile("testdata/cached-objects.json")
	if err != nil {
		t.Fatal(err)
	}
	list := &unstructured.UnstructuredList{}
	if err := list.UnmarshalJSON(b); err != nil {
		t.Fatal(err)
	}
	out := make([]*unstructured.Unstructured, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
	}
	if len(out) < 2 {
		t.Fatalf("testdata/cached-objects.json: %d objects", len(out))
	}
	return out
}

var deployKind = scan.Kind{GVR: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"},
	GVK: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, Namespaced: true}

func kindOf(u *unstructured.Unstructured) scan.Kind {
	if u.GetKind() == "Deployment" {
		return deployKind
	}
	return cmKind
}

// TestAppendJSONRoundTrip: what appendJSON writes decodes, with the
// dynamic client's decoding (utiljson), to the value it was given, types
// included: an integral float64 stays a float64, an int64 an int64, and
// strings with quotes, control characters and multi-byte runes come back
// whole.
func TestAppendJSONRoundTrip(t *testing.T) {
	in := map[string]any{
		"int": int64(-42), "big": int64(math.MaxInt64), "float": 1.5, "integral": float64(3), "huge": 1e21, "tiny": 1e-7,
		"neg": -2.0, "t": true, "f": false, "null": nil,
		"s":      "quote \" backslash \\ newline \n tab \t cr \r bell \x07 nul \x00 é 日本 \u2028 </tag>&",
		"list":   []any{int64(1), "two", 3.25, []any{}, map[string]any{}},
		"nested": map[string]any{"f:metadata": map[string]any{"f:labels": map[string]any{".": map[string]any{}}}},
		"":       "empty key",
	}
	b, err := appendJSON(nil, in)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := utiljson.Unmarshal(b, &out); err != nil {
		t.Fatalf("%v:\n%s", err, b)
	}
	if !reflect.DeepEqual(in, out) {
		t.Errorf("round trip changed the value:\nin:  %#v\nout: %#v\njson: %s", in, out, b)
	}
	if _, err := appendJSON(nil, math.Inf(1)); err == nil {
		t.Error("+Inf encoded: JSON has no such number")
	}
}

// TestEntryRoundTrip: an owned object's entry decodes to the object
// without its status, equal value for value to what the API server sent
// (so the pipeline judges what it judged before entries); an unowned one
// to its identity; and the compressed bytes are far fewer than the JSON.
func TestEntryRoundTrip(t *testing.T) {
	codecs := map[string]*codec{}
	var rawBytes, kept int
	for _, obj := range cachedObjects(t) {
		k := kindOf(obj)
		c := codecs[k.GVK.Kind]
		if c == nil {
			c = &codec{}
			codecs[k.GVK.Kind] = c
		}
		obj.Object["status"] = map[string]any{"replicas": int64(2), "ratio": 0.5}
		e, err := newEntry(obj, true, c)
		if err != nil {
			t.Fatal(err)
		}
		got, err := e.object(k)
		if err != nil {
			t.Fatal(err)
		}
		want := obj.DeepCopy()
		delete(want.Object, "status")
		if !reflect.DeepEqual(got.Object, want.Object) {
			t.Errorf("%s: decoded entry differs:\ngot:  %v\nwant: %v", obj.GetName(), got.Object, want.Object)
		}
		if e.GetObjectMeta().GetName() != obj.GetName() || e.GetObjectMeta().GetNamespace() != obj.GetNamespace() || e.uid != obj.GetUID() {
			t.Errorf("%s: identity %+v", obj.GetName(), e.GetObjectMeta())
		}
		rawBytes += e.n
		kept += len(e.raw)

		plain, err := newEntry(obj, false, c)
		if err != nil {
			t.Fatal(err)
		}
		id, err := plain.object(k)
		if err != nil {
			t.Fatal(err)
		}
		if plain.raw != nil || len(id.Object) != 3 || id.GetName() != obj.GetName() || id.GetUID() != obj.GetUID() || id.GroupVersionKind() != k.GVK {
			t.Errorf("%s: unowned entry kept %v", obj.GetName(), id.Object)
		}
	}
	// Measured: ~1/10; a codec that stopped compressing fails this.
	if kept*4 > rawBytes {
		t.Errorf("entries keep %d bytes of %d bytes of JSON: compression lost", kept, rawBytes)
	}
}

// TestEntryAllocs guards the allocations of the hot paths by count (not
// time): building an owned object's entry (the transform, once per
// event) and decoding it (the worker, once per candidate). Measured
// (BenchmarkEntry): see the limits' comments; the limits leave headroom.
func TestEntryAllocs(t *testing.T) {
	objs := cachedObjects(t)
	obj := objs[0]
	k := kindOf(obj)
	c := &codec{}
	e, err := newEntry(obj, true, c)
	if err != nil {
		t.Fatal(err)
	}
	build := testing.AllocsPerRun(50, func() {
		if _, err := newEntry(obj, true, c); err != nil {
			t.Fatal(err)
		}
	})
	decode := testing.AllocsPerRun(50, func() {
		if _, err := e.object(k); err != nil {
			t.Fatal(err)
		}
	})
	// newEntry: the entry, its top-level map and the compressed copy
	// (~5); object: the JSON buffer, a flate source, and the decoded
	// object's maps, slices and strings (~300 for a Deployment).
	if build > 20 {
		t.Errorf("newEntry: %.0f allocations per object, want <= 20", build)
	}
	if decode > 600 {
		t.Errorf("entry.object: %.0f allocations per object, want <= 600", decode)
	}
}

// BenchmarkEntry measures the cache's hot paths on real objects: building
// an entry (transform), its JSON back (Precheck reads it), and the decoded
// object (Explain); B-kept is what an entry's bytes weigh on average, B-json
// the JSON they hold.
func BenchmarkEntry(b *testing.B) {
	objs := cachedObjects(b)
	c := map[string]*codec{"Deployment": {}, "ConfigMap": {}}
	entries := make([]*entry, len(objs))
	kept, raw := 0, 0
	for i, o := range objs {
		e, err := newEntry(o, true, c[o.GetKind()])
		if err != nil {
			b.Fatal(err)
		}
		entries[i] = e
		kept += len(e.raw)
		raw += e.n
	}
	b.Run("build", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			o := objs[i%len(objs)]
			if _, err := newEntry(o, true, c[o.GetKind()]); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(kept)/float64(len(objs)), "B-kept")
		b.ReportMetric(float64(raw)/float64(len(objs)), "B-json")
	})
	b.Run("json", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, err := entries[i%len(entries)].json(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("object", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			e := entries[i%len(entries)]
			if _, err := e.object(kindOf(objs[i%len(objs)])); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkClean measures the worker's path for most objects of a cluster:
// an owned object only its engine wrote, ruled out by Precheck on its
// entry's JSON without being decoded in full (Server.clean).
func BenchmarkClean(b *testing.B) {
	f := newFixture(b)
	var clean *unstructured.Unstructured
	for _, o := range cachedObjects(b) {
		if o.GetName() == "cfg-00001" {
			clean = o
		}
	}
	if clean == nil {
		b.Fatal("testdata/cached-objects.json: no cfg-00001")
	}
	e, err := newEntry(clean, true, &codec{})
	if err != nil {
		b.Fatal(err)
	}
	if !f.srv.clean(cmKind, e) {
		b.Fatal("cfg-00001, written by kustomize-controller only, not clean")
	}
	b.ReportAllocs()
	for b.Loop() {
		f.srv.clean(cmKind, e)
	}
}
