package output

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// fluxCleanup is kustomize-controller's managedFields cleanup reason as the
// Flux judge words it (internal/flux/judge.go), for the field's manager.
func fluxCleanup(manager string) string {
	return "set by " + manager + " (Update): the apply resets it to the manifest or removes it on its next reconcile (interval 10m), " +
		`because kustomize-controller first merges "kubectl" Update entries ` +
		"(kubectl edit/patch/apply/set/label, not kubectl scale: it writes through the scale subresource, which the cleanup skips) " +
		"into its own (managedFields cleanup); unless Git marks the object reconcile: disabled or ssa: Ignore (not visible live; give -f to know)"
}

// demoInferred is what make demo explains (hack/demo.sh): applied as
// kustomize-controller, then annotated, labelled, scaled, image-set and
// edited by hand; the desired state inferred from managedFields.
func demoInferred() *model.Report {
	r := model.NewReport(model.ResourceID{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "demo-drift", Name: "web"}, model.SourceManagedFields)
	o := fluxOwner()
	o.Name, o.Mode = "demo-apps", "server-side apply, drift corrected, prune"
	r.Owners = []model.Owner{o}
	field := func(ptr, path string, change model.ChangeKind, live any, manager, sub string) model.FieldDrift {
		m := model.ManagerRef{Manager: manager, Operation: "Update", Subresource: sub, Class: model.CauseManual}
		if sub == "" {
			m.Time = at("2026-12-02T14:59:00Z")
		}
		v := model.Verdict{Engine: "flux", Kind: model.Reverted, Reason: fluxCleanup(manager)}
		if sub != "" {
			v = model.Verdict{Engine: "flux", Kind: model.Unknown, Reason: "owned by " + manager + " (Update /scale), not by kustomize-controller: " +
				"reverted if the manifest sets it, left alone otherwise; give -f or --server-dry-run to know"}
		}
		return model.FieldDrift{Path: ptr, FieldPath: path, Change: change, Live: live, Managers: []model.ManagerRef{m},
			Cause: model.CauseManual, Verdicts: []model.Verdict{v}}
	}
	r.Drifts = []model.FieldDrift{
		field("/metadata/annotations/oncall", ".metadata.annotations.oncall", model.Added, "paged", "kubectl-annotate", ""),
		field("/metadata/labels/hotfix", ".metadata.labels.hotfix", model.Added, "true", "kubectl-label", ""),
		field("/spec/replicas", ".spec.replicas", model.Changed, int64(5), "kubectl", "scale"),
		field("/spec/template/spec/containers/0/image", ".spec.template.spec.containers[name=app].image", model.Changed, "nginx:1.28", "kubectl-set", ""),
		field("/spec/template/spec/containers/1/image", ".spec.template.spec.containers[name=sidecar].image", model.Changed, "busybox:1.37", "kubectl-edit", ""),
	}
	return r
}

// demoBothEngines is the demo object also tracked by an Argo CD
// Application with self-heal: two engines judge every field.
func demoBothEngines() *model.Report {
	r := demoInferred()
	r.Owners = append(r.Owners, model.Owner{Engine: "argocd", Kind: "Application", Namespace: "argocd", Name: "demo",
		Via: "annotation argocd.argoproj.io/tracking-id", Found: true, AutoSync: true, SelfHeal: true})
	for i := range r.Drifts {
		d := &r.Drifts[i]
		v := model.Verdict{Engine: "argocd", Kind: model.Reverted,
			Reason: "argocd-controller no longer owns the field (" + d.Managers[0].Manager + " took it over): OutOfSync, and self-heal syncs it back"}
		if d.Change == model.Added {
			v = model.Verdict{Engine: "argocd", Kind: model.LeftAlone, Reason: "not in the last applied manifest: Argo CD's diff does not see a live-only key"}
		}
		d.SetVerdict(v)
	}
	return r
}

// TestTextFitsTheTerminal is the acceptance of issue 34: at 80, 100 and 120
// columns no line of the default text view is wider than the terminal,
// each reason is said once with its fields under it, and the goldens
// (reviewed line by line) show what a reader sees.
func TestTextFitsTheTerminal(t *testing.T) {
	cases := []struct {
		name   string
		report func() *model.Report
	}{
		{"explain-inferred-flux", demoInferred},
		{"explain-file-both-engines", fileBothEngines},
		{"explain-inferred-both-engines", demoBothEngines},
	}
	for _, tc := range cases {
		for _, width := range []int{80, 100, 120} {
			name := fmt.Sprintf("%s-%dcol", tc.name, width)
			t.Run(name, func(t *testing.T) {
				r := tc.report()
				r.Sort()
				var buf bytes.Buffer
				if err := PrintReport(&buf, r, Options{Width: width, Now: func() time.Time { return now }}); err != nil {
					t.Fatal(err)
				}
				out := buf.String()
				for _, l := range strings.Split(out, "\n") {
					if n := utf8.RuneCountInString(l); n > width {
						t.Errorf("line is %d columns at %d: %q", n, width, l)
					}
				}
				assertReasonsOnce(t, tc.report(), out)
				golden(t, name, buf.Bytes())
			})
		}
	}
}

// assertReasonsOnce checks that each engine/verdict/reason is printed once:
// the grouping made one paragraph of the reasons that differ by their
// manager only, so the Why section has as many paragraphs as distinct
// reasons with the managers taken out, and every field with a reason is
// listed under one of them per engine.
func assertReasonsOnce(t *testing.T, r *model.Report, out string) {
	t.Helper()
	distinct := map[string]bool{}
	listed := 0
	for _, d := range r.Drifts {
		for _, v := range d.Verdicts {
			if v.Reason == "" {
				continue
			}
			listed++
			reason := v.Reason
			for _, m := range d.Managers {
				reason = strings.ReplaceAll(reason, m.Manager, "\x00")
			}
			distinct[string(v.Engine)+string(v.Kind)+reason] = true
		}
	}
	why := out[strings.Index(out, "\nWhy:\n"):]
	if i := strings.Index(why, "\nNotes:\n"); i >= 0 {
		why = why[:i]
	}
	paragraphs := 0
	fields := 0
	for _, l := range strings.Split(why, "\n") {
		switch {
		case strings.HasPrefix(l, "["):
			paragraphs++
		case strings.HasPrefix(strings.TrimLeft(l, " "), "- "):
			fields++
		}
	}
	if paragraphs != len(distinct) {
		t.Errorf("%d reason paragraphs, want %d (one per distinct reason):\n%s", paragraphs, len(distinct), why)
	}
	if fields != listed {
		t.Errorf("%d fields listed under the reasons, want %d:\n%s", fields, listed, why)
	}
	if n := strings.Count(out, "managedFields cleanup"); n > 1 {
		t.Errorf("the cleanup reason is printed %d times:\n%s", n, out)
	}
}

// -o wide (Wide, no width) cuts nothing: every reason whole on one line,
// the timestamps, every column.
func TestWideKeepsEverything(t *testing.T) {
	r := demoInferred()
	r.Sort()
	var buf bytes.Buffer
	if err := PrintReport(&buf, r, Options{Wide: true, Width: 80, Now: func() time.Time { return now }}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"CAUSE", "CHANGED BY", ".spec.template.spec.containers[name=sidecar].image", "(2026-12-02T14:59:00Z)",
		"(not visible live; give -f to know)", "set by kubectl-annotate, kubectl-label, kubectl-set, kubectl-edit (Update): the apply resets it"} {
		if !strings.Contains(out, want) {
			t.Errorf("-o wide lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "…") {
		t.Errorf("-o wide cut something:\n%s", out)
	}
}

// --why prints the reasons whole but still fits the width.
func TestWhyPrintsReasonsWhole(t *testing.T) {
	r := demoInferred()
	r.Sort()
	var buf bytes.Buffer
	if err := PrintReport(&buf, r, Options{Why: true, Width: 80, Now: func() time.Time { return now }}); err != nil {
		t.Fatal(err)
	}
	flat := strings.Join(strings.Fields(buf.String()), " ")
	if !strings.Contains(flat, "(not visible live; give -f to know)") || strings.Contains(flat, "cut to three lines") {
		t.Errorf("--why did not print the reason whole:\n%s", buf.String())
	}
}

// FitTable shortens to the columns' minimum first, then drops by rank, and
// cuts a path below its minimum only when nothing is left to drop.
func TestFitTableDropsInOrder(t *testing.T) {
	cols := func(min int) []Column {
		return []Column{{Name: "FIELD", Shrink: CutMiddle, Min: min}, {Name: "A", Drop: 2}, {Name: "B", Drop: 1}, {Name: "V"}}
	}
	rows := [][]string{{"FIELD", "A", "B", "V"}, {strings.Repeat("f", 20), strings.Repeat("a", 10), strings.Repeat("b", 10), "reverted"}}
	// 54 columns wide.
	kept, got := FitTable(cols(10), rows, 44)
	if len(kept) != 4 || got[1][0] != "ffff…fffff" {
		t.Errorf("at 44, FIELD min 10: kept %v, rows %q; want FIELD cut to 10, nothing dropped", kept, got)
	}
	kept, got = FitTable(cols(20), rows, 44)
	if len(kept) != 3 || kept[1].Name != "A" || got[1][0] != rows[1][0] {
		t.Errorf("at 44, FIELD min 20: kept %v, rows %q; want B dropped first and FIELD whole", kept, got)
	}
	kept, got = FitTable(cols(20), rows, 20)
	if len(kept) != 2 || utf8.RuneCountInString(got[1][0]) > 10 || !strings.Contains(got[1][0], "…") {
		t.Errorf("at 20: kept %v, rows %q; want A and B dropped and FIELD cut below its min", kept, got)
	}
	if _, same := FitTable(cols(10), rows, 0); same[1][0] != rows[1][0] || len(same[1]) != 4 {
		t.Errorf("width 0 changed the table: %q", same)
	}
}

func TestShorten(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		how  Shrink
		want string
	}{
		{".spec.template.spec.containers[name=app].image", 20, CutMiddle, ".spec.tem…app].image"},
		{"nginx:1.28-alpine", 8, CutEnd, "nginx:1…"},
		{"short", 8, CutMiddle, "short"},
	} {
		if got := Shorten(tc.s, tc.n, tc.how); got != tc.want || utf8.RuneCountInString(got) > tc.n {
			t.Errorf("Shorten(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}
