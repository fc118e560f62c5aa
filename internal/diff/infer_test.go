package diff

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-drift/kubectl-drift/internal/managedfields"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// TestInferAgreesWithCompute: on every real-server case, a field inferred
// from ownership alone is one the manifest comparison also reports (in the
// same subtree), so explain without -f never invents drift that explain -f
// would not show. The drifted Deployment must yield its hand-made changes.
func TestInferAgreesWithCompute(t *testing.T) {
	desiredFiles, err := filepath.Glob("testdata/*-desired.yaml")
	if err != nil {
		t.Fatal(err)
	}
	inferredSomewhere := 0
	for _, df := range desiredFiles {
		name := strings.TrimSuffix(filepath.Base(df), "-desired.yaml")
		t.Run(name, func(t *testing.T) {
			desired := testutil.ReadObject(t, df)
			live := testutil.ReadObject(t, filepath.Join("testdata", name+"-live.yaml"))
			ix, err := managedfields.Parse(live)
			if err != nil {
				t.Fatal(err)
			}
			computed, err := Compute(desired, live, Options{Owned: ownedBy(t, live), Index: ix})
			if err != nil {
				t.Fatal(err)
			}
			inf := Infer(live, ix, InferOptions{})
			for _, d := range inf.Drifts {
				if !coveredBy(d.Path, computed) {
					t.Errorf("inferred %s (%s by %v), which the manifest comparison does not report", d.Path, d.Change, d.Managers)
				}
				if d.Cause == model.CauseGitOps || d.Cause == "" {
					t.Errorf("inferred %s with cause %q", d.Path, d.Cause)
				}
			}
			if inf.EngineWrote && len(inf.Drifts) > 0 {
				inferredSomewhere++
			}
		})
	}
	if inferredSomewhere < 3 {
		t.Fatalf("inference found drift in only %d cases; the agreement check would be vacuous", inferredSomewhere)
	}
}

func coveredBy(path string, ds []model.FieldDrift) bool {
	for _, c := range ds {
		if path == c.Path || strings.HasPrefix(path, c.Path+"/") || strings.HasPrefix(c.Path, path+"/") {
			return true
		}
	}
	return false
}

func TestInferKubectlDrifted(t *testing.T) {
	live := testutil.ReadObject(t, "testdata/deployment-kubectl-drifted-live.yaml")
	ix, err := managedfields.Parse(live)
	if err != nil {
		t.Fatal(err)
	}
	inf := Infer(live, ix, InferOptions{})
	if !inf.EngineWrote {
		t.Fatal("kustomize-controller owns fields of this object")
	}
	byManager := map[string]bool{}
	for _, d := range inf.Drifts {
		for _, m := range d.Managers {
			byManager[m.Manager] = true
		}
		if d.Cause != model.CauseManual {
			t.Errorf("%s: cause %q, want manual", d.Path, d.Cause)
		}
	}
	for _, m := range []string{"kubectl", "kubectl-set", "kubectl-patch", "kubectl-label", "kubectl-annotate", "kubectl-edit"} {
		if !byManager[m] {
			t.Errorf("no inferred drift owned by %s", m)
		}
	}
}

func TestInferAutoscalerAndSecret(t *testing.T) {
	live := testutil.ReadObject(t, "testdata/deployment-hpa-scaled-live.yaml")
	ix, err := managedfields.Parse(live)
	if err != nil {
		t.Fatal(err)
	}
	inf := Infer(live, ix, InferOptions{})
	if len(inf.Drifts) != 1 || inf.Drifts[0].Path != "/spec/replicas" || inf.Drifts[0].Cause != model.CauseAutoscaler {
		t.Fatalf("HPA scale: got %+v, want /spec/replicas by an autoscaler", inf.Drifts)
	}

	secret := testutil.ReadObject(t, "testdata/secret-patched-live.yaml")
	six, err := managedfields.Parse(secret)
	if err != nil {
		t.Fatal(err)
	}
	sinf := Infer(secret, six, InferOptions{})
	if len(sinf.Drifts) == 0 {
		t.Fatal("the patched Secret value is drift")
	}
	out, _ := json.Marshal(sinf.Drifts)
	for _, v := range secret.Object["data"].(map[string]any) {
		if strings.Contains(string(out), v.(string)) {
			t.Fatalf("inferred drift leaks a Secret value: %s", out)
		}
	}
}

func TestInferWithoutEngine(t *testing.T) {
	live := testutil.ReadObject(t, "testdata/deployment-handmade-scaled-live.yaml")
	ix, err := managedfields.Parse(live)
	if err != nil {
		t.Fatal(err)
	}
	inf := Infer(live, ix, InferOptions{})
	if inf.EngineWrote || len(inf.Drifts) != 0 || len(inf.Notes) != 1 || inf.Notes[0].Reason != "no-gitops-manager" {
		t.Fatalf("a hand-made object has no desired state to infer from: %+v", inf)
	}
}
