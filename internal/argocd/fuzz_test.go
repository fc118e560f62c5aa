package argocd

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func fuzzObject() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "shop", "labels": map[string]any{"app": "web"}},
		"spec": map[string]any{"replicas": int64(3), "template": map[string]any{"spec": map[string]any{
			"containers": []any{map[string]any{"name": "app", "image": "nginx", "resources": map[string]any{"requests": map[string]any{"cpu": "100m"}}}}}}},
		"status": map[string]any{"replicas": int64(3)},
	}}
}

// FuzzParseSettings feeds one argocd-cm key/value: parsing, compiling the
// rules and normalizing an object with them must never panic or hang.
func FuzzParseSettings(f *testing.F) {
	f.Add("resource.customizations.ignoreDifferences.apps_Deployment", "jsonPointers:\n- /spec/replicas\n")
	f.Add("resource.customizations.ignoreDifferences.all", "jqPathExpressions:\n- .spec.template.spec.containers[].image\n")
	f.Add("resource.customizations.knownTypeFields.apps_Deployment", "- field: spec.template.spec\n  type: core/v1/PodSpec\n")
	f.Add("resource.compareoptions", "ignoreResourceStatusField: crd\nignoreAggregatedRoles: true\n")
	f.Add("resource.exclusions", "- apiGroups: ['[']\n  kinds: ['*']\n")
	f.Add("resource.customizations", "apps/Deployment:\n  ignoreDifferences: |\n    jsonPointers: [/spec]\n")
	f.Add("resource.customizations.foo.a_b_c", "x: &a [*a]")
	f.Fuzz(func(t *testing.T, key, value string) {
		if len(value) > 4096 {
			return
		}
		s := ParseSettings(map[string]string{key: value}, cmSource{})
		cfg := newCompareConfig(s, nil, cmSource{}, nil, 20*time.Millisecond)
		live := fuzzObject()
		desired := fuzzObject()
		_ = cfg.fatal()
		_ = cfg.normalizePair(live, desired)
		_, _ = cfg.stateDiff(live, desired, &normResult{})
		_ = rulesOfSettings(s)
	})
}

// FuzzApplicationRules feeds an Application's YAML: decoding, compiling the
// ignoreDifferences rules and applying them must never panic or hang.
func FuzzApplicationRules(f *testing.F) {
	f.Add([]byte("spec:\n  ignoreDifferences:\n  - group: apps\n    kind: Deployment\n    jsonPointers: [/spec/replicas]\n"))
	f.Add([]byte("spec:\n  ignoreDifferences:\n  - group: '['\n    kind: '*'\n    jqPathExpressions: ['until(false; .)']\n"))
	f.Add([]byte("spec:\n  ignoreDifferences:\n  - kind: '*'\n    jsonPointers: ['', 'spec', '/~2']\n    managedFieldsManagers: [kubectl]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 8192 {
			return
		}
		app := &Application{}
		if err := yaml.Unmarshal(data, app); err != nil {
			return
		}
		cfg := newCompareConfig(DefaultSettings(), app, cmSource{}, nil, 20*time.Millisecond)
		live := fuzzObject()
		_ = cfg.normalizePair(live, fuzzObject())
		_ = cfg.whyNot(live, cfg.normalizePair(live, nil))
		_ = rulesOfApp(app, cmSource{})
	})
}

// FuzzParseTrackingID: any annotation value parses or is rejected, never panics.
func FuzzParseTrackingID(f *testing.F) {
	f.Add("shop:apps/Deployment:shop/web")
	f.Add("team_shop:/ConfigMap:shop/c")
	f.Add(":::")
	f.Fuzz(func(t *testing.T, v string) {
		if r := parseTrackingID(v); r != nil && r.App == "" {
			t.Fatalf("empty app name accepted from %q", v)
		}
	})
}
