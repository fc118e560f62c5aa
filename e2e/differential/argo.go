package differential

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
)

// Argo CD scenarios (DrawArgo): the object, writers and Git commits of
// Draw(seed), with Argo CD settings in place of the Flux ones. The settings
// come from a random stream of their own, so the Flux scenario of a seed
// (and the saved Flux cases, which name settings by index) stays as it is.

// Tracking methods of argocd-cm application.resourceTrackingMethod.
var argoTracking = []string{"annotation", "label", "annotation+label"}

// DrawArgo returns the Argo CD scenario of seed: Draw(seed)'s object and
// changes, Application settings (ignoreDifferences by JSON pointer, jq
// path or managedFieldsManagers; RespectIgnoreDifferences and
// ServerSideApply sync options; the ServerSideDiff compare option;
// automated sync with selfHeal), each with its own chance, and a tracking
// method. Same seed, same scenario.
func DrawArgo(seed uint64) Scenario {
	s := Draw(seed)
	r := rand.New(rand.NewPCG(seed, 0xa76c0d1ff5e7e11))
	s.Settings = nil
	for _, st := range argoSettingsFor(s, r) {
		chance := 5
		if st.SelfHeal {
			// The truth changes most with selfHeal (the object after
			// self-heal is judged too): drawn more often.
			chance = 2
		}
		if r.IntN(chance) == 0 {
			s.Settings = append(s.Settings, st)
		}
	}
	s.Tracking = argoTracking[r.IntN(len(argoTracking))]
	return s
}

func argoSettingsFor(s Scenario, r *rand.Rand) []Setting {
	o := s.Object
	// An ignore rule matters where a writer writes: most rules name a
	// field a change of the scenario touches, the others a knob of the
	// object.
	var touched []string
	managers := []string{}
	for _, c := range s.Changes {
		// The fields a writer touched, without those the API server
		// derived (added to Touched later: the seeds keep their rules).
		touched = append(touched, slices.DeleteFunc(c.Touched(o), func(p string) bool { return slices.Contains(c.Knob.Derived, p) })...)
		if !c.Git() && c.Manager != "" {
			managers = append(managers, c.Manager)
		}
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
	ptr, jqPtr := pick(), pick()
	manager := "kubectl-patch"
	if len(managers) > 0 {
		manager = managers[r.IntN(len(managers))]
	}
	rule := func(k string, v any) map[string]any {
		m := map[string]any{"kind": kindOf(o), k: v}
		if o.Group != "" {
			m["group"] = o.Group
		}
		return m
	}
	return []Setting{
		{Name: "ignore-pointer", IgnoreDifference: rule("jsonPointers", []any{ptr})},
		{Name: "ignore-jq", IgnoreDifference: rule("jqPathExpressions", []any{JQPath(jqPtr)})},
		{Name: "ignore-managers", IgnoreDifference: rule("managedFieldsManagers", []any{manager})},
		{Name: "respect-ignore", SyncOption: "RespectIgnoreDifferences=true"},
		{Name: "server-side-apply", SyncOption: "ServerSideApply=true"},
		{Name: "server-side-diff", CompareOption: "ServerSideDiff=true"},
		{Name: "self-heal", SelfHeal: true},
	}
}

var jqIdent = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// JQPath is the jq path expression of a JSON pointer of map keys
// (".metadata.labels[\"app.kubernetes.io/part-of\"]").
func JQPath(ptr string) string {
	var b strings.Builder
	for _, p := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		p = strings.ReplaceAll(strings.ReplaceAll(p, "~1", "/"), "~0", "~")
		if jqIdent.MatchString(p) {
			b.WriteString("." + p)
		} else {
			fmt.Fprintf(&b, "[%q]", p)
		}
	}
	return b.String()
}

// ArgoApp is what a scenario's settings put on its Application.
type ArgoApp struct {
	IgnoreDifferences []any
	SyncOptions       []string
	CompareOptions    []string
	SelfHeal          bool
}

// ArgoApp collects the Application settings of the scenario.
func (s Scenario) ArgoApp() ArgoApp {
	var a ArgoApp
	for _, st := range s.Settings {
		if st.IgnoreDifference != nil {
			a.IgnoreDifferences = append(a.IgnoreDifferences, st.IgnoreDifference)
		}
		if st.SyncOption != "" {
			a.SyncOptions = append(a.SyncOptions, st.SyncOption)
		}
		if st.CompareOption != "" {
			a.CompareOptions = append(a.CompareOptions, st.CompareOption)
		}
		a.SelfHeal = a.SelfHeal || st.SelfHeal
	}
	return a
}

// ArgoField is a field the tool named, with Resync: Argo CD's diff hides
// it, yet the tool says a sync of the OutOfSync object writes it back
// (or deletes it); Kept: Argo CD's diff shows it, yet the tool says a
// sync leaves it as it is (the object stays OutOfSync); ShownSynced: the
// tool says Argo CD's shown diff lists it while the resource is Synced
// (argocd.ShownWhileSyncedPhrase).
type ArgoField struct {
	Field
	Resync      bool
	Kept        bool
	ShownSynced bool
}

// ArgoTruth is what Argo CD said and did about one object.
type ArgoTruth struct {
	// Diff are the JSON pointers where Argo CD's predictedLiveState and
	// normalizedLiveState differ after a hard refresh (its diff).
	Diff []string
	// OutOfSync is the Application's sync status then.
	OutOfSync bool
	// SelfHeal: automated sync with selfHeal ran after the tool, and
	// Healed are the pointers it changed.
	SelfHeal bool
	Healed   []string
	// SyncFailed is the message of a self-heal sync that failed ("" when
	// it succeeded or did not run).
	SyncFailed string
	// SecretShownSynced: the object is a Secret, the Application is
	// Synced, and Diff is the diff Argo CD shows for it (controller/
	// appcontroller.go hideSecretData recomputes a Secret's diff
	// client-side, whatever the status diff was): what it lists is shown,
	// not drift (A22, differential seed 53260).
	SecretShownSynced bool
}

// ScoreArgo judges the tool's fields for one object and mode against Argo
// CD. A field is drift for the tool when its verdict is reported or
// reverted (Argo CD's OutOfSync); Resync marks a field hidden from the
// diff that the tool says a sync of the OutOfSync object writes back.
// What a sync does is the verdict's kind: reverted (and Resync) say a sync
// writes the field back, reported says Argo CD shows it and a sync leaves
// it as it is (model.Reported: "reports drift but does not revert"; e.g.
// RespectIgnoreDifferences copies live's value into the sync, or the API
// server sets the field again), so with selfHeal a reported field that
// self-heal kept agrees and one it changed is wrong.
//
//   - wrong: drift for the tool and not in Argo's diff, or in Argo's diff
//     and a kept verdict (left-alone, ignored...); where selfHeal ran, a
//     field it changed that the tool said stays, or one the tool said a
//     sync writes back that it kept (or whose sync failed); the exit code
//     against OutOfSync (1 also for an unknown verdict, as the tool's
//     help says);
//   - missed: a field Argo's diff shows or self-heal changed that the tool
//     did not name, called unknown, or named with no Argo CD verdict;
//   - noise: a field listed, not in Argo's diff, not changed by self-heal,
//     that no writer touched.
func ScoreArgo(fields []ArgoField, truth ArgoTruth, touched []string, exitCode int) []Finding {
	var out []Finding
	named := make([]string, 0, len(fields))
	unknown := false
	healOK := truth.SelfHeal && truth.SyncFailed == ""
	for _, f := range fields {
		named = append(named, f.Path)
		shown := related(f.Path, truth.Diff)
		var healed []string
		if truth.SelfHeal {
			healed = related(f.Path, truth.Healed)
		}
		drift := f.Verdict == "reported" || f.Verdict == "reverted"
		writesBack := f.Verdict == "reverted" && !f.Kept || f.Resync
		if truth.SecretShownSynced && !truth.OutOfSync && len(shown) > 0 {
			out = append(out, scoreShownSynced(f, shown, drift))
			continue
		}
		switch {
		case f.Verdict == "none" && (len(shown) > 0 || len(healed) > 0):
			// Named, but with no Argo CD verdict at all (the tool found no
			// Application tracking the object): no claim about Argo CD, a
			// blind spot like a field not named.
			out = append(out, Finding{f.Path, Missed, "tool: no Argo CD verdict; Argo CD's diff shows " + strings.Join(append(shown, healed...), " ")})
		case f.Verdict == "unknown":
			unknown = true
			if len(shown) > 0 || len(healed) > 0 {
				out = append(out, Finding{f.Path, Missed, "tool: unknown; Argo CD's diff shows " + strings.Join(append(shown, healed...), " ")})
			} else {
				out = append(out, Finding{f.Path, Unknown, "tool: unknown"})
			}
		case drift && len(shown) == 0:
			out = append(out, Finding{f.Path, Wrong, "tool: " + f.Verdict + "; Argo CD's diff does not show it"})
		case !drift && len(shown) > 0:
			out = append(out, Finding{f.Path, Wrong, fmt.Sprintf("tool: %s; Argo CD's diff shows %s", f.Verdict, strings.Join(shown, " "))})
		case truth.SelfHeal && writesBack && truth.SyncFailed != "":
			out = append(out, Finding{f.Path, Wrong, "tool: " + f.Verdict + " (a sync writes it back); the self-heal sync failed: " + truth.SyncFailed})
		case healOK && !writesBack && len(healed) > 0:
			out = append(out, Finding{f.Path, Wrong, fmt.Sprintf("tool: %s; self-heal changed %s", f.Verdict, strings.Join(healed, " "))})
		case healOK && writesBack && len(healed) == 0:
			out = append(out, Finding{f.Path, Wrong, "tool: " + f.Verdict + " (a sync writes it back); self-heal kept it"})
		case !drift && len(healed) == 0 && len(related(f.Path, touched)) == 0:
			out = append(out, Finding{f.Path, Noise, "tool: " + f.Verdict + "; no writer touched it, Argo CD neither shows nor changes it"})
		default:
			out = append(out, Finding{f.Path, Agreed, ""})
		}
	}
	for _, p := range truth.Diff {
		if len(related(p, named)) == 0 {
			out = append(out, Finding{p, Missed, "Argo CD's diff shows it; the tool named nothing there"})
		}
	}
	if truth.SelfHeal {
		for _, p := range truth.Healed {
			if len(related(p, named)) == 0 && len(related(p, truth.Diff)) == 0 {
				out = append(out, Finding{p, Missed, "self-heal changed it; the tool named nothing there"})
			}
		}
	}
	if want := truth.OutOfSync || unknown; (exitCode == 1) != want {
		// As in Score: exit 0 on an OutOfSync object whose diff the tool
		// named none of is the blind spot of those fields (missed).
		class := Wrong
		if exitCode == 0 && !slices.ContainsFunc(truth.Diff, func(p string) bool { return len(related(p, named)) > 0 }) {
			class = Missed
		}
		status := map[bool]string{true: "OutOfSync", false: "Synced"}[truth.OutOfSync]
		out = append(out, Finding{"exit", class, fmt.Sprintf("explain exited %d; Argo CD says %s", exitCode, status)})
	}
	return out
}

// scoreShownSynced scores a field the diff Argo CD shows for a Synced
// Secret lists: shown, not drift. The tool agrees when it names the field
// as not drift and says Argo CD's diff lists it; a field named without
// saying so is missed (the user is not told why argocd app diff shows
// it), one called drift is wrong (Argo CD is Synced).
func scoreShownSynced(f ArgoField, shown []string, drift bool) Finding {
	switch {
	case drift:
		return Finding{f.Path, Wrong, "tool: " + f.Verdict + "; Argo CD is Synced (its Secret diff shows " + strings.Join(shown, " ") + ", its status diff does not)"}
	case f.Verdict == "none" || f.Verdict == "unknown" || !f.ShownSynced:
		return Finding{f.Path, Missed, "tool: " + f.Verdict + " without saying that Argo CD's diff of this Synced Secret shows " + strings.Join(shown, " ")}
	}
	return Finding{f.Path, Agreed, ""}
}

// related returns the pointers of set that name p, hold it or lie in it.
func related(p string, set []string) []string {
	var out []string
	for _, s := range set {
		if Related(p, s) {
			out = append(out, s)
		}
	}
	return out
}
