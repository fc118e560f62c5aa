package differential

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// HelmRelease scenarios (DrawHelm, issue 31): the object of Draw(seed),
// packaged into a chart and released by a HelmRelease, drifted by live
// writers only (a Git change of a chart is a new chart version, an
// upgrade: not what drift detection judges). Its settings and changes
// come from a random stream of their own, so the Kustomization scenario
// of a seed (and the saved cases, which name settings by index) stays as
// it is.

// Drift detection modes a HelmRelease scenario draws ("" leaves
// spec.driftDetection.mode out: disabled, helm-controller's default).
var helmModes = []string{"", "warn", "enabled"}

// DrawHelm returns the HelmRelease scenario of seed: Draw(seed)'s object
// (and whether its chart writes the server defaults), a drift detection
// mode, ignore rules drawn as DrawArgo draws its rules (paths a writer
// touched or a knob, each written so that it matches, or so that it seems
// to match but does not), the per-object driftDetection annotation now
// and then, and live writers. Same seed, same scenario.
func DrawHelm(seed uint64) Scenario {
	k := Draw(seed)
	r := rand.New(rand.NewPCG(seed, 0x4e1e45e1ea5e0001))
	s := Scenario{Seed: seed, Object: k.Object, WithDefaults: k.WithDefaults, Helm: true}
	s.DriftMode = helmModes[r.IntN(len(helmModes))]
	n := 1 + r.IntN(3)
	for i := 0; i < n; i++ {
		// Live writers only: a Git writer is drawn again (a few tries).
		for try := 0; try < 4; try++ {
			c, ok := drawChange(s.Object, r, s.WithDefaults)
			if ok && !c.Git() {
				s.Changes = append(s.Changes, c)
				break
			}
		}
	}
	for _, st := range helmSettingsFor(s, r) {
		chance := 4
		if st.DriftIgnore != nil {
			// Ignore rules matter only with drift detection on.
			chance = 2
		}
		if r.IntN(chance) == 0 {
			s.Settings = append(s.Settings, st)
		}
	}
	return s
}

// helmSettingsFor draws the candidate settings of a HelmRelease scenario.
func helmSettingsFor(s Scenario, r *rand.Rand) []Setting {
	o := s.Object
	var touched []string
	for _, c := range s.Changes {
		touched = append(touched, slices.DeleteFunc(c.Touched(o), func(p string) bool { return slices.Contains(c.Knob.Derived, p) })...)
	}
	touched = slices.DeleteFunc(touched, func(p string) bool {
		return p == "/status" || strings.HasPrefix(p, "/metadata/annotations/kubectl.kubernetes.io~1last-applied")
	})
	pick := func() string {
		if len(touched) > 0 && r.IntN(3) > 0 {
			return touched[r.IntN(len(touched))]
		}
		return Pointer(o.Knobs[r.IntN(len(o.Knobs))].Path)
	}
	name, rule := helmIgnoreRule(o, pick(), r)
	return []Setting{
		{Name: name, DriftIgnore: rule},
		{Name: "object-detection-disabled", Annotation: [2]string{"helm.toolkit.fluxcd.io/driftDetection", "disabled"}},
	}
}

// helmIgnoreRule is one driftDetection.ignore entry on ptr, in one of the
// ways users write it: matching (the pointer, its parent, with or without
// a target), or seeming to match without doing so (another kind, another
// name, a key with "/" not escaped as ~1).
func helmIgnoreRule(o Object, ptr string, r *rand.Rand) (string, map[string]any) {
	target := map[string]any{"kind": kindOf(o)}
	if o.Group != "" {
		target["group"] = o.Group
	}
	variants := []string{"ignore", "ignore-parent", "ignore-no-target", "ignore-other-kind", "ignore-other-name", "ignore-unescaped"}
	v := variants[r.IntN(len(variants))]
	path := ptr
	switch v {
	case "ignore-parent":
		if i := strings.LastIndex(ptr, "/"); i > 0 {
			path = ptr[:i]
		}
	case "ignore-no-target":
		target = nil
	case "ignore-other-kind":
		target["kind"] = "Other" + kindOf(o)
	case "ignore-other-name":
		target["name"] = "not-" + o.ID
	case "ignore-unescaped":
		if !strings.Contains(ptr, "~1") {
			// Nothing to leave unescaped: the plain rule.
			v = "ignore"
		}
		path = strings.ReplaceAll(ptr, "~1", "/")
	}
	rule := map[string]any{"paths": []any{path}}
	if target != nil {
		rule["target"] = target
	}
	return v, rule
}

// HelmReleaseSpec is the extra spec of the scenario's HelmRelease (YAML):
// its driftDetection.
func (s Scenario) HelmReleaseSpec() (string, error) {
	dd := map[string]any{}
	if s.DriftMode != "" {
		dd["mode"] = s.DriftMode
	}
	var ignore []any
	for _, st := range s.Settings {
		if st.DriftIgnore != nil {
			ignore = append(ignore, st.DriftIgnore)
		}
	}
	if len(ignore) > 0 {
		dd["ignore"] = ignore
	}
	if len(dd) == 0 {
		return "", nil
	}
	b, err := yaml.Marshal(map[string]any{"driftDetection": dd})
	if err != nil {
		return "", fmt.Errorf("rendering the HelmRelease spec: %w", err)
	}
	return string(b), nil
}

// HelmChart returns the files of the scenario's chart for a release in
// namespace ns, relative to the chart directory: templates/object.yaml
// (the object as GitManifests has it, the release namespace and each knob
// Git sets taken from values) and values.yaml.
func (s Scenario) HelmChart(ns string) (map[string]string, error) {
	first, _, err := s.GitManifests(ns)
	if err != nil {
		return nil, err
	}
	m := map[string]any{}
	if err := yaml.Unmarshal([]byte(first), &m); err != nil {
		return nil, fmt.Errorf("corpus entry %s: %w", s.Object.ID, err)
	}
	values := map[string]any{}
	holes := map[string]string{}
	for i, k := range s.Object.Knobs {
		v, ok := getPath(m, k.Path)
		if !ok || k.Git == nil {
			continue
		}
		key := fmt.Sprintf("knob%d", i)
		values[key] = v
		hole := "__DRIFT_VALUE_" + key + "__"
		setPath(m, k.Path, hole)
		holes[hole] = "{{ .Values." + key + " | toJson }}"
	}
	if meta, ok := m["metadata"].(map[string]any); ok && meta["namespace"] == ns {
		meta["namespace"] = "__DRIFT_RELEASE_NAMESPACE__"
		holes["__DRIFT_RELEASE_NAMESPACE__"] = "{{ .Release.Namespace }}"
	}
	tpl, err := render(m)
	if err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(holes))
	for h := range holes {
		keys = append(keys, h)
	}
	sort.Strings(keys)
	for _, h := range keys {
		tpl = strings.ReplaceAll(tpl, h, holes[h])
	}
	vals, err := render(values)
	if err != nil {
		return nil, err
	}
	return map[string]string{"templates/object.yaml": tpl, "values.yaml": vals}, nil
}

func getPath(m map[string]any, path []string) (any, bool) {
	var cur any = m
	for _, p := range path {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = mm[p]; !ok {
			return nil, false
		}
	}
	return cur, true
}
