package model

import (
	"testing"

	"github.com/fluxcd/pkg/ssa/jsondiff"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func obj(apiVersion, kind, ns, name string, labels map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetNamespace(ns)
	u.SetName(name)
	u.SetLabels(labels)
	return u
}

var selectorObjects = []*unstructured.Unstructured{
	obj("apps/v1", "Deployment", "shop", "web", map[string]string{"app": "web"}),
	obj("v1", "Service", "shop", "web", nil),
	obj("serving.knative.dev/v1", "Service", "shop", "web", nil),
	obj("v1", "ConfigMap", "", "cfg", map[string]string{"tier": "db"}),
	obj("apps/v1beta1", "StatefulSet", "db", "pg-0", nil),
}

// TestRegexParity: Flux selectors match exactly what fluxcd/pkg's
// jsondiff.SelectorRegex (the code kustomize-controller and
// helm-controller run) matches.
func TestRegexParity(t *testing.T) {
	for _, s := range []Selector{
		{},
		{Kind: "Service"},
		{Group: "^$", Kind: "Service"},
		{Group: "apps", Version: "v1"},
		{Kind: "Deploy.*|StatefulSet", Namespace: "shop|db"},
		{Name: "web", LabelSelector: "app=web"},
		{LabelSelector: "tier in (db)"},
		{Name: "pg-[0-9]+"},
		{Kind: "ConfigMap", AnnotationSelector: "x"},
	} {
		s.Syntax = MatchRegex
		m, err := s.Compile()
		if err != nil {
			t.Fatalf("%s: %v", s.Describe(), err)
		}
		sr, err := jsondiff.NewSelectorRegex(&jsondiff.Selector{Group: s.Group, Version: s.Version, Kind: s.Kind,
			Name: s.Name, Namespace: s.Namespace, LabelSelector: s.LabelSelector, AnnotationSelector: s.AnnotationSelector})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range selectorObjects {
			if got, want := m.Matches(o), sr.MatchUnstructured(o); got != want {
				t.Errorf("%s on %s %s/%s: %v, Flux says %v", s.Describe(), o.GetAPIVersion(), o.GetKind(), o.GetName(), got, want)
			}
		}
	}
	if _, err := (Selector{Syntax: MatchRegex, Kind: "("}).Compile(); err == nil {
		t.Error("a broken regex compiled")
	}
}

func TestGlobAndExact(t *testing.T) {
	for _, tc := range []struct {
		s    Selector
		want []bool // per selectorObjects
	}{
		// Argo CD: "" is the core group only; Knative's Service is not selected.
		{Selector{Syntax: MatchGlob, Kind: "Service"}, []bool{false, true, false, false, false}},
		{Selector{Syntax: MatchGlob, Group: "*", Kind: "Service"}, []bool{false, true, true, false, false}},
		{Selector{Syntax: MatchGlob, Group: "apps", Kind: "*"}, []bool{true, false, false, false, true}},
		{Selector{Syntax: MatchGlob, Group: "apps", Kind: "*", Name: "web"}, []bool{true, false, false, false, false}},
		{Selector{Syntax: MatchExact, Kind: "Service"}, []bool{false, true, true, false, false}},
		{Selector{Kind: "ConfigMap", LabelSelector: "tier=db"}, []bool{false, false, false, true, false}},
	} {
		for i, o := range selectorObjects {
			if got := tc.s.Matches(o); got != tc.want[i] {
				t.Errorf("%s on %s %s: %v, want %v", tc.s.Describe(), o.GetAPIVersion(), o.GetKind(), got, tc.want[i])
			}
		}
	}
	if (Selector{Syntax: MatchGlob, Kind: "[a"}).Matches(selectorObjects[0]) {
		t.Error("a broken glob matched")
	}
}

func TestDescribe(t *testing.T) {
	for s, want := range map[Selector]string{
		{Syntax: MatchGlob, Kind: "Service"}:                                        "Service (glob)",
		{Syntax: MatchGlob, Group: "apps", Kind: "Deployment", Namespace: "x"}:      "apps/Deployment ns=x (glob)",
		{Syntax: MatchRegex, Kind: "Service"}:                                       "(any group)/Service (regex)",
		{Syntax: MatchRegex, Group: "^$", Name: "a", LabelSelector: "app=web"}:      "^$/* name=a labels=app=web (regex)",
		{Group: "apps", Version: "v1", Kind: "Deployment", AnnotationSelector: "x"}: "apps/Deployment version=v1 annotations=x",
	} {
		if got := s.Describe(); got != want {
			t.Errorf("Describe(%+v) = %q, want %q", s, got, want)
		}
	}
}
