package differential

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Field is one field the tool named, with its verdict for the engine
// ("reverted", "ignored", "left-alone", "apply-fails", "unknown", ...).
type Field struct {
	Path    string
	Verdict string
}

// Truth is what the controller did to one object.
type Truth struct {
	// Changed are the JSON pointers the controller changed between the
	// tool's run and the end of two reconciles.
	Changed []string
	// ApplyFailed: the Kustomization (HelmRelease) reported Ready=False.
	ApplyFailed bool
	// Reported is helm-controller's Drifted condition of a HelmRelease
	// whose driftDetection.mode is warn (nil otherwise): drift it
	// reports and does not correct, which moves no field.
	Reported *bool
}

// Outcome classes of one field verdict.
const (
	Agreed  = "agreed"
	Wrong   = "wrong"
	Missed  = "missed"
	Noise   = "noise"
	Unknown = "unknown"
)

// Finding is one scored field (or the exit code, Path "exit").
type Finding struct {
	Path, Class, Detail string
}

// Score judges the tool's fields for one object and mode against the
// controller's truth. touched are the pointers the scenario's writers
// wrote. exitCode is the tool's; acts says whether a verdict of the tool
// claims action without a field change (reported, unknown, apply-fails).
func Score(fields []Field, truth Truth, touched []string, exitCode int) []Finding {
	var out []Finding
	named := make([]string, 0, len(fields))
	acts := false
	for _, f := range fields {
		named = append(named, f.Path)
		var moved []string
		for _, p := range truth.Changed {
			if Related(f.Path, p) {
				moved = append(moved, p)
			}
		}
		switch f.Verdict {
		case "unknown", "reported", "apply-fails":
			acts = true
		}
		switch {
		case f.Verdict == "unknown" && len(moved) > 0:
			// The controller acted on it: unknown there is a blind spot,
			// never an agreement (issue 30).
			out = append(out, Finding{f.Path, Missed, "tool: unknown; the controller changed " + strings.Join(moved, " ")})
		case f.Verdict == "unknown":
			out = append(out, Finding{f.Path, Unknown, "tool: unknown"})
		case f.Verdict == "apply-fails" && !truth.ApplyFailed:
			out = append(out, Finding{f.Path, Wrong, "tool: apply-fails; the Kustomization stayed Ready"})
		case f.Verdict == "apply-fails":
			out = append(out, Finding{f.Path, Agreed, ""})
		case f.Verdict == "reported" && truth.Reported != nil && !*truth.Reported:
			out = append(out, Finding{f.Path, Wrong, "tool: reported; the HelmRelease reports no drift (Drifted=False)"})
		case f.Verdict == "reverted" && len(moved) == 0:
			out = append(out, Finding{f.Path, Wrong, "tool: reverted; the controller left it"})
		case f.Verdict != "reverted" && len(moved) > 0:
			out = append(out, Finding{f.Path, Wrong, fmt.Sprintf("tool: %s; the controller changed %s", f.Verdict, strings.Join(moved, " "))})
		case len(moved) == 0 && !anyRelated(f.Path, touched):
			// Kept and agreed, but nobody wrote it: the tool lists a
			// difference only the engine and the API server made.
			out = append(out, Finding{f.Path, Noise, "tool: " + f.Verdict + "; no writer touched it"})
		default:
			out = append(out, Finding{f.Path, Agreed, ""})
		}
	}
	for _, p := range truth.Changed {
		if !anyRelated(p, named) {
			out = append(out, Finding{p, Missed, "the controller changed it; the tool named nothing there"})
		}
	}
	reported := truth.Reported != nil && *truth.Reported
	if reported && !slices.ContainsFunc(fields, func(f Field) bool { return f.Verdict == "reported" || f.Verdict == "unknown" }) {
		// helm-controller reports drift of the object (it holds one
		// object) and the tool names no field it reports.
		class, detail := Missed, "the HelmRelease reports drift (Drifted=True); the tool named nothing there"
		if len(fields) > 0 {
			class, detail = Wrong, "the HelmRelease reports drift (Drifted=True); the tool reports no field"
		}
		out = append(out, Finding{"drifted", class, detail})
	}
	if want := len(truth.Changed) > 0 || acts || reported; (exitCode == 1) != want {
		// An exit 0 where the controller changed only fields the tool did
		// not name is the same blind spot as those fields (missed, e.g.
		// inferred mode cannot see Git); any other mismatch is wrong.
		class := Wrong
		// A field named but not reported where helm-controller reports
		// drift is a wrong answer, not a blind spot.
		if exitCode == 0 && !acts && !slices.ContainsFunc(truth.Changed, func(p string) bool { return anyRelated(p, named) }) &&
			(!reported || len(fields) == 0) {
			class = Missed
		}
		out = append(out, Finding{"exit", class, fmt.Sprintf("explain exited %d; the controller changed %d fields", exitCode, len(truth.Changed))})
	}
	return out
}

// Related says whether two pointers name the same field or one holds the
// other.
func Related(a, b string) bool {
	return a == b || strings.HasPrefix(b, a+"/") || strings.HasPrefix(a, b+"/")
}

func anyRelated(p string, set []string) bool {
	for _, s := range set {
		if Related(p, s) {
			return true
		}
	}
	return false
}

// Tally counts outcomes; keys are free-form groupings (mode, kind, writer).
type Tally struct {
	Cases                                 int
	Agreed, Wrong, Missed, Noise, Unknown int
}

// Add counts one finding.
func (t *Tally) Add(class string) {
	switch class {
	case Agreed:
		t.Agreed++
	case Wrong:
		t.Wrong++
	case Missed:
		t.Missed++
	case Noise:
		t.Noise++
	case Unknown:
		t.Unknown++
	}
}

// Table renders tallies by key as a Markdown table.
func Table(title string, by map[string]*Tally) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| %s | agreed | wrong | missed | noise | unknown |\n|---|---|---|---|---|---|\n", title)
	keys := make([]string, 0, len(by))
	for k := range by {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		x := by[k]
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d |\n", k, x.Agreed, x.Wrong, x.Missed, x.Noise, x.Unknown)
	}
	return b.String()
}
