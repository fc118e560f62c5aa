package argocd

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kubemanagedfields "k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/kube-openapi/pkg/util/proto"
	"sigs.k8s.io/yaml"

	openapi_v2 "github.com/google/gnostic-models/openapiv2"
	gomodfieldpath "sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	gomodtyped "sigs.k8s.io/structured-merge-diff/v6/typed"
)

// probeConfig is a Deployment as in Git; probeLive the same after an
// Istio-style webhook rewrote the probe's httpGet (path and port), owned
// by its manager "istio-webhook" (issue 32).
const probeConfig = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx
        readinessProbe:
          httpGet: {path: /healthz, port: 8080}
`

const probeLive = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
  managedFields:
  - manager: istio-webhook
    operation: Update
    apiVersion: apps/v1
    fieldsType: FieldsV1
    fieldsV1:
      f:spec:
        f:template:
          f:spec:
            f:containers:
              k:{"name":"web"}:
                f:readinessProbe:
                  f:httpGet:
                    f:path: {}
                    f:port: {}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx
        readinessProbe:
          httpGet: {path: /app-health/web/readyz, port: 15020}
`

func probeObjects(t *testing.T) (live, config *unstructured.Unstructured) {
	t.Helper()
	live, config = &unstructured.Unstructured{}, &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(probeLive), &live.Object); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal([]byte(probeConfig), &config.Object); err != nil {
		t.Fatal(err)
	}
	return live, config
}

// probeHTTPGet returns the container's readinessProbe.httpGet and whether
// the key is there.
func probeHTTPGet(t *testing.T, obj map[string]any) (any, bool) {
	t.Helper()
	cs, _, _ := unstructured.NestedSlice(obj, "spec", "template", "spec", "containers")
	if len(cs) != 1 {
		t.Fatalf("containers: %v", cs)
	}
	probe, _ := cs[0].(map[string]any)["readinessProbe"].(map[string]any)
	v, ok := probe["httpGet"]
	return v, ok
}

// TestPinnedSMDKeepsEmptiedProbe: with the structured-merge-diff Argo CD
// v3.2 links (internal/argocd/smd), removing the webhook's fields leaves
// httpGet {} on both sides, so Argo CD v3.2 is Synced.
func TestPinnedSMDKeepsEmptiedProbe(t *testing.T) {
	parser, err := parityParser()
	if err != nil {
		t.Fatal(err)
	}
	live, config := probeObjects(t)
	pt := parser.Type(config.GroupVersionKind())
	if pt == nil {
		t.Fatal("no type for apps/v1 Deployment")
	}
	nl, nc, _, err := normalizeManagedFields(live, config, []string{"istio-webhook"}, pt)
	if err != nil {
		t.Fatal(err)
	}
	for side, obj := range map[string]*unstructured.Unstructured{"live": nl, "config": nc} {
		v, ok := probeHTTPGet(t, obj.Object)
		m, isMap := v.(map[string]any)
		if !ok || !isMap || len(m) != 0 {
			t.Errorf("%s httpGet = %#v (present %v), want {} as structured-merge-diff %s gives", side, v, ok, "v6.3.1-0.20251003215857-446d8398e19c")
		}
	}
}

// TestGoModSMDNullsEmptiedProbe runs the same steps (argo-cd
// util/argo/managedfields/managed_fields.go Normalize) with the
// structured-merge-diff go.mod selects: it gives httpGet null, after which
// a three-way patch deletes the whole httpGet. This is why the engine
// links the pinned copy; when go.mod's version stops differing, this test
// fails and the copy can be reconsidered.
func TestGoModSMDNullsEmptiedProbe(t *testing.T) {
	doc := parityV2Models(t)
	parser, err := kubemanagedfields.NewGVKParser(uniqueModels(doc), false)
	if err != nil {
		t.Fatal(err)
	}
	live, config := probeObjects(t)
	pt := parser.Type(config.GroupVersionKind())
	tl, err := pt.FromUnstructured(live.Object)
	if err != nil {
		t.Fatal(err)
	}
	tc, err := pt.FromUnstructured(config.Object)
	if err != nil {
		t.Fatal(err)
	}
	cmp, err := tl.Compare(tc)
	if err != nil {
		t.Fatal(err)
	}
	set := &gomodfieldpath.Set{}
	if err := set.FromJSON(bytes.NewReader(live.GetManagedFields()[0].FieldsV1.GetRawBytes())); err != nil {
		t.Fatal(err)
	}
	inter := set.Intersection(cmp.Modified)
	var out [2]*gomodtyped.TypedValue
	out[0], out[1] = tl.RemoveItems(inter), tc.RemoveItems(inter)
	for i, tv := range out {
		obj, _ := tv.AsValue().Unstructured().(map[string]any)
		if v, ok := probeHTTPGet(t, obj); !ok || v != nil {
			t.Errorf("side %d: httpGet = %#v (present %v), want null from go.mod's structured-merge-diff", i, v, ok)
		}
	}
}

func parityV2Models(t *testing.T) proto.Models {
	t.Helper()
	raw := readParityOpenAPI(t)
	doc, err := openapi_v2.ParseDocument(raw)
	if err != nil {
		t.Fatal(err)
	}
	models, err := proto.NewOpenAPIData(doc)
	if err != nil {
		t.Fatal(err)
	}
	return models
}

func readParityOpenAPI(t *testing.T) []byte {
	t.Helper()
	f, err := os.Open("testdata/parity/openapi-v2.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }() // read only
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}
