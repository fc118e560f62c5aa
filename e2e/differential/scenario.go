// Package differential draws Kubernetes drift scenarios from a seed and
// scores the tool's field verdicts against what a real engine controller
// did (issue 30, DESIGN.md "Differential conformance"). Everything here is
// pure: the e2e tests (build tag e2e) run the scenarios on the real
// controllers.
package differential

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"
)

// Scenario is one generated case. It is a pure function of Seed (Draw); a
// minimized scenario is the drawn one with some settings and changes
// dropped (Keep).
type Scenario struct {
	Seed   uint64
	Object Object
	// WithDefaults writes the object's server-defaulted fields into Git
	// from the first commit.
	WithDefaults bool
	Settings     []Setting
	Changes      []Change
	// Tracking is Argo CD's resource tracking method (argocd-cm
	// application.resourceTrackingMethod; "" for Flux). It is one setting
	// of the whole Argo CD, not of an Application: the cases of a run are
	// grouped by it, and minimization keeps it.
	Tracking string
	// Helm: the object is released by a HelmRelease (DrawHelm) whose
	// driftDetection.mode is DriftMode ("" leaves it out: disabled).
	Helm      bool
	DriftMode string
}

// Setting is one engine setting. Flux: on the Kustomization (Spec) or an
// annotation or label on the object in Git. Argo CD (DrawArgo): on the
// Application (IgnoreDifference, SyncOption, CompareOption, SelfHeal).
type Setting struct {
	Name string
	// Spec is YAML for the Kustomization's spec (merged with the others).
	Spec map[string]any
	// Annotation is set on the object in Git.
	Annotation [2]string
	// Label is a label set on the object in Git, whose value a
	// postBuild substitution fills.
	Label [2]string
	// IgnoreDifference is one entry of the Application's
	// spec.ignoreDifferences.
	IgnoreDifference map[string]any
	// SyncOption is one item of spec.syncPolicy.syncOptions.
	SyncOption string
	// CompareOption is one item of the argocd.argoproj.io/compare-options
	// annotation.
	CompareOption string
	// SelfHeal turns on automated sync with selfHeal (after the tool ran).
	SelfHeal bool
	// DriftIgnore is one entry of the HelmRelease's
	// spec.driftDetection.ignore.
	DriftIgnore map[string]any
}

// Writers of live changes (each a real client call) and of Git changes.
const (
	WEdit           = "kubectl-edit"
	WPatchMerge     = "patch-merge"
	WPatchJSON      = "patch-json"
	WPatchStrategic = "patch-strategic"
	WScale          = "kubectl-scale"
	WLabel          = "kubectl-label"
	WAnnotate       = "kubectl-annotate"
	WSetImage       = "set-image"
	WSetEnv         = "set-env"
	WApplyCSA       = "apply-client-side"
	WApplySSA       = "apply-server-side"
	WUpdateScale    = "update-scale"
	WUpdateStatus   = "update-status"
	WGitRemove      = "git-remove-field"
	WGitAdd         = "git-add-field"
	WGitDefault     = "git-write-default"
	// WController is a controller's server-side apply of the main
	// resource (Object.Controller).
	WController = "controller-apply"
)

// Change is one write: by a client on the live object, or to Git (the
// second commit).
type Change struct {
	Writer string
	// Knob is the field written (absent for writers that pick their own:
	// scale, set image/env, status).
	Knob Knob
	// Manager is the field manager the client writes as.
	Manager string
}

// Git says whether the change is a new commit rather than a live write.
func (c Change) Git() bool { return strings.HasPrefix(c.Writer, "git-") }

// Draw returns the scenario of seed. Same seed, same scenario, on every
// machine (math/rand/v2 PCG is specified).
func Draw(seed uint64) Scenario {
	r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	c := corpusOf(seed)
	o := c[r.IntN(len(c))]
	sc := Scenario{Seed: seed, Object: o, WithDefaults: len(o.Defaults) > 0 && r.IntN(4) == 0}
	// Settings: each with its own chance, most scenarios have none or one.
	for _, s := range settingsFor(o, r) {
		if r.IntN(5) == 0 {
			sc.Settings = append(sc.Settings, s)
		}
	}
	n := 1 + r.IntN(3)
	for i := 0; i < n; i++ {
		if c, ok := drawChange(o, r, sc.WithDefaults); ok {
			sc.Changes = append(sc.Changes, c)
		}
	}
	return sc
}

func settingsFor(o Object, r *rand.Rand) []Setting {
	knob := o.Knobs[r.IntN(len(o.Knobs))]
	kind := kindOf(o)
	ssa := []string{"IfNotPresent", "Ignore", "Override"}[r.IntN(3)]
	return []Setting{
		{Name: "ignore", Spec: map[string]any{"ignore": []any{map[string]any{
			"paths": []any{Pointer(knob.Path)}, "target": map[string]any{"kind": kind}}}}},
		{Name: "ssa-" + strings.ToLower(ssa), Annotation: [2]string{"kustomize.toolkit.fluxcd.io/ssa", ssa}},
		{Name: "force", Annotation: [2]string{"kustomize.toolkit.fluxcd.io/force", "enabled"}},
		{Name: "patches", Spec: map[string]any{"patches": []any{map[string]any{
			"patch":  "- op: add\n  path: /metadata/annotations/patched-by\n  value: flux\n",
			"target": map[string]any{"kind": kind}}}}},
		{Name: "targetNamespace", Spec: map[string]any{"targetNamespace": "NS"}},
		{Name: "commonMetadata", Spec: map[string]any{"commonMetadata": map[string]any{
			"labels": map[string]any{"team": "platform"}, "annotations": map[string]any{"contact": "ops"}}}},
		{Name: "postBuild", Spec: map[string]any{"postBuild": map[string]any{"substitute": map[string]any{"TIER": "backend"}}},
			Label: [2]string{"tier", "${TIER}"}},
	}
}

func drawChange(o Object, r *rand.Rand, withDefaults bool) (Change, bool) {
	writers := []string{WEdit, WPatchMerge, WPatchJSON, WPatchStrategic, WLabel, WAnnotate, WApplyCSA, WApplySSA, WGitRemove, WGitAdd}
	if o.Scalable {
		writers = append(writers, WScale, WUpdateScale)
	}
	if o.Containers != nil {
		writers = append(writers, WSetImage, WSetEnv)
	}
	if o.Status != "" {
		writers = append(writers, WUpdateStatus)
	}
	if len(o.Defaults) > 0 && !withDefaults {
		writers = append(writers, WGitDefault)
	}
	if o.Controller != "" {
		// Last, so that the writers of the other entries keep their
		// indexes (and their seeds their scenarios).
		writers = append(writers, WController)
	}
	w := writers[r.IntN(len(writers))]
	c := Change{Writer: w, Manager: managerOf(w, r)}
	switch w {
	case WEdit:
		var edits []Knob
		for _, k := range o.Knobs {
			if k.Edit {
				edits = append(edits, k)
			}
		}
		if len(edits) == 0 {
			return Change{}, false
		}
		c.Knob = edits[r.IntN(len(edits))]
	case WLabel:
		c.Knob = Knob{Path: []string{"metadata", "labels", []string{"app.kubernetes.io/part-of", "hotfix"}[r.IntN(2)]}, Drift: "manual"}
	case WAnnotate:
		c.Knob = Knob{Path: []string{"metadata", "annotations", []string{"owner", "debug-session"}[r.IntN(2)]}, Drift: "on-call"}
	case WGitRemove:
		var in []Knob
		for _, k := range o.Knobs {
			if k.Git != nil && !(len(k.Path) == 3 && k.Path[0] == "metadata" && k.Path[2] == "app") {
				in = append(in, k)
			}
		}
		if len(in) == 0 {
			return Change{}, false
		}
		c.Knob = in[r.IntN(len(in))]
	case WGitAdd:
		var out []Knob
		for _, k := range o.Knobs {
			if k.Git == nil {
				out = append(out, k)
			}
		}
		if len(out) == 0 {
			return Change{}, false
		}
		c.Knob = out[r.IntN(len(out))]
	case WGitDefault:
		c.Knob = o.Defaults[r.IntN(len(o.Defaults))]
	case WScale, WUpdateScale, WSetImage, WSetEnv, WUpdateStatus, WController:
	default:
		c.Knob = o.Knobs[r.IntN(len(o.Knobs))]
	}
	return c, true
}

// managerOf is the field manager each writer really writes as (kubectl's
// defaults; a controller's name for subresource updates; another
// operator for server-side apply).
func managerOf(w string, r *rand.Rand) string {
	switch w {
	case WEdit:
		return "kubectl-edit"
	case WPatchMerge, WPatchJSON, WPatchStrategic:
		return "kubectl-patch"
	case WScale, WLabel, WAnnotate, WSetImage, WSetEnv:
		return "kubectl-" + strings.TrimPrefix(strings.TrimPrefix(w, "kubectl-"), "set-")
	case WApplyCSA:
		return "kubectl-client-side-apply"
	case WApplySSA:
		return []string{"platform-operator", "argocd-controller", "helm"}[r.IntN(3)]
	case WUpdateScale:
		return "kube-controller-manager"
	case WUpdateStatus:
		return []string{"kube-controller-manager", "acme-operator"}[r.IntN(2)]
	}
	return ""
}

// Keep returns the scenario with only the settings and changes whose
// indexes are listed (minimization).
func (s Scenario) Keep(settings, changes []int) Scenario {
	out := s
	out.Settings, out.Changes = nil, nil
	for _, i := range settings {
		out.Settings = append(out.Settings, s.Settings[i])
	}
	for _, i := range changes {
		out.Changes = append(out.Changes, s.Changes[i])
	}
	return out
}

// String is the scenario in one line, for failure messages.
func (s Scenario) String() string {
	var set, ch []string
	for _, x := range s.Settings {
		set = append(set, x.Name)
	}
	for _, c := range s.Changes {
		w := c.Writer
		if len(c.Knob.Path) > 0 {
			w += ":" + Pointer(c.Knob.Path)
		}
		ch = append(ch, w)
	}
	d := ""
	if s.WithDefaults {
		d = " git-has-defaults"
	}
	if s.Tracking != "" {
		d += " tracking=" + s.Tracking
	}
	if s.Helm {
		mode := s.DriftMode
		if mode == "" {
			mode = "absent"
		}
		d += " helmrelease drift=" + mode
	}
	return fmt.Sprintf("seed %d: %s%s settings[%s] changes[%s]", s.Seed, s.Object.ID, d, strings.Join(set, ","), strings.Join(ch, ","))
}

// Pointer is the JSON pointer (RFC 6901) of a path of map keys.
func Pointer(path []string) string {
	var b strings.Builder
	for _, p := range path {
		b.WriteString("/")
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(p, "~", "~0"), "/", "~1"))
	}
	return b.String()
}

// Kind is the object's kind.
func (o Object) Kind() string { return kindOf(o) }

func kindOf(o Object) string {
	for _, line := range strings.Split(o.Manifest, "\n") {
		if k, ok := strings.CutPrefix(line, "kind: "); ok {
			return strings.TrimSpace(k)
		}
	}
	return ""
}

// Name is the object's name in namespace ns.
func (o Object) Name(ns string) string {
	if o.NameTemplate != "" {
		return strings.ReplaceAll(o.NameTemplate, "NS", ns)
	}
	if o.ClusterScoped {
		return ns + "-" + o.ID
	}
	return "web"
}

// ExplainRef is the object reference explain takes.
func (o Object) ExplainRef(ns string) string { return strings.Replace(o.Ref, "NAME", o.Name(ns), 1) }

// parse returns the object's manifest for ns as a map.
func (o Object) parse(ns string) (map[string]any, error) {
	doc := strings.ReplaceAll(o.Manifest, "NAME", o.Name(ns))
	doc = strings.ReplaceAll(doc, "NS", ns)
	m := map[string]any{}
	if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
		return nil, fmt.Errorf("corpus entry %s: %w", o.ID, err)
	}
	return m, nil
}

// GitManifests returns the first commit and, when a change writes Git, the
// second (else "") of the scenario in namespace ns.
func (s Scenario) GitManifests(ns string) (first, second string, err error) {
	m, err := s.Object.parse(ns)
	if err != nil {
		return "", "", err
	}
	if s.WithDefaults {
		for _, d := range s.Object.Defaults {
			setPath(m, d.Path, d.Git)
		}
	}
	for _, st := range s.Settings {
		if st.Annotation[0] != "" {
			setPath(m, []string{"metadata", "annotations", st.Annotation[0]}, st.Annotation[1])
		}
		if st.Label[0] != "" {
			setPath(m, []string{"metadata", "labels", st.Label[0]}, st.Label[1])
		}
	}
	if first, err = render(m); err != nil {
		return "", "", err
	}
	git := false
	for _, c := range s.Changes {
		switch c.Writer {
		case WGitRemove:
			deletePath(m, c.Knob.Path)
		case WGitAdd:
			setPath(m, c.Knob.Path, c.Knob.Drift)
		case WGitDefault:
			setPath(m, c.Knob.Path, c.Knob.Git)
		default:
			continue
		}
		git = true
	}
	if !git {
		return first, "", nil
	}
	second, err = render(m)
	return first, second, err
}

// KustomizationSpec is the extra spec of the scenario's Kustomization (YAML).
func (s Scenario) KustomizationSpec(ns string) (string, error) {
	spec := map[string]any{}
	for _, st := range s.Settings {
		for k, v := range st.Spec {
			spec[k] = v
		}
	}
	if len(spec) == 0 {
		return "", nil
	}
	b, err := yaml.Marshal(spec)
	if err != nil {
		return "", err
	}
	return strings.ReplaceAll(string(b), "NS", ns), nil
}

// Cmd is one kubectl invocation.
type Cmd struct {
	Args  []string
	Stdin string
	Env   []string
}

// Command returns the kubectl call of a live change in namespace ns (ok
// false for Git changes). gitManifest is the object as Git has it (for
// client-side apply, which sends the whole object).
func (c Change) Command(o Object, ns, gitManifest string) (Cmd, bool, error) {
	ref := o.ExplainRef(ns)
	base := []string{"-n", ns}
	fm := "--field-manager=" + c.Manager
	ptr := Pointer(c.Knob.Path)
	switch c.Writer {
	case WEdit:
		old, nu := fmt.Sprint(c.Knob.Git), fmt.Sprint(c.Knob.Drift)
		return Cmd{Args: append([]string{"edit", ref}, base...),
			Env: []string{"KUBE_EDITOR=sed -i 's|" + sedQuote(old) + "|" + sedQuote(nu) + "|'"}}, true, nil
	case WPatchMerge, WPatchStrategic:
		typ := "merge"
		if c.Writer == WPatchStrategic {
			typ = "strategic"
		}
		body := map[string]any{}
		setPath(body, c.Knob.Path, c.Knob.Drift)
		b, err := json.Marshal(body)
		if err != nil {
			return Cmd{}, false, err
		}
		return Cmd{Args: append([]string{"patch", ref, "--type=" + typ, "-p", string(b), fm}, base...)}, true, nil
	case WPatchJSON:
		b, err := json.Marshal([]any{map[string]any{"op": "add", "path": ptr, "value": c.Knob.Drift}})
		if err != nil {
			return Cmd{}, false, err
		}
		return Cmd{Args: append([]string{"patch", ref, "--type=json", "-p", string(b), fm}, base...)}, true, nil
	case WScale:
		return Cmd{Args: append([]string{"scale", ref, "--replicas=4"}, base...)}, true, nil
	case WUpdateScale:
		return Cmd{Args: append([]string{"patch", ref, "--subresource=scale", "--type=merge", "-p", `{"spec":{"replicas":6}}`, fm}, base...)}, true, nil
	case WUpdateStatus:
		return Cmd{Args: append([]string{"patch", ref, "--subresource=status", "--type=merge", "-p", o.Status, fm}, base...)}, true, nil
	case WLabel, WAnnotate:
		verb := "label"
		if c.Writer == WAnnotate {
			verb = "annotate"
		}
		return Cmd{Args: append([]string{verb, ref, fmt.Sprintf("%s=%v", c.Knob.Path[2], c.Knob.Drift), "--overwrite"}, base...)}, true, nil
	case WSetImage:
		return Cmd{Args: append([]string{"set", "image", ref, "*=registry.example.com/hotfix:1"}, base...)}, true, nil
	case WSetEnv:
		return Cmd{Args: append([]string{"set", "env", ref, "DEBUG=1"}, base...)}, true, nil
	case WApplyCSA:
		m := map[string]any{}
		if err := yaml.Unmarshal([]byte(gitManifest), &m); err != nil {
			return Cmd{}, false, err
		}
		setPath(m, c.Knob.Path, c.Knob.Drift)
		doc, err := render(m)
		if err != nil {
			return Cmd{}, false, err
		}
		return Cmd{Args: append([]string{"apply", "-f", "-"}, base...), Stdin: doc}, true, nil
	case WApplySSA:
		m, err := o.parse(ns)
		if err != nil {
			return Cmd{}, false, err
		}
		meta := map[string]any{"name": o.Name(ns)}
		if !o.ClusterScoped {
			meta["namespace"] = ns
		}
		obj := map[string]any{"apiVersion": m["apiVersion"], "kind": m["kind"], "metadata": meta}
		setPath(obj, c.Knob.Path, c.Knob.Drift)
		doc, err := render(obj)
		if err != nil {
			return Cmd{}, false, err
		}
		return Cmd{Args: append([]string{"apply", "--server-side", "--force-conflicts", fm, "-f", "-"}, base...), Stdin: doc}, true, nil
	case WController:
		doc, err := o.controllerApply(ns)
		if err != nil {
			return Cmd{}, false, err
		}
		return Cmd{Args: append([]string{"apply", "--server-side", "--force-conflicts", "--field-manager=" + o.ControllerManager, "-f", "-"}, base...), Stdin: doc}, true, nil
	}
	return Cmd{}, false, nil
}

// controllerApply is the object the kind's controller applies: its
// identity and the fields of Object.Controller.
func (o Object) controllerApply(ns string) (string, error) {
	m, err := o.parse(ns)
	if err != nil {
		return "", err
	}
	meta := map[string]any{"name": o.Name(ns)}
	if !o.ClusterScoped {
		meta["namespace"] = ns
	}
	obj := map[string]any{}
	if err := yaml.Unmarshal([]byte(o.Controller), &obj); err != nil {
		return "", fmt.Errorf("corpus entry %s: controller write: %w", o.ID, err)
	}
	obj["apiVersion"], obj["kind"], obj["metadata"] = m["apiVersion"], m["kind"], meta
	return render(obj)
}

// Touched returns the JSON pointers a change writes, for the noise count:
// a field the tool lists that no change touched (and the controller did
// not change) is noise.
func (c Change) Touched(o Object) []string {
	switch c.Writer {
	case WScale, WUpdateScale:
		return []string{"/spec/replicas"}
	case WUpdateStatus:
		return []string{"/status"}
	case WSetImage:
		return []string{Pointer(o.Containers)}
	case WSetEnv:
		return []string{Pointer(o.Containers)}
	case WApplyCSA:
		return append([]string{Pointer(c.Knob.Path), "/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration"}, c.Knob.Derived...)
	case WEdit:
		return append(append([]string{Pointer(c.Knob.Path)}, c.Knob.Derived...), editTouched(o, fmt.Sprint(c.Knob.Git))...)
	case WController:
		m := map[string]any{}
		// A corpus entry's Controller is valid YAML (TestScenariosRender).
		_ = yaml.Unmarshal([]byte(o.Controller), &m)
		var out []string
		for k := range m {
			out = append(out, "/"+k)
		}
		sort.Strings(out)
		return out
	}
	return append([]string{Pointer(c.Knob.Path)}, c.Knob.Derived...)
}

// sedQuote escapes what sed's s||| would read as special.
func sedQuote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `|`, `\|`, `.`, `\.`, `*`, `\*`, `[`, `\[`, `^`, `\^`, `$`, `\$`, `&`, `\&`)
	return r.Replace(s)
}

func setPath(m map[string]any, path []string, v any) {
	for _, p := range path[:len(path)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
	m[path[len(path)-1]] = v
}

func deletePath(m map[string]any, path []string) {
	for _, p := range path[:len(path)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			return
		}
		m = next
	}
	delete(m, path[len(path)-1])
}

func render(m map[string]any) (string, error) {
	b, err := yaml.Marshal(m)
	if err != nil {
		return "", fmt.Errorf("rendering manifest: %w", err)
	}
	return string(b), nil
}

// editTouched are the pointers kubectl edit's substitution (sed, the
// first match on each line: Command) rewrites besides its knob: every leaf
// of the object whose value holds the old value, and every map with a key
// that holds it (make differential ENGINE=flux-helm seed 60575: an
// aggregated ClusterRole's selector key aggregate-to-monitoring changed
// with its label monitoring, and counted as noise).
func editTouched(o Object, old string) []string {
	m := map[string]any{}
	if old == "" || yaml.Unmarshal([]byte(o.Manifest), &m) != nil {
		return nil
	}
	var out []string
	var walk func(v any, path []string)
	walk = func(v any, path []string) {
		switch x := v.(type) {
		case map[string]any:
			for k, child := range x {
				if strings.Contains(k, old) && len(path) > 0 {
					out = append(out, Pointer(path))
				}
				walk(child, append(slices.Clone(path), k))
			}
		case []any:
			for i, child := range x {
				walk(child, append(slices.Clone(path), strconv.Itoa(i)))
			}
		default:
			if strings.Contains(fmt.Sprint(x), old) && len(path) > 0 {
				out = append(out, Pointer(path))
			}
		}
	}
	walk(m, nil)
	sort.Strings(out)
	return slices.Compact(out)
}
