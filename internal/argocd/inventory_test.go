package argocd

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/drift"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// judgeBoth runs the pipeline on live the way explain without -f does and
// the way a scan does (inventory mode, the adapter built for it), with the
// Application app.
func judgeBoth(t *testing.T, app, live *unstructured.Unstructured) (explain, scan *model.Report, scanAdapter *Adapter) {
	t.Helper()
	parser, err := parityParser()
	if err != nil {
		t.Fatal(err)
	}
	for _, inventory := range []bool{false, true} {
		a, err := New(Options{Inputs: []Input{{Object: app}}, GVKParser: parser, Inventory: inventory})
		if err != nil {
			t.Fatal(err)
		}
		req := drift.Request{Live: live.DeepCopy(), Engine: "auto", Adapters: []model.Adapter{a}, Inventory: inventory}
		if inventory {
			// scan's precheck: the object is a candidate when another
			// manager wrote it, or when the adapter asks.
			if !a.JudgeClean(live) && !otherManager(live) {
				return explain, nil, a
			}
			req.Owners = []model.Owner{*a.Owner(live)}
		}
		rep, err := drift.Explain(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if inventory {
			return explain, rep, a
		}
		explain = rep
	}
	return nil, nil, nil
}

func otherManager(live *unstructured.Unstructured) bool {
	for _, e := range live.GetManagedFields() {
		if drift.Relevant(e.Manager, string(e.Operation), e.Subresource, false) {
			return true
		}
	}
	return false
}

// verdictsOf is path -> Argo CD verdict kind, and the object status.
func verdictsOf(rep *model.Report) (map[string]model.VerdictKind, model.ObjectStatus) {
	out := map[string]model.VerdictKind{}
	if rep == nil {
		return out, model.ObjectStatus{}
	}
	for _, d := range rep.Drifts {
		if v := verdictOf(d, Engine); v != nil {
			out[d.Path] = v.Kind
		}
	}
	st, _ := rep.StatusOf(Engine)
	return out, st
}

// TestScanAgreesWithExplainInferred: on every object captured from a real
// Argo CD (testdata/inferred), a scan reports what explain without -f
// reports, field by field and in the object status, or nothing when explain
// finds nothing. csa-env-removed-live is the case a scan used to miss: the
// env var kubectl deleted has no owner, so inference is clean and only the
// diff against Argo CD's last sync finds it. The last-applied note is said
// once by the scan's adapter (ScanNotes), not on each report.
func TestScanAgreesWithExplainInferred(t *testing.T) {
	dirs, err := filepath.Glob("testdata/inferred/*/live.json")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no captured cases: %v", err)
	}
	for _, f := range dirs {
		dir := filepath.Dir(f)
		for _, heal := range []bool{false, true} {
			name := filepath.Base(dir)
			if heal {
				name += "/selfheal"
			}
			t.Run(name, func(t *testing.T) {
				app := readTestObject(t, filepath.Join(dir, "application.json"))
				if heal {
					selfHeal(app)
				}
				ex, sc, a := judgeBoth(t, app, readTestObject(t, f))
				exV, exSt := verdictsOf(ex)
				if len(ex.Drifts) == 0 && !ex.StatusDrift() {
					if sc != nil {
						t.Fatalf("explain finds nothing, scan reports %+v", sc)
					}
					return
				}
				if sc == nil {
					t.Fatalf("explain reports %v (status %s), scan nothing", exV, exSt.Status)
				}
				scV, scSt := verdictsOf(sc)
				if !reflect.DeepEqual(scV, exV) || scSt != exSt {
					t.Errorf("scan %v %+v, explain %v %+v", scV, scSt, exV, exSt)
				}
				if hasNote(sc, "argocd-last-applied") {
					t.Errorf("the last-applied note is on a scan's report")
				}
				if hasNote(ex, "argocd-last-applied") && len(a.ScanNotes()) != 1 {
					t.Errorf("scan notes %+v, want the last-applied note once", a.ScanNotes())
				}
			})
		}
	}
}

// synced is a captured object as Argo CD's last sync left it: the label
// kubectl added to csa-label-added (and its manager) taken out again.
func synced(t *testing.T) (app, live *unstructured.Unstructured) {
	t.Helper()
	dir := "testdata/inferred/csa-label-added"
	live = readTestObject(t, filepath.Join(dir, "live.json"))
	unstructured.RemoveNestedField(live.Object, "metadata", "labels", "hotfix")
	testutil.KeepManagers(live, IsManager)
	return readTestObject(t, filepath.Join(dir, "application.json")), live
}

// TestScanFollowsRecordedStatus: an object equal to Argo CD's last sync
// whose Application records it OutOfSync (a Git commit not synced yet) is
// reported by a scan as explain reports it: OutOfSync from the
// Application's status, with no field. Synced or unlisted: nothing.
func TestScanFollowsRecordedStatus(t *testing.T) {
	for _, status := range []string{"OutOfSync", "Synced", ""} {
		t.Run("status "+status, func(t *testing.T) {
			app, live := synced(t)
			if status != "" {
				gvk := live.GroupVersionKind()
				_ = unstructured.SetNestedSlice(app.Object, []any{map[string]any{
					"group": gvk.Group, "version": gvk.Version, "kind": gvk.Kind,
					"namespace": live.GetNamespace(), "name": live.GetName(), "status": status}}, "status", "resources")
			}
			ex, sc, _ := judgeBoth(t, app, live)
			want := status == "OutOfSync"
			if st := statusOf(t, ex); st.Drift != want {
				t.Fatalf("explain: OutOfSync = %v, want %v", st.Drift, want)
			}
			if (sc != nil) != want {
				t.Fatalf("scan report %+v, want one: %v", sc, want)
			}
			if want {
				if st := statusOf(t, sc); !st.Drift || st.From != "Application status" || len(sc.Drifts) != 0 {
					t.Errorf("scan: %+v", sc)
				}
			}
		})
	}
}

// TestHoldsLastAppliedMeansNoDiff: the pre-check may skip Argo CD's diff
// only where that diff finds nothing. On every captured object with a
// last-applied-configuration (the parity corpus and the inferred cases,
// from a real API server), an object said to hold it gets an unmodified
// 3-way diff; and the check must say both yes and no somewhere, or it
// proves nothing.
func TestHoldsLastAppliedMeansNoDiff(t *testing.T) {
	var files []string
	for _, g := range []string{"testdata/parity/cases/*/live.json", "testdata/inferred/*/live.json"} {
		m, _ := filepath.Glob(g)
		files = append(files, m...)
	}
	_, s := synced(t)
	held, notHeld := 0, 0
	check := func(name string, live *unstructured.Unstructured) {
		la, ok := live.GetAnnotations()[LastAppliedAnnotation]
		if !ok {
			return
		}
		orig, err := lastApplied(live)
		if err != nil {
			return
		}
		dr, err := threeWayDiff(orig, orig, live)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			return
		}
		if !holdsLastApplied(live, la) {
			notHeld++
			return
		}
		held++
		if dr.Modified {
			t.Errorf("%s holds its last-applied-configuration, but Argo CD's 3-way diff against it is modified", name)
		}
	}
	for _, f := range files {
		if _, err := os.Stat(f); err == nil {
			if live := readTestObject(t, f); live != nil {
				check(f, live)
			}
		}
	}
	check("csa-label-added without the label", s)
	t.Logf("%d objects hold their last-applied-configuration, %d do not", held, notHeld)
	if held == 0 || notHeld == 0 {
		t.Errorf("held %d, not held %d: the corpus does not exercise the check", held, notHeld)
	}
}
