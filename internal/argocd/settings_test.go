package argocd

import (
	"strings"
	"testing"
	"time"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

func TestParseSettingsOverrideKeys(t *testing.T) {
	tests := []struct {
		key, wantOverride, wantGroup, wantKind string
	}{
		{"resource.customizations.ignoreDifferences.apps_Deployment", "apps/Deployment", "apps", "Deployment"},
		{"resource.customizations.ignoreDifferences.networking.k8s.io_Ingress", "networking.k8s.io/Ingress", "networking.k8s.io", "Ingress"},
		{"resource.customizations.ignoreDifferences.Service", "Service", "", "Service"},
		{"resource.customizations.ignoreDifferences._Service", "/Service", "", "Service"},
		{"resource.customizations.ignoreDifferences.all", "*/*", "*", "*"},
		{"resource.customizations.ignoreDifferences.*_Deployment", "*/Deployment", "*", "Deployment"},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			s := ParseSettings(map[string]string{tt.key: "jsonPointers: [/spec/x]", "resource.compareoptions": "ignoreResourceStatusField: none"}, cmSource{})
			if s.Fatal != nil {
				t.Fatal(s.Fatal)
			}
			if len(s.Rules) != 1 {
				t.Fatalf("rules = %+v", s.Rules)
			}
			r := s.Rules[0]
			if r.OverrideKey != tt.wantOverride || r.Group != tt.wantGroup || r.Kind != tt.wantKind {
				t.Fatalf("rule = key %q group %q kind %q", r.OverrideKey, r.Group, r.Kind)
			}
			if r.Origin.Field != "data["+tt.key+"]" || r.Origin.Object != "ConfigMap argocd/argocd-cm" {
				t.Fatalf("origin = %+v", r.Origin)
			}
		})
	}
}

func TestParseSettingsFatalShapes(t *testing.T) {
	for _, data := range []map[string]string{
		{"resource.customizations.ignoreDiferences.apps_Deployment": "jsonPointers: [/a]"},
		{"resource.customizations.ignoreDifferences.a_b_c": "jsonPointers: [/a]"},
		{"resource.customizations.ignoreDifferences.apps_Deployment": "jsonPointers: {"},
		{"resource.customizations.useOpenLibs.apps_Deployment": "maybe"},
		{"resource.compareoptions": "ignoreAggregatedRoles: [x]"},
	} {
		s := ParseSettings(data, cmSource{})
		if s.Fatal == nil || len(s.Problems) == 0 || s.Problems[0].Level != model.NoteError || s.Problems[0].Rule == nil {
			t.Errorf("%v: fatal %v problems %+v", data, s.Fatal, s.Problems)
		}
	}
	// Keys Argo ignores are warnings, not failures.
	s := ParseSettings(map[string]string{"resource.customizations.health": "x"}, cmSource{})
	if s.Fatal != nil || len(s.Problems) != 1 || s.Problems[0].Level != model.NoteWarning {
		t.Fatalf("fatal %v problems %+v", s.Fatal, s.Problems)
	}
}

func TestStatusRuleByCompareOption(t *testing.T) {
	for value, want := range map[string]string{"": "*/*", "all": "*/*", "crd": crdOverrideKey, "none": "", "off": "", "false": "", "bogus": "*/*"} {
		data := map[string]string{}
		if value != "" {
			data["resource.compareoptions"] = "ignoreResourceStatusField: \"" + value + "\""
		}
		s := ParseSettings(data, cmSource{})
		got := ""
		for _, r := range s.Rules {
			if r.Type == RuleCompareOptions {
				got = r.OverrideKey
			}
		}
		if got != want {
			t.Errorf("%q: status rule on %q, want %q", value, got, want)
		}
	}
}

func TestSettingsMisc(t *testing.T) {
	s := ParseSettings(map[string]string{
		"application.resourceTrackingMethod": "annotation+label",
		"application.instanceLabelKey":       "example.com/app",
		"resource.exclusions":                "- apiGroups: ['[bad']\n  kinds: [X]\n- apiGroups: ['cert-manager.io']\n",
	}, cmSource{File: "cm.yaml", Pos: func(string) (int, int) { return 7, 3 }})
	if s.TrackingMethod != TrackingAnnotationAndLabel || s.InstanceLabelKey != "example.com/app" {
		t.Fatalf("tracking = %q %q", s.TrackingMethod, s.InstanceLabelKey)
	}
	if len(s.Exclusions) != 2 || s.Exclusions[1].Origin.Line != 7 || s.Exclusions[1].Origin.File != "cm.yaml" {
		t.Fatalf("exclusions = %+v", s.Exclusions)
	}
	var globNote bool
	for _, p := range s.Problems {
		globNote = globNote || (p.Reason == "invalid-glob" && strings.Contains(p.Message, "[bad"))
	}
	if !globNote {
		t.Fatalf("problems = %+v", s.Problems)
	}
	if _, ok := s.excluded("cert-manager.io", "Certificate", "https://kubernetes.default.svc"); !ok {
		t.Fatal("cert-manager.io not excluded")
	}
	if _, ok := s.excluded("events.k8s.io", "Event", ""); !ok {
		t.Fatal("built-in exclusion missing")
	}
	if _, ok := s.excluded("apps", "Deployment", ""); ok {
		t.Fatal("apps/Deployment excluded")
	}

	s.ParseCmdParams(map[string]string{"ignore.normalizer.jq.timeout": "250ms"}, cmSource{})
	if s.JQTimeout != 250*time.Millisecond {
		t.Fatalf("jq timeout = %v", s.JQTimeout)
	}
	s.ParseCmdParams(map[string]string{"ignore.normalizer.jq.timeout": "soon"}, cmSource{})
	if s.JQTimeout != 250*time.Millisecond || s.Problems[len(s.Problems)-1].Reason != "invalid-value" {
		t.Fatalf("bad timeout accepted: %v %+v", s.JQTimeout, s.Problems)
	}
}

func TestInclusionsExcludeTheRest(t *testing.T) {
	s := ParseSettings(map[string]string{"resource.inclusions": "- apiGroups: ['apps']\n  kinds: ['*']\n"}, cmSource{})
	if _, ok := s.excluded("apps", "Deployment", "c"); ok {
		t.Fatal("included kind excluded")
	}
	if _, ok := s.excluded("", "ConfigMap", "c"); !ok {
		t.Fatal("kind outside inclusions not excluded")
	}
}

func TestRuleValidation(t *testing.T) {
	r := &ignoreRule{Group: "[apps", Kind: "Deployment", JSONPointers: []string{"spec/replicas", "/a~2", "/ok"}, JQPathExpressions: []string{".a[", ".b"}, Scope: model.ScopeDiff}
	r.compile()
	if len(r.Errors) != 4 || r.fatal == nil || r.jq[0] != nil || r.jq[1] == nil {
		t.Fatalf("errors = %q fatal %v", r.Errors, r.fatal)
	}
	if r.matchesObject("apps", "Deployment", "x", "y") {
		t.Fatal("invalid glob matched")
	}
}

func TestNearMiss(t *testing.T) {
	for _, tt := range []struct {
		want, have string
		ok         bool
	}{{"app", "apps", true}, {"deployment", "Deployment", true}, {"batch", "apps", false}, {"a*", "apps", false}, {"apps", "apps", false}} {
		if got := nearMiss(tt.want, tt.have); got != tt.ok {
			t.Errorf("nearMiss(%q, %q) = %v", tt.want, tt.have, got)
		}
	}
}

func TestLegacyCustomizationsOrigin(t *testing.T) {
	s := ParseSettings(map[string]string{"resource.customizations": "apps/Deployment:\n  ignoreDifferences: |\n    jsonPointers: [/spec/replicas]\n"}, cmSource{})
	var got *ignoreRule
	for _, r := range s.Rules {
		if r.OverrideKey == "apps/Deployment" {
			got = r
		}
	}
	if got == nil || got.Origin.Field != "data[resource.customizations][apps/Deployment].ignoreDifferences" || got.JSONPointers[0] != "/spec/replicas" {
		t.Fatalf("rule = %+v", got)
	}
}

func TestUnquotedStarInSettingsGetsTheHint(t *testing.T) {
	s := ParseSettings(map[string]string{
		"resource.exclusions": "- apiGroups:\n  - *\n  kinds: [Lease]\n",
		"resource.customizations.ignoreDifferences.apps_Deployment": "jsonPointers: [/spec/replicas]\n",
	}, cmSource{})
	found := false
	for _, n := range s.Problems {
		if strings.Contains(n.Message, "quote it: '*'") {
			found = true
		}
	}
	if !found {
		t.Errorf("no hint in %+v", s.Problems)
	}
	if len(s.Rules) < 2 {
		t.Errorf("the other key's rule was lost: %d rules", len(s.Rules))
	}
}
