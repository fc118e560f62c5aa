package argocd

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-drift/kubectl-drift/internal/argocd/smd/typed"
)

// v3Models reads one group-version's /openapi/v3 document saved from the
// same API server (v1.37.2) as testdata/parity/openapi-v2.json.gz.
func v3Models(t *testing.T, gv schema.GroupVersion) (map[string]*spec.Schema, error) {
	t.Helper()
	name := "apis_" + gv.Group + "_" + gv.Version
	if gv.Group == "" {
		name = "api_" + gv.Version
	}
	f, err := os.Open(filepath.Join("testdata/parity/openapi-v3", name+".json.gz"))
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read only
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return nil, err
	}
	var doc spec3.OpenAPI
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	return doc.Components.Schemas, nil
}

// v3Parser types each object with its group-version's v3 document, as
// explain does through Options.Schema (schemaCache).
type v3Parser struct {
	t     *testing.T
	cache *schemaCache
}

func (p v3Parser) Type(gvk schema.GroupVersionKind) *typed.ParseableType {
	parser, note := p.cache.parser(func(gv schema.GroupVersion) (map[string]*spec.Schema, error) { return v3Models(p.t, gv) }, gvk.GroupVersion())
	if note != nil || parser == nil {
		return nil
	}
	return parser.Type(gvk)
}

const twoContainers = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: app, image: nginx, resources: {limits: {cpu: "1"}}}
      - {name: sidecar, image: busybox}
`

// TestV3SchemaKeepsContainersKeyed: with a group-version's OpenAPI v3
// document, whose PodSpec reaches containers through allOf: [$ref]
// wrappers, containers are still a list keyed by name (a field set names
// k:{"name":"app"}), as with /openapi/v2. An untyped wrapper would make
// the list atomic and managedFieldsManagers would remove whole lists.
func TestV3SchemaKeepsContainersKeyed(t *testing.T) {
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(twoContainers), &obj.Object); err != nil {
		t.Fatal(err)
	}
	v2, err := parityParser()
	if err != nil {
		t.Fatal(err)
	}
	for name, p := range map[string]GVKParser{"v2": v2, "v3": v3Parser{t: t, cache: &schemaCache{}}} {
		pt := p.Type(obj.GroupVersionKind())
		if pt == nil {
			t.Fatalf("%s: no type for %s", name, obj.GroupVersionKind())
		}
		tv, err := pt.FromUnstructured(obj.Object)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		set, err := tv.ToFieldSet()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		s := set.String()
		for _, want := range []string{`.spec.template.spec.containers[name="app"].image`, `.spec.template.spec.containers[name="sidecar"].image`, `.spec.template.spec.containers[name="app"].resources.limits.cpu`} {
			if !strings.Contains(s, want) {
				t.Errorf("%s: field set has no %s:\n%s", name, want, s)
			}
		}
	}
}

// TestArgoParityOpenAPIV3 replays the parity cases of apps/v1 and core v1
// objects (managedFieldsManagers, ServerSideApply and server-side diff
// among them) with per group-version v3 schemas, as explain reads them, and
// wants the same normalized objects and verdicts as with /openapi/v2, the
// schema Argo CD's controller reads.
func TestArgoParityOpenAPIV3(t *testing.T) {
	v2, err := parityParser()
	if err != nil {
		t.Fatal(err)
	}
	v3 := v3Parser{t: t, cache: &schemaCache{}}
	dirs, _ := filepath.Glob("testdata/parity/cases/*")
	sort.Strings(dirs)
	compared := map[string]int{}
	for _, dir := range dirs {
		pc := loadParityCase(t, dir)
		obj := pc.desired
		if obj == nil {
			obj = pc.live
		}
		if gv := obj.GroupVersionKind().GroupVersion(); gv != (schema.GroupVersion{Group: "apps", Version: "v1"}) && gv != (schema.GroupVersion{Version: "v1"}) {
			continue
		}
		t.Run(pc.name, func(t *testing.T) {
			var got [2]parityOutcome
			for i, p := range []GVKParser{v2, v3} {
				got[i] = parityRun(t, dir, pc, p)
			}
			if d := cmp.Diff(got[0], got[1]); d != "" {
				t.Errorf("v2 and v3 schemas disagree (-v2 +v3):\n%s", d)
			}
		})
		compared[kindOfCase(pc)]++
	}
	t.Logf("cases compared: %v", compared)
	if compared["managers"] < 5 || compared["ssa"] < 5 || compared["other"] < 30 {
		t.Errorf("too few cases compared: %v", compared)
	}
}

// parityOutcome is what a parity case compares.
type parityOutcome struct {
	Live, Target, Predicted any
	Modified                bool
	Fatal                   string
}

func parityRun(t *testing.T, dir string, pc parityCase, p GVKParser) parityOutcome {
	t.Helper()
	cfg := newCompareConfig(pc.settings, pc.app, cmSource{Object: "Application argocd/parity"}, p, 0)
	if data, err := os.ReadFile(filepath.Join(dir, "dryrun.json")); err == nil {
		cfg.dryRun = func(context.Context, *unstructured.Unstructured, string) (*unstructured.Unstructured, error) {
			u := &unstructured.Unstructured{}
			return u, u.UnmarshalJSON(data)
		}
	}
	if fatal := cfg.fatal(); fatal != nil {
		return parityOutcome{Fatal: fatal.Error()}
	}
	res := cfg.normalizePair(pc.live, pc.desired)
	out := parityOutcome{Live: canonical(res.Live), Target: canonical(res.Target)}
	dr, err := cfg.stateDiff(pc.live, pc.desired, &normResult{})
	if err != nil {
		out.Fatal = err.Error()
		return out
	}
	out.Modified, out.Predicted = dr.Modified, canonical(dr.PredictedLive)
	if reflect.DeepEqual(out.Live, nil) && reflect.DeepEqual(out.Target, nil) {
		t.Logf("%s: nothing normalized", pc.name)
	}
	return out
}

func kindOfCase(pc parityCase) string {
	if pc.app == nil {
		return "other"
	}
	raw, _ := json.Marshal(pc.app)
	switch s := string(raw); {
	case strings.Contains(s, "managedFieldsManagers"):
		return "managers"
	case strings.Contains(s, "ServerSide"):
		return "ssa"
	}
	return "other"
}
