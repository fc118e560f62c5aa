package kube

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/model/jsonpointer"
)

func service(spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{"name": "web", "namespace": "ns"},
		"spec":     spec,
	}}
}

const timeout = "/spec/sessionAffinityConfig/clientIP/timeoutSeconds"

// SetDefaults_Service (kubernetes pkg/apis/core/v1/defaults.go): ClientIP
// gets the 10800 s timeout, None loses any sessionAffinityConfig.
func TestStoredDefaultsDerivedFields(t *testing.T) {
	for _, tc := range []struct {
		name     string
		affinity string
		config   any
		want     any // nil: absent
	}{
		{"ClientIP without config", "ClientIP", nil, int64(10800)},
		{"ClientIP keeps its timeout", "ClientIP", map[string]any{"clientIP": map[string]any{"timeoutSeconds": int64(60)}}, int64(60)},
		{"None drops the config", "None", map[string]any{"clientIP": map[string]any{"timeoutSeconds": int64(10800)}}, nil},
	} {
		spec := map[string]any{"sessionAffinity": tc.affinity, "ports": []any{map[string]any{"port": int64(80)}}}
		if tc.config != nil {
			spec["sessionAffinityConfig"] = tc.config
		}
		in := service(spec)
		out, ok := Stored(in)
		if !ok {
			t.Fatalf("%s: not stored", tc.name)
		}
		got, present := jsonpointer.Get(out.Object, timeout)
		if tc.want == nil && present || tc.want != nil && got != tc.want {
			t.Errorf("%s: timeoutSeconds %v (present %v), want %v", tc.name, got, present, tc.want)
		}
		if p, _ := jsonpointer.Get(out.Object, "/spec/ports/0/protocol"); p != "TCP" {
			t.Errorf("%s: port protocol %v, want the TCP default", tc.name, p)
		}
		if _, changed := jsonpointer.Get(in.Object, "/spec/type"); changed {
			t.Errorf("%s: Stored changed its input", tc.name)
		}
	}
	cr := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Widget", "spec": map[string]any{}}}
	if _, ok := Stored(cr); ok {
		t.Error("a custom resource was stored: its defaults are its CRD's, not the scheme's")
	}
}

// Applied: removed fields go, the manifest's maps merge key by key, its
// lists replace; live is left as it was.
func TestApplied(t *testing.T) {
	live := service(map[string]any{
		"sessionAffinity":       "ClientIP",
		"sessionAffinityConfig": map[string]any{"clientIP": map[string]any{"timeoutSeconds": int64(10800)}},
		"selector":              map[string]any{"app": "web", "tier": "api"},
		"ports":                 []any{map[string]any{"port": int64(80)}, map[string]any{"port": int64(81)}},
	})
	out := Applied(live, []string{timeout, "/spec/ports/0/port", "/spec/nothing/here"}, map[string]any{
		"spec": map[string]any{"selector": map[string]any{"app": "web2"}, "ports": []any{map[string]any{"port": int64(90)}}},
	})
	if _, ok := jsonpointer.Get(out.Object, timeout); ok {
		t.Error("timeoutSeconds not removed")
	}
	if v, _ := jsonpointer.Get(out.Object, "/spec/selector"); len(v.(map[string]any)) != 2 || v.(map[string]any)["app"] != "web2" {
		t.Errorf("selector %v, want app web2 over live, tier kept", v)
	}
	if v, _ := jsonpointer.Get(out.Object, "/spec/ports"); len(v.([]any)) != 1 {
		t.Errorf("ports %v, want the manifest's list whole", v)
	}
	if _, ok := jsonpointer.Get(live.Object, timeout); !ok {
		t.Error("Applied changed live")
	}
	// With the source kept, the API server fills the same value again.
	if s, ok := Stored(out); !ok {
		t.Fatal("not stored")
	} else if v, _ := jsonpointer.Get(s.Object, timeout); v != int64(10800) {
		t.Errorf("after the apply and the defaulting: %v, want 10800", v)
	}
}
