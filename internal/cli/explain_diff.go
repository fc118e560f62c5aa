package cli

import (
	"errors"
	"io"
	"sort"
	"strings"

	"github.com/sergi/go-diff/diffmatchpatch"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/model/jsonpointer"
	"github.com/kubectl-drift/kubectl-drift/internal/redact"
)

// outputDiff is explain's -o diff.
const outputDiff = "diff"

// errDiffInferred: inferred from managedFields, the desired values are not
// known, so there is nothing to diff against.
var errDiffInferred = errors.New("-o diff needs the desired values: give -f, -k or --source (inferred from managedFields, only who changed a field is known)")

// ANSI colours of diff lines, as git diff and kubectl diff with a colour
// pager show them; only on a terminal without NO_COLOR (output.ColorEnabled).
const (
	diffRed   = "\x1b[31m"
	diffGreen = "\x1b[32m"
	diffCyan  = "\x1b[36m"
	diffReset = "\x1b[0m"
)

// printDiff is explain -o diff: a unified diff per object of the live
// object (LIVE) against the live object with the report's drifted fields
// set to their desired values (MERGED), as kubectl diff shows live against
// what an apply would make it; managedFields left out as kubectl diff does.
// Each hunk's header names the fields it holds and each engine's verdict on
// them. KUBECTL_EXTERNAL_DIFF, when set, gets the two objects instead (same
// runner as normalize --diff). A Secret's values are masked on both sides.
func (o *ExplainOptions) printDiff(live *unstructured.Unstructured, r *model.Report) error {
	if r.DesiredSource == model.SourceManagedFields {
		return failure(errDiffInferred)
	}
	before := live.DeepCopy()
	unstructured.RemoveNestedField(before.Object, "metadata", "managedFields")
	after := before.DeepCopy()
	applyDrifts(after.Object, r.Drifts)
	redact.Pair(before.Object, after.Object)
	if ext := strings.TrimSpace(o.getenv("KUBECTL_EXTERNAL_DIFF")); ext != "" {
		err := externalDiff(ext, o.Out, o.ErrOut, "drift-explain-", before, after)
		if errors.Is(err, errDrift) {
			return nil // the verdicts decide the exit code, as for text
		}
		return err
	}
	a, err := objectYAML(before)
	if err != nil {
		return failure(err)
	}
	b, err := objectYAML(after)
	if err != nil {
		return failure(err)
	}
	if a == b {
		return nil
	}
	// Where each drifted field changes the LIVE file: its own diff's
	// positions, so a hunk is labelled with exactly the fields inside it.
	at := make([][]int, len(r.Drifts))
	for i, d := range r.Drifts {
		one := before.DeepCopy()
		applyDrifts(one.Object, []model.FieldDrift{d})
		// Never printed: only its line positions are used.
		y, err := objectYAML(one)
		if err != nil {
			return failure(err)
		}
		at[i] = changedAt(diffLines(a, y))
	}
	name := diffFileName(before)
	var out strings.Builder
	out.WriteString(o.diffStyle(diffReset, "--- LIVE/"+name) + "\n" + o.diffStyle(diffReset, "+++ MERGED/"+name) + "\n")
	for _, h := range diffHunks(diffLines(a, b), 3) {
		head := h.header()
		if label := hunkLabel(h, r.Drifts, at); label != "" {
			head += " " + label
		}
		out.WriteString(o.diffStyle(diffCyan, head) + "\n")
		for _, l := range h.lines {
			code := ""
			switch l.op {
			case diffmatchpatch.DiffDelete:
				code = diffRed
			case diffmatchpatch.DiffInsert:
				code = diffGreen
			}
			out.WriteString(o.diffStyle(code, l.String()) + "\n")
		}
	}
	if _, err := io.WriteString(o.Out, out.String()); err != nil {
		return failure(err)
	}
	return nil
}

func (o *ExplainOptions) diffStyle(code, s string) string {
	if !o.color || code == "" || code == diffReset {
		return s
	}
	return code + s + diffReset
}

// changedAt lists the LIVE lines (1-based) a line diff deletes or inserts
// before.
func changedAt(ls []diffLine) []int {
	var at []int
	n := 1
	for _, l := range ls {
		switch l.op {
		case diffmatchpatch.DiffEqual:
			n++
		case diffmatchpatch.DiffDelete:
			at = append(at, n)
			n++
		case diffmatchpatch.DiffInsert:
			at = append(at, n)
		}
	}
	return at
}

// hunkLabel names the drifted fields whose changes fall in the hunk, with
// each engine's verdict: ".spec.replicas (flux: reverted, argocd: ignored)".
func hunkLabel(h diffHunk, drifts []model.FieldDrift, at [][]int) string {
	var parts []string
	for i, d := range drifts {
		for _, n := range at[i] {
			if n >= h.as && n <= h.as+h.an {
				parts = append(parts, fieldLabel(d))
				break
			}
		}
	}
	return strings.Join(parts, "; ")
}

func fieldLabel(d model.FieldDrift) string {
	name := d.FieldPath
	if name == "" {
		name = d.Path
	}
	if len(d.Verdicts) == 0 {
		return name
	}
	vs := make([]string, 0, len(d.Verdicts))
	for _, v := range d.Verdicts {
		vs = append(vs, string(v.Engine)+": "+string(v.Kind))
	}
	return name + " (" + strings.Join(vs, ", ") + ")"
}

// applyDrifts sets each drifted field of obj (the live object) to its
// desired value: a changed or removed field takes the desired value, an
// added one is deleted. Removals from lists go last and from the highest
// index down, so the indexes of the others still hold.
func applyDrifts(obj map[string]any, drifts []model.FieldDrift) {
	ds := append([]model.FieldDrift(nil), drifts...)
	sort.SliceStable(ds, func(i, j int) bool {
		ai, aj := ds[i].Change == model.Added, ds[j].Change == model.Added
		if ai != aj {
			return aj
		}
		if ai {
			return ds[i].Path > ds[j].Path
		}
		return ds[i].Path < ds[j].Path
	})
	for _, d := range ds {
		tokens, err := jsonpointer.Parse(d.Path)
		if err != nil || len(tokens) == 0 {
			continue
		}
		setPointer(obj, tokens, d.Desired, d.Change)
	}
}

// setPointer writes v at tokens under doc (or deletes there for an added
// field); a removed list item is inserted at its index.
func setPointer(doc any, tokens []string, v any, change model.ChangeKind) any {
	if len(tokens) == 0 {
		return v
	}
	tok := tokens[0]
	switch t := doc.(type) {
	case map[string]any:
		if len(tokens) == 1 {
			if change == model.Added {
				delete(t, tok)
			} else {
				t[tok] = v
			}
			return t
		}
		child, ok := t[tok]
		if !ok {
			child = map[string]any{}
		}
		t[tok] = setPointer(child, tokens[1:], v, change)
		// A map emptied by removing an added field goes too, as the
		// apply leaves no "annotations: {}" behind.
		if m, isMap := t[tok].(map[string]any); isMap && len(m) == 0 && change == model.Added {
			delete(t, tok)
		}
		return t
	case []any:
		i, ok := jsonpointer.Index(tok, len(t))
		if !ok {
			if tok != "-" && !(len(tokens) == 1 && change == model.Removed) {
				return t
			}
			i = len(t)
		}
		if len(tokens) == 1 {
			switch {
			case change == model.Added && i < len(t):
				return append(t[:i:i], t[i+1:]...)
			case change == model.Removed:
				return append(t[:i:i], append([]any{v}, t[i:]...)...)
			case i < len(t):
				t[i] = v
			}
			return t
		}
		if i < len(t) {
			t[i] = setPointer(t[i], tokens[1:], v, change)
		}
		return t
	}
	return doc
}
