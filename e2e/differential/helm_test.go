package differential

import (
	"encoding/json"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestDrawHelmKeepsTheSeedsObject: a seed's HelmRelease scenario is a
// function of the seed, judges the object its Kustomization scenario
// judges, writes live only, and leaves Draw(seed) as it was.
func TestDrawHelmKeepsTheSeedsObject(t *testing.T) {
	modes, rules := map[string]bool{}, map[string]bool{}
	for i := uint64(0); i < 1000; i++ {
		seed := FullCorpusSeed + i
		before := Draw(seed)
		h := DrawHelm(seed)
		if !reflect.DeepEqual(h, DrawHelm(seed)) {
			t.Fatalf("seed %d drew two HelmRelease scenarios", seed)
		}
		if !reflect.DeepEqual(before, Draw(seed)) {
			t.Fatalf("seed %d: DrawHelm changed Draw's scenario", seed)
		}
		if h.Object.ID != before.Object.ID || !h.Helm {
			t.Fatalf("seed %d: HelmRelease scenario %s, Kustomization scenario %s", seed, h, before)
		}
		for _, c := range h.Changes {
			if c.Git() {
				t.Fatalf("%s: a Git writer in a HelmRelease scenario", h)
			}
		}
		modes[h.DriftMode] = true
		for _, st := range h.Settings {
			rules[st.Name] = true
		}
	}
	for _, m := range helmModes {
		if !modes[m] {
			t.Errorf("drift detection mode %q never drawn", m)
		}
	}
	for _, r := range []string{"ignore", "ignore-parent", "ignore-no-target", "ignore-other-kind", "ignore-other-name", "ignore-unescaped", "object-detection-disabled"} {
		if !rules[r] {
			t.Errorf("setting %s never drawn", r)
		}
	}
	if got, want := DrawHelm(9000).String(), "seed 9000: backup git-has-defaults helmrelease drift=enabled settings[ignore] changes[update-scale,patch-json:/spec/template/spec/serviceAccountName]"; got != want {
		t.Errorf("DrawHelm(9000) = %s\nwant %s", got, want)
	}
}

var helmExpr = regexp.MustCompile(`\{\{ \.Values\.(knob[0-9]+) \| toJson \}\}|\{\{ \.Release\.Namespace \}\}`)

// TestHelmChartRendersTheGitManifest: the chart's template, its values
// put in as Helm's toJson puts them, is the object GitManifests gives.
func TestHelmChartRendersTheGitManifest(t *testing.T) {
	const ns = "dh-1"
	templated := 0
	for i := uint64(0); i < 500; i++ {
		s := DrawHelm(FullCorpusSeed + i)
		files, err := s.HelmChart(ns)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		values := map[string]any{}
		if err := yaml.Unmarshal([]byte(files["values.yaml"]), &values); err != nil {
			t.Fatalf("%s: values.yaml: %v", s, err)
		}
		var bad error
		doc := helmExpr.ReplaceAllStringFunc(files["templates/object.yaml"], func(e string) string {
			templated++
			if e == "{{ .Release.Namespace }}" {
				return ns
			}
			b, err := json.Marshal(values[helmExpr.FindStringSubmatch(e)[1]])
			if err != nil {
				bad = err
			}
			return string(b)
		})
		if bad != nil || strings.Contains(doc, "{{") {
			t.Fatalf("%s: template not rendered (%v):\n%s", s, bad, doc)
		}
		first, _, err := s.GitManifests(ns)
		if err != nil {
			t.Fatal(err)
		}
		var got, want map[string]any
		if err := yaml.Unmarshal([]byte(doc), &got); err != nil {
			t.Fatalf("%s: %v\n%s", s, err, doc)
		}
		if err := yaml.Unmarshal([]byte(first), &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: chart renders\n%s\nwant\n%s", s, doc, first)
		}
	}
	if templated == 0 {
		t.Fatal("no chart took a value")
	}
}

func TestHelmReleaseSpec(t *testing.T) {
	s := Scenario{DriftMode: "warn", Settings: []Setting{
		{Name: "ignore", DriftIgnore: map[string]any{"paths": []any{"/spec/replicas"}, "target": map[string]any{"kind": "Deployment"}}},
		{Name: "object-detection-disabled", Annotation: [2]string{"helm.toolkit.fluxcd.io/driftDetection", "disabled"}},
	}}
	got, err := s.HelmReleaseSpec()
	if err != nil {
		t.Fatal(err)
	}
	want := "driftDetection:\n  ignore:\n  - paths:\n    - /spec/replicas\n    target:\n      kind: Deployment\n  mode: warn\n"
	if got != want {
		t.Errorf("spec:\n%s\nwant\n%s", got, want)
	}
	if got, _ := (Scenario{}).HelmReleaseSpec(); got != "" {
		t.Errorf("no settings, mode absent: spec %q, want none", got)
	}
}

// TestScoreWarnMode: in warn mode helm-controller moves no field; its
// Drifted condition is the truth of a `reported` verdict.
func TestScoreWarnMode(t *testing.T) {
	yes, no := true, false
	touched := []string{"/spec/replicas"}
	classes := func(fs []Finding) string {
		var out []string
		for _, f := range fs {
			out = append(out, f.Path+" "+f.Class)
		}
		return strings.Join(out, ", ")
	}
	for _, c := range []struct {
		name   string
		fields []Field
		truth  Truth
		code   int
		want   string
	}{
		{"reported and drifted", []Field{{"/spec/replicas", "reported"}}, Truth{Reported: &yes}, 1, "/spec/replicas agreed"},
		{"reported, not drifted", []Field{{"/spec/replicas", "reported"}}, Truth{Reported: &no}, 1, "/spec/replicas wrong"},
		{"left-alone, drifted", []Field{{"/spec/replicas", "left-alone"}}, Truth{Reported: &yes}, 0, "/spec/replicas agreed, drifted wrong, exit wrong"},
		{"nothing named, drifted", nil, Truth{Reported: &yes}, 0, "drifted missed, exit missed"},
		{"not warn mode", []Field{{"/spec/replicas", "not-watched"}}, Truth{}, 0, "/spec/replicas agreed"},
	} {
		if got := classes(Score(c.fields, c.truth, touched, c.code)); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

// TestEditTouchesEveryLineItRewrites: kubectl edit's sed rewrites the old
// value on every line that holds it, so an aggregated ClusterRole's
// selector key (aggregate-to-monitoring) counts as touched with its label
// (seed 60575 counted it as noise).
func TestEditTouchesEveryLineItRewrites(t *testing.T) {
	var o Object
	for _, c := range Corpus {
		if c.ID == "clusterrole-aggregated" {
			o = c
		}
	}
	ch := Change{Writer: WEdit, Knob: o.Knobs[0]}
	got := ch.Touched(o)
	want := "/aggregationRule/clusterRoleSelectors/0/matchLabels"
	if !slices.Contains(got, want) || !slices.Contains(got, Pointer(o.Knobs[0].Path)) {
		t.Errorf("Touched = %v, want the knob and %s", got, want)
	}
}
