package argocd

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-drift/kubectl-drift/internal/drift"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// capturedReport runs explain's pipeline on a case of the differential
// run against Argo CD v3.2.11 (testdata/differential/SEED, README.md there):
// with the desired state from Git (-f) or without it (inferred).
func capturedReport(t *testing.T, seed string, withGit bool) *model.Report {
	t.Helper()
	dir := filepath.Join("testdata/differential", seed)
	var inputs []Input
	for _, f := range []string{"application.yaml", "argocd-cm.yaml"} {
		inputs = append(inputs, Input{Object: readTestObject(t, filepath.Join(dir, f)), File: filepath.Join(dir, f)})
	}
	parser, err := parityParser()
	if err != nil {
		t.Fatal(err)
	}
	a, err := New(Options{Inputs: inputs, GVKParser: parser})
	if err != nil {
		t.Fatal(err)
	}
	req := drift.Request{Live: readTestObject(t, filepath.Join(dir, "live.json")), Engine: string(Engine), Adapters: []model.Adapter{a}}
	if withGit {
		req.Desired, req.Source = readTestObject(t, filepath.Join(dir, "desired.yaml")), model.SourceFile
	}
	rep, err := drift.Explain(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// fieldVerdicts is path -> verdict kind of Argo CD, for every field listed.
func fieldVerdicts(rep *model.Report) map[string]model.VerdictKind {
	out := map[string]model.VerdictKind{}
	for _, d := range rep.Drifts {
		out[d.Path] = "none"
		if v := verdictOf(d, Engine); v != nil {
			out[d.Path] = v.Kind
		}
	}
	return out
}

func objectStatusOf(rep *model.Report) string {
	s, _ := rep.StatusOf(Engine)
	return s.Status
}

func sameVerdicts(got, want map[string]model.VerdictKind) bool {
	if len(got) != len(want) {
		return false
	}
	for p, k := range want {
		if got[p] != k {
			return false
		}
	}
	return true
}

// TestCRDTargetHasNoTrackingMarks (class A1 of docs/verdicts.md): Argo CD
// never puts its tracking marks on a CustomResourceDefinition, so their
// absence is no difference. Captured: 20083 (annotation tracking, Git adds
// a label, selfHeal: Argo CD OutOfSync on /metadata/labels only, self-heal
// added the label and no tracking annotation), 20002 (annotation+label,
// Git adds a label and drops an annotation a JSON patch changed: Argo CD's
// diff /metadata/annotations and /metadata/labels, self-heal changed the
// annotation and the labels, added no mark). Before the fix the tool
// listed the tracking annotation (and instance label) reverted.
func TestCRDTargetHasNoTrackingMarks(t *testing.T) {
	for _, tc := range []struct {
		seed   string
		want   map[string]model.VerdictKind
		status string
	}{
		{"20083", map[string]model.VerdictKind{"/metadata/labels": model.Reverted}, "OutOfSync"},
		{"20002", map[string]model.VerdictKind{
			"/metadata/labels": model.Reverted,
			"/metadata/annotations/controller-gen.kubebuilder.io~1version": model.Reverted}, "OutOfSync"},
	} {
		t.Run(tc.seed, func(t *testing.T) {
			rep := capturedReport(t, tc.seed, true)
			if got := fieldVerdicts(rep); !sameVerdicts(got, tc.want) {
				t.Errorf("-f: fields %v, want %v", got, tc.want)
			}
			if got := objectStatusOf(rep); got != tc.status {
				t.Errorf("-f: status %q, want %q", got, tc.status)
			}
			if len(rep.Owners) == 0 || !strings.HasPrefix(rep.Owners[0].Name, "dx-"+tc.seed+"-") {
				t.Errorf("owners %+v: want the Application listing the CRD", rep.Owners)
			}
			// Inferred mode: nothing says Git changed; no mark is missing.
			inf := capturedReport(t, tc.seed, false)
			for p := range fieldVerdicts(inf) {
				if strings.Contains(p, "tracking-id") || p == "/metadata/labels/app.kubernetes.io~1instance" {
					t.Errorf("inferred: tracking mark %s listed", p)
				}
			}
		})
	}
}

// TestIgnoredFieldInAShownMap (class A2): a jsonPointers rule on
// /spec/selector/app, Git's selector emptied. Argo CD v3.2.11 was
// OutOfSync on /spec/selector (the rule leaves live an empty selector,
// Git has none after remarshal); self-heal removed the selector in 20097
// and kept it in 20003, where RespectIgnoreDifferences=true copies live's
// value into the sync. Before the fix the tool said ignored in both.
func TestIgnoredFieldInAShownMap(t *testing.T) {
	for _, tc := range []struct {
		seed string
		want model.VerdictKind
		in   string
	}{
		{"20097", model.Reverted, "a sync applies Git's /spec/selector"},
		{"20003", model.Reported, "RespectIgnoreDifferences=true copies the live value"},
	} {
		t.Run(tc.seed, func(t *testing.T) {
			rep := capturedReport(t, tc.seed, true)
			v := argoVerdict(t, rep, "/spec/selector/app")
			if v.Kind != tc.want || !strings.Contains(v.Reason, tc.in) || !strings.Contains(v.Reason, "Argo CD's diff shows /spec/selector") {
				t.Errorf("/spec/selector/app: %s (%s), want %s saying %q", v.Kind, v.Reason, tc.want, tc.in)
			}
			if v.Rule == nil {
				t.Error("the verdict names no rule")
			}
			if got := objectStatusOf(rep); got != "OutOfSync" {
				t.Errorf("status %q, want OutOfSync", got)
			}
		})
	}
}

// TestPartlyIgnoredFieldInferred (class A6, seed 20052): a client-side
// apply replaced the atomic podSelector (matchLabels.app db -> cache) and
// rewrote last-applied-configuration; a jsonPointers rule ignores
// /spec/podSelector/matchLabels/app. Argo CD's diff did not show the
// podSelector (only the tracking annotation the apply deleted); without
// Git the tool cannot tell, so unknown, not reported. With -f the rule
// hides the difference.
func TestPartlyIgnoredFieldInferred(t *testing.T) {
	rep := capturedReport(t, "20052", false)
	v := argoVerdict(t, rep, "/spec/podSelector")
	if v.Kind != model.Unknown || !strings.Contains(v.Reason, "/spec/podSelector/matchLabels/app") || v.Rule == nil {
		t.Errorf("inferred /spec/podSelector: %s (%s), want unknown naming the rule's pointer", v.Kind, v.Reason)
	}
	if got := fieldVerdicts(rep)["/metadata/annotations/argocd.argoproj.io~1tracking-id"]; got != model.Reported {
		t.Errorf("inferred tracking annotation: %s, want reported (Argo CD's diff shows it)", got)
	}
	file := capturedReport(t, "20052", true)
	if v := argoVerdict(t, file, "/spec/podSelector/matchLabels/app"); v.Kind != model.Ignored {
		t.Errorf("-f /spec/podSelector/matchLabels/app: %s (%s), want ignored", v.Kind, v.Reason)
	}
}
