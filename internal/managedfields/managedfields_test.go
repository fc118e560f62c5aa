package managedfields

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/model/jsonpointer"
	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

func loadFixture(t testing.TB, name string) *unstructured.Unstructured {
	t.Helper()
	return testutil.ReadObject(t, "testdata", name)
}

func managers(refs []model.ManagerRef) []string {
	out := make([]string, len(refs))
	for i, r := range refs {
		out[i] = r.Manager
		if r.Subresource != "" {
			out[i] += "/" + r.Subresource
		}
	}
	return out
}

func mustParse(t testing.TB, obj *unstructured.Unstructured) *Index {
	t.Helper()
	ix, err := Parse(obj)
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

// The container whose image `kubectl set image` changed is the SECOND one;
// an index-based attribution (kubectl-blame) would blame the first.
func TestOwnersAssociativeListsFromRealServer(t *testing.T) {
	obj := loadFixture(t, "deployment-ssa-then-kubectl-drifted.yaml")
	ix := mustParse(t, obj)
	containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
	if got := containers[1].(map[string]any)["name"]; got != "sidecar" {
		t.Fatalf("fixture changed: container 1 is %v", got)
	}
	tests := []struct {
		pointer string
		want    string
	}{
		{"/spec/template/spec/containers/1/image", "kubectl-set"},
		{"/spec/template/spec/containers/0/image", "kustomize-controller"},
		{"/spec/replicas", "kubectl/scale"},
		{"/spec/template/spec/containers/0/env/0/value", "kubectl-edit"},
		{"/spec/template/spec/containers/0/env/1/value", "kustomize-controller"},
		{"/spec/template/spec/containers/0/resources/limits/memory", "kubectl-patch"},
		{"/spec/template/spec/containers/0/resources/requests/cpu", "kustomize-controller"},
		{"/metadata/labels/hotfix", "kubectl-label"},
		{"/metadata/annotations/incident", "kubectl-patch"},
		{"/metadata/annotations/oncall", "kubectl-annotate"},
		{"/spec/template/spec/containers/0/ports/2/protocol", "kustomize-controller"},
		// Defaults nobody set: no owner.
		{"/spec/template/spec/containers/0/ports/0/protocol", ""},
		{"/spec/revisionHistoryLimit", ""},
		{"/spec/template/spec/containers/1/imagePullPolicy", ""},
		// Atomic: selector is a +structType=atomic LabelSelector.
		{"/spec/selector/matchLabels/app", "kustomize-controller"},
		// Atomic list: args items belong to the owner of args.
		{"/spec/template/spec/containers/0/args/1", "kustomize-controller"},
	}
	for _, tc := range tests {
		t.Run(tc.pointer, func(t *testing.T) {
			got := strings.Join(managers(ix.Owners(obj, tc.pointer)), ",")
			if got != tc.want {
				t.Errorf("Owners(%s) = %q, want %q", tc.pointer, got, tc.want)
			}
		})
	}
}

func TestOwnersOfContainerSubtreeMostRecentFirst(t *testing.T) {
	obj := loadFixture(t, "deployment-ssa-then-kubectl-drifted.yaml")
	ix := mustParse(t, obj)
	got := managers(ix.Owners(obj, "/spec/template/spec/containers/0"))
	want := []string{"kubectl-edit", "kubectl-patch", "kustomize-controller"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("owners of app container = %v, want %v", got, want)
	}
	got = managers(ix.Owners(obj, "/spec/template/spec/containers/1"))
	want = []string{"kubectl-set", "kustomize-controller"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("owners of sidecar container = %v, want %v", got, want)
	}
}

func TestOwnersBadPointers(t *testing.T) {
	obj := loadFixture(t, "deployment-ssa-then-kubectl-drifted.yaml")
	ix := mustParse(t, obj)
	for _, p := range []string{"spec", "/spec/template/spec/containers/9/image", "/spec/replicas/x", "/a~2b", "/spec/template/spec/containers/-1", "/spec/template/spec/containers/name"} {
		if got := ix.Owners(obj, p); got != nil {
			t.Errorf("Owners(%q) = %v, want none", p, managers(got))
		}
	}
}

func TestFieldPath(t *testing.T) {
	obj := loadFixture(t, "deployment-ssa-then-kubectl-drifted.yaml")
	tests := map[string]string{
		"/spec/template/spec/containers/1/image":                 ".spec.template.spec.containers[name=sidecar].image",
		"/spec/template/spec/containers/0/ports/0/containerPort": ".spec.template.spec.containers[name=app].ports[containerPort=8080,protocol=TCP].containerPort",
		"/spec/template/spec/containers/0/ports/2":               ".spec.template.spec.containers[name=app].ports[containerPort=5353,protocol=UDP]",
		"/spec/template/spec/containers/0/env/0/value":           ".spec.template.spec.containers[name=app].env[name=LOG_LEVEL].value",
		"/spec/template/spec/containers/0/volumeMounts/1/name":   `.spec.template.spec.containers[name=app].volumeMounts[mountPath=/var/log/web].name`,
		"/spec/template/spec/containers/0/args/1":                ".spec.template.spec.containers[name=app].args[1]",
		"/metadata/labels/app.kubernetes.io~1part-of":            `.metadata.labels["app.kubernetes.io/part-of"]`,
		"/spec/template/spec/volumes/1/emptyDir":                 ".spec.template.spec.volumes[name=logs].emptyDir",
		"":                                                       ".",
		"/spec/notThere/deeper":                                  ".spec.notThere.deeper",
		"bad":                                                    "bad",
	}
	for p, want := range tests {
		if got := FieldPath(obj, p); got != want {
			t.Errorf("FieldPath(%q) = %q, want %q", p, got, want)
		}
	}
}

// Without managedFields, keys come from the builtin table of core lists.
func TestFieldPathWithoutManagedFields(t *testing.T) {
	obj := loadFixture(t, "deployment-without-managed-fields.yaml")
	ix := mustParse(t, obj)
	if !ix.Empty() {
		t.Fatalf("index of an object saved without --show-managed-fields is not Empty: %d entries", len(ix.Entries()))
	}
	if got := ix.Owners(obj, "/spec/replicas"); got != nil {
		t.Errorf("owners without managedFields: %v", got)
	}
	want := ".spec.template.spec.containers[name=app].ports[containerPort=9090,protocol=TCP].name"
	if got := FieldPath(obj, "/spec/template/spec/containers/0/ports/1/name"); got != want {
		t.Errorf("FieldPath = %q, want %q", got, want)
	}
}

func TestServicePortsKeyedByPortAndProtocol(t *testing.T) {
	obj := loadFixture(t, "service-ssa-then-port-patched.yaml")
	ix := mustParse(t, obj)
	if got := FieldPath(obj, "/spec/ports/1/targetPort"); got != ".spec.ports[port=443,protocol=TCP].targetPort" {
		t.Errorf("FieldPath = %q", got)
	}
	if got := strings.Join(managers(ix.Owners(obj, "/spec/ports/1/targetPort")), ","); got != "kubectl-patch" {
		t.Errorf("owner of patched targetPort = %q, want kubectl-patch", got)
	}
	if got := strings.Join(managers(ix.Owners(obj, "/spec/ports/0/targetPort")), ","); got != "argocd-controller" {
		t.Errorf("owner of untouched targetPort = %q, want argocd-controller", got)
	}
	lt := ix.ListType(obj, "/spec/ports")
	if lt.Kind != ListMap || strings.Join(lt.Keys, ",") != "port,protocol" {
		t.Errorf("ListType(/spec/ports) = %+v", lt)
	}
}

func TestHPAScaleIsAutoscaler(t *testing.T) {
	obj := loadFixture(t, "deployment-ssa-then-hpa-scaled.yaml")
	ix := mustParse(t, obj)
	owners := ix.Owners(obj, "/spec/replicas")
	if len(owners) != 1 || owners[0].Manager != "kube-controller-manager" || owners[0].Subresource != "scale" {
		t.Fatalf("owners of replicas = %+v", owners)
	}
	if owners[0].Class != model.CauseAutoscaler {
		t.Errorf("class = %s, want autoscaler", owners[0].Class)
	}
}

func TestLeaves(t *testing.T) {
	obj := loadFixture(t, "deployment-ssa-then-kubectl-drifted.yaml")
	ix := mustParse(t, obj)
	leaves := ix.Leaves(obj)
	byPtr := map[string]OwnedField{}
	for i, l := range leaves {
		byPtr[l.Pointer] = l
		if i > 0 && leaves[i-1].Pointer >= l.Pointer {
			t.Errorf("leaves not sorted: %s before %s", leaves[i-1].Pointer, l.Pointer)
		}
		if len(l.Owners) == 0 {
			t.Errorf("leaf %s without owners", l.Pointer)
		}
	}
	want := map[string]string{
		"/spec/replicas":                                           "kubectl/scale",
		"/spec/template/spec/containers/1/image":                   "kubectl-set",
		"/spec/template/spec/containers/0/image":                   "kustomize-controller",
		"/spec/template/spec/containers/0/env/0/value":             "kubectl-edit",
		"/spec/template/spec/containers/0/env/0/name":              "kustomize-controller",
		"/spec/selector":                                           "kustomize-controller", // atomic: one leaf
		"/spec/template/spec/containers/0/args":                    "kustomize-controller", // atomic list: one leaf
		"/spec/template/spec/volumes/1/emptyDir":                   "kustomize-controller", // empty object
		"/metadata/labels/hotfix":                                  "kubectl-label",
		"/spec/template/spec/containers/0/resources/limits/memory": "kubectl-patch",
	}
	for p, m := range want {
		l, ok := byPtr[p]
		if !ok {
			t.Errorf("leaf %s missing", p)
			continue
		}
		if got := strings.Join(managers(l.Owners), ","); got != m {
			t.Errorf("leaf %s owners = %s, want %s", p, got, m)
		}
	}
	if l := byPtr["/spec/template/spec/containers/1/image"]; l.FieldPath != ".spec.template.spec.containers[name=sidecar].image" {
		t.Errorf("FieldPath of leaf = %q", l.FieldPath)
	}
	for _, notOwned := range []string{"/spec/revisionHistoryLimit", "/spec/selector/matchLabels/app", "/spec/template/spec/containers/0/args/0", "/metadata/name", "/spec/template/spec/containers/0/terminationMessagePath"} {
		if _, ok := byPtr[notOwned]; ok {
			t.Errorf("%s should not be a leaf", notOwned)
		}
	}
	// Every leaf's owners agree with Owners.
	for _, l := range leaves {
		if got, want := strings.Join(managers(ix.Owners(obj, l.Pointer)), ","), strings.Join(managers(l.Owners), ","); got != want {
			t.Errorf("%s: Leaves owners %s, Owners %s", l.Pointer, want, got)
		}
	}
}

func TestEntriesOrder(t *testing.T) {
	obj := loadFixture(t, "deployment-ssa-then-kubectl-drifted.yaml")
	ix := mustParse(t, obj)
	es := ix.Entries()
	if len(es) != 7 {
		t.Fatalf("%d entries, want 7", len(es))
	}
	if es[0].Manager != "kubectl-edit" {
		t.Errorf("most recent entry is %s, want kubectl-edit", es[0].Manager)
	}
	for i := 1; i < len(es); i++ {
		a, b := es[i-1].Time, es[i].Time
		if a == nil && b != nil {
			t.Errorf("entry without time before entry with time")
		}
		if a != nil && b != nil && b.After(*a) {
			t.Errorf("entry %d (%s) newer than entry %d", i, es[i].Manager, i-1)
		}
	}
	for _, e := range es {
		if e.Fields == nil || e.Fields.Empty() {
			t.Errorf("entry %s has no fields", e.Manager)
		}
	}
}

func TestParseMalformed(t *testing.T) {
	tests := map[string]string{
		"metadata not object":    `{"metadata":"x"}`,
		"managedFields object":   `{"metadata":{"managedFields":{}}}`,
		"entry not object":       `{"metadata":{"managedFields":[1]}}`,
		"manager number":         `{"metadata":{"managedFields":[{"manager":5}]}}`,
		"bad time":               `{"metadata":{"managedFields":[{"manager":"m","time":"yesterday"}]}}`,
		"fieldsType":             `{"metadata":{"managedFields":[{"manager":"m","fieldsType":"FieldsV2"}]}}`,
		"fieldsV1 list":          `{"metadata":{"managedFields":[{"manager":"m","fieldsV1":[]}]}}`,
		"bad key element":        `{"metadata":{"managedFields":[{"manager":"m","fieldsV1":{"k:{bad":{}}}]}}`,
		"bad index element":      `{"metadata":{"managedFields":[{"manager":"m","fieldsV1":{"i:x":{}}}]}}`,
		"short element":          `{"metadata":{"managedFields":[{"manager":"m","fieldsV1":{"f":{}}}]}}`,
		"value element trailing": `{"metadata":{"managedFields":[{"manager":"m","fieldsV1":{"v:1 2":{}}}]}}`,
	}
	for name, js := range tests {
		t.Run(name, func(t *testing.T) {
			obj := &unstructured.Unstructured{}
			if err := obj.UnmarshalJSON([]byte(js)); err != nil {
				// UnmarshalJSON insists on kind; build the map directly.
				obj.Object = mustJSON(t, js)
			}
			if _, err := Parse(obj); err == nil {
				t.Errorf("Parse(%s) succeeded, want error", js)
			}
		})
	}
}

func TestParseNoManagedFields(t *testing.T) {
	for _, obj := range []*unstructured.Unstructured{nil, {}, {Object: map[string]any{"metadata": map[string]any{}}}, {Object: map[string]any{"metadata": map[string]any{"managedFields": nil}}}} {
		ix, err := Parse(obj)
		if err != nil || !ix.Empty() {
			t.Errorf("Parse(%v) = %v, %v; want empty index", obj, ix, err)
		}
		if ix.Leaves(obj) != nil {
			t.Errorf("Leaves of empty index not nil")
		}
	}
}

// Sets (v:) and index-keyed lists (i:) are resolved from the elements the
// managers recorded.
func TestSetAndIndexElements(t *testing.T) {
	obj := &unstructured.Unstructured{Object: mustJSON(t, `{
	  "apiVersion": "example.com/v1", "kind": "Widget",
	  "metadata": {"name": "w", "finalizers": ["example.com/a", "example.com/b"],
	    "managedFields": [
	      {"manager": "widget-operator", "operation": "Update", "time": "2026-01-02T00:00:00Z", "fieldsType": "FieldsV1",
	       "fieldsV1": {"f:metadata": {"f:finalizers": {".": {}, "v:\"example.com/b\"": {}}}, "f:spec": {"f:steps": {"i:1": {"f:cmd": {}}}}}},
	      {"manager": "kubectl", "operation": "Apply", "time": "2026-01-01T00:00:00Z", "fieldsType": "FieldsV1",
	       "fieldsV1": {"f:metadata": {"f:finalizers": {"v:\"example.com/a\"": {}}}, "f:spec": {"f:steps": {"i:0": {"f:cmd": {}}}, "f:mode": {}}}}
	    ]},
	  "spec": {"mode": "fast", "steps": [{"cmd": "one"}, {"cmd": "two", "extra": true}]}
	}`)}
	ix := mustParse(t, obj)
	tests := []struct{ pointer, owners, fieldPath string }{
		{"/metadata/finalizers/0", "kubectl", ".metadata.finalizers[=example.com/a]"},
		{"/metadata/finalizers/1", "widget-operator", ".metadata.finalizers[=example.com/b]"},
		{"/metadata/finalizers", "widget-operator,kubectl", ".metadata.finalizers"},
		{"/spec/steps/0/cmd", "kubectl", ".spec.steps[0].cmd"},
		{"/spec/steps/1/cmd", "widget-operator", ".spec.steps[1].cmd"},
		{"/spec/steps/1/extra", "", ".spec.steps[1].extra"},
		{"/spec/mode", "kubectl", ".spec.mode"},
	}
	for _, tc := range tests {
		if got := strings.Join(managers(ix.Owners(obj, tc.pointer)), ","); got != tc.owners {
			t.Errorf("Owners(%s) = %q, want %q", tc.pointer, got, tc.owners)
		}
		if got := FieldPath(obj, tc.pointer); got != tc.fieldPath {
			t.Errorf("FieldPath(%s) = %q, want %q", tc.pointer, got, tc.fieldPath)
		}
	}
	if lt := ix.ListType(obj, "/metadata/finalizers"); lt.Kind != ListSet {
		t.Errorf("finalizers list type %+v", lt)
	}
	if lt := ix.ListType(obj, "/spec/steps"); lt.Kind != ListAtomic {
		t.Errorf("steps list type %+v", lt)
	}
	if owners := ix.Owners(obj, "/spec/mode"); owners[0].Class != model.CauseManual || owners[0].Time == nil || owners[0].Time.Day() != 1 {
		t.Errorf("owner ref %+v", owners[0])
	}
}

// Key values that would be ambiguous unquoted are quoted.
func TestFieldPathQuotesAwkwardKeys(t *testing.T) {
	obj := &unstructured.Unstructured{Object: mustJSON(t, `{
	  "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
	  "spec": {"containers": [{"name": "app", "env": [{"name": "A,B=C", "value": "x"}, {"name": "", "value": "y"}],
	    "volumeMounts": [{"mountPath": "/data dir", "name": "d"}]}]}}`)}
	tests := map[string]string{
		"/spec/containers/0/env/0/value":         `.spec.containers[name=app].env[name="A,B=C"].value`,
		"/spec/containers/0/env/1/value":         `.spec.containers[name=app].env[name=""].value`,
		"/spec/containers/0/volumeMounts/0/name": `.spec.containers[name=app].volumeMounts[mountPath="/data dir"].name`,
	}
	for p, want := range tests {
		if got := FieldPath(obj, p); got != want {
			t.Errorf("FieldPath(%s) = %s, want %s", p, got, want)
		}
	}
}

func TestBuiltinListType(t *testing.T) {
	tests := map[string]string{
		"/spec/containers":                                      "map:name",
		"/spec/template/spec/initContainers":                    "map:name",
		"/spec/jobTemplate/spec/template/spec/containers/0/env": "map:name",
		"/spec/template/spec/containers/3/ports":                "map:containerPort,protocol",
		"/spec/ports":                                           "map:port,protocol",
		"/spec/template/spec/containers/0/volumeMounts":         "map:mountPath",
		"/spec/template/spec/volumes":                           "map:name",
		"/spec/template/spec/tolerations":                       "atomic:",
		"/spec/template/spec/containers/0/args":                 "atomic:",
		"/metadata/finalizers":                                  "set:",
		"/metadata/ownerReferences":                             "map:uid",
		"/webhooks":                                             "map:name",
		"/spec/template/spec/topologySpreadConstraints":         "map:topologyKey,whenUnsatisfiable",
		"/spec/rules":                                           ":",
		"/data/ports":                                           ":",
		"":                                                      ":",
	}
	for p, want := range tests {
		toks, err := jsonpointer.Parse(p)
		if err != nil {
			t.Fatal(err)
		}
		lt := BuiltinListType(toks)
		if got := string(lt.Kind) + ":" + strings.Join(lt.Keys, ","); got != want {
			t.Errorf("BuiltinListType(%s) = %s, want %s", p, got, want)
		}
	}
}

// The hand-written FieldsV1 encoder decodes to exactly the set that
// encoding/json's encoding decodes to.
func TestFieldsJSONEncoderMatchesEncodingJSON(t *testing.T) {
	inputs := []string{
		`{"f:metadata":{"f:labels":{".":{},"f:app":{}}}}`,
		`{"f:spec":{"f:containers":{"k:{\"name\":\"a\\\\b\\\"c\"}":{".":{},"f:image":{}}}}}`,
		`{"f:data":{"f:caf\u00e9":{},"f:tab\there":{},"f:nul\u0000":{},"f:<&>":{}}}`,
		`{"f:metadata":{"f:finalizers":{"v:\"x\"":{},"v:1.5":{}}}}`,
	}
	obj := loadFixture(t, "deployment-ssa-then-kubectl-drifted.yaml")
	for _, e := range obj.Object["metadata"].(map[string]any)["managedFields"].([]any) {
		raw, err := json.Marshal(e.(map[string]any)["fieldsV1"])
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, string(raw))
	}
	for _, in := range inputs {
		var v any
		if err := json.Unmarshal([]byte(in), &v); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		std, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		ours, err := appendFieldsJSON(nil, v)
		if err != nil {
			t.Fatal(err)
		}
		var a, b fieldpath.Set
		if err := a.FromJSON(bytes.NewReader(std)); err != nil {
			t.Fatalf("%s: %v", std, err)
		}
		if err := b.FromJSON(bytes.NewReader(ours)); err != nil {
			t.Fatalf("%s: %v", ours, err)
		}
		if !a.Equals(&b) {
			t.Errorf("sets differ for %s:\nencoding/json: %s\nours: %s", in, a.String(), b.String())
		}
	}
}

// Client-side apply (Argo CD without ServerSideApply) records an Update
// entry; a later patch takes over only the patched key.
func TestClientSideApplyThenPatch(t *testing.T) {
	obj := loadFixture(t, "configmap-csa-then-patched.yaml")
	ix := mustParse(t, obj)
	tests := []struct {
		pointer, manager string
		class            model.CauseClass
	}{
		{"/data/mode", "kubectl-patch", model.CauseManual},
		{"/data/replicas", "argocd-controller", model.CauseGitOps},
		{"/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration", "argocd-controller", model.CauseGitOps},
	}
	for _, tc := range tests {
		owners := ix.Owners(obj, tc.pointer)
		if len(owners) != 1 || owners[0].Manager != tc.manager || owners[0].Class != tc.class || owners[0].Operation != "Update" {
			t.Errorf("Owners(%s) = %+v, want %s (%s)", tc.pointer, owners, tc.manager, tc.class)
		}
	}
	// The data map itself: argocd-controller created it ("."), kubectl-patch owns a key in it.
	if got := strings.Join(managers(ix.Owners(obj, "/data")), ","); got != "kubectl-patch,argocd-controller" {
		t.Errorf("Owners(/data) = %s", got)
	}
}

// An object only the GitOps engine ever wrote: every owned leaf is the
// engine's, so ownership inference finds nothing.
func TestCleanObjectOwnedOnlyByEngine(t *testing.T) {
	obj := loadFixture(t, "deployment-ssa-clean.yaml")
	ix := mustParse(t, obj)
	leaves := ix.Leaves(obj)
	if len(leaves) < 20 {
		t.Fatalf("only %d leaves", len(leaves))
	}
	for _, l := range leaves {
		if len(l.Owners) != 1 || l.Owners[0].Manager != "kustomize-controller" || l.Owners[0].Class != model.CauseGitOps {
			t.Errorf("%s owned by %v", l.FieldPath, managers(l.Owners))
		}
	}
	for _, p := range []string{"/spec/replicas", "/spec/template/spec/containers/1/image", "/spec/template/spec/containers/0/env/0/value"} {
		if got := strings.Join(managers(ix.Owners(obj, p)), ","); got != "kustomize-controller" {
			t.Errorf("Owners(%s) = %s", p, got)
		}
	}
}

// Scans share one Index across goroutines (run with -race).
func TestIndexConcurrentUse(t *testing.T) {
	obj := loadFixture(t, "deployment-ssa-then-kubectl-drifted.yaml")
	ix := mustParse(t, obj)
	want := len(ix.Leaves(obj))
	done := make(chan int)
	for g := 0; g < 4; g++ {
		go func() {
			n := 0
			for i := 0; i < 20; i++ {
				n = len(ix.Leaves(obj))
				_ = ix.Owners(obj, "/spec/template/spec/containers/1/image")
				_ = ix.FieldPath(obj, "/spec/template/spec/containers/0/ports/2")
			}
			done <- n
		}()
	}
	for g := 0; g < 4; g++ {
		if n := <-done; n != want {
			t.Errorf("concurrent Leaves = %d, want %d", n, want)
		}
	}
}

// An injector's Update owns the whole container it added, including the
// fields the API server defaulted in it; status belongs to the controller
// that wrote it through the status subresource.
func TestInjectedContainerAndControllerStatus(t *testing.T) {
	obj := loadFixture(t, "deployment-ssa-then-injected.yaml")
	ix := mustParse(t, obj)
	containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
	proxy := -1
	for i, c := range containers {
		if c.(map[string]any)["name"] == "istio-proxy" {
			proxy = i
		}
	}
	if proxy < 0 {
		t.Fatal("fixture has no istio-proxy container")
	}
	base := "/spec/template/spec/containers/" + string(rune('0'+proxy))
	for _, p := range []string{base, base + "/image", base + "/args/1", base + "/imagePullPolicy"} {
		owners := ix.Owners(obj, p)
		if len(owners) != 1 || owners[0].Manager != "istio-sidecar-injector" || owners[0].Class != model.CauseOperator {
			t.Errorf("Owners(%s) = %+v", p, owners)
		}
	}
	if got := FieldPath(obj, base+"/image"); got != ".spec.template.spec.containers[name=istio-proxy].image" {
		t.Errorf("FieldPath = %s", got)
	}
	var status []OwnedField
	for _, l := range ix.Leaves(obj) {
		if strings.HasPrefix(l.Pointer, "/status/") {
			status = append(status, l)
		}
	}
	if len(status) != 3 {
		t.Fatalf("status leaves = %+v", status)
	}
	for _, l := range status {
		o := l.Owners[0]
		if len(l.Owners) != 1 || o.Manager != "kube-controller-manager" || o.Subresource != "status" || o.Class != model.CauseController {
			t.Errorf("%s owners %+v", l.Pointer, l.Owners)
		}
	}
}

func TestClientSideDefault(t *testing.T) {
	tests := []struct {
		fixture, pointer string
		want             bool
	}{
		// Argo CD's client-side apply created it: defaults charged to the engine.
		{"deployment-csa-then-image-set.yaml", "/spec/revisionHistoryLimit", true},
		{"deployment-csa-then-image-set.yaml", "/spec/strategy", true},
		{"deployment-csa-then-image-set.yaml", "/spec/template/spec/containers/0/imagePullPolicy", true},
		{"deployment-csa-then-image-set.yaml", "/spec/template/spec/dnsPolicy", true},
		// ... but what it applied is named by its last-applied configuration.
		{"deployment-csa-then-image-set.yaml", "/spec/replicas", false},
		{"deployment-csa-then-image-set.yaml", "/spec/template/spec/containers/0/env/0/value", false},
		{"deployment-csa-then-image-set.yaml", "/metadata/labels/app", false},
		// kubectl set image is not a client-side applier.
		{"deployment-csa-then-image-set.yaml", "/spec/template/spec/containers/0/image", false},
		// A person's kubectl apply: kubectl-client-side-apply wrote the annotation.
		{"deployment-kubectl-apply-then-scaled.yaml", "/spec/progressDeadlineSeconds", true},
		{"deployment-kubectl-apply-then-scaled.yaml", "/spec/template/spec/containers/0/name", false},
		{"deployment-kubectl-apply-then-scaled.yaml", "/spec/replicas", false},
		// Server-side apply is never charged with defaults; nobody owns them.
		{"deployment-ssa-then-kubectl-drifted.yaml", "/spec/revisionHistoryLimit", false},
		{"deployment-ssa-then-kubectl-drifted.yaml", "/spec/template/spec/containers/0/image", false},
		// An injector's Update is an intent, not a client-side apply.
		{"deployment-ssa-then-injected.yaml", "/spec/template/spec/containers/0/imagePullPolicy", false},
		// Nothing at all.
		{"deployment-csa-then-image-set.yaml", "/spec/nothing", false},
		{"deployment-csa-then-image-set.yaml", "bad", false},
	}
	for _, tc := range tests {
		obj := loadFixture(t, tc.fixture)
		ix := mustParse(t, obj)
		if got := ix.ClientSideDefault(obj, tc.pointer); got != tc.want {
			t.Errorf("%s %s: ClientSideDefault = %v, want %v (owners %v)", tc.fixture, tc.pointer, got, tc.want, managers(ix.Owners(obj, tc.pointer)))
		}
	}
	var empty *Index
	if empty.ClientSideDefault(loadFixture(t, "deployment-csa-then-image-set.yaml"), "/spec/revisionHistoryLimit") {
		t.Error("nil index reports a default")
	}
}

// TestLeavesRemembersTheLastObject: Leaves answers the object it is asked
// about, whether the answer is remembered (the same object again) or not
// (another object with the same index, then the first again).
func TestLeavesRemembersTheLastObject(t *testing.T) {
	a := loadFixture(t, "deployment-ssa-then-kubectl-drifted.yaml")
	ix := mustParse(t, a)
	want := ix.walkLeaves(a)
	if len(want) == 0 {
		t.Fatal("no leaves")
	}
	b := a.DeepCopy()
	unstructured.RemoveNestedField(b.Object, "spec", "replicas")
	wantB := ix.walkLeaves(b)
	if reflect.DeepEqual(want, wantB) {
		t.Fatal("the two objects have the same leaves: the test tells nothing")
	}
	for i, obj := range []*unstructured.Unstructured{a, a, b, a, b, b} {
		exp := want
		if obj == b {
			exp = wantB
		}
		if got := ix.Leaves(obj); !reflect.DeepEqual(got, exp) {
			t.Fatalf("call %d: %v, want %v", i, got, exp)
		}
	}
}
