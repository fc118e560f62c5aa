//go:build e2e

package e2e

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// TestToyEngineScanAndExplain drifts a ConfigMap the toy engine applied
// (server-side, as toy-controller) with real kubectl operations, then runs
// scan and explain of a kubectl-drift built with the toy engine registered
// next to the shipped ones (-tags toyengine: one blank import,
// plugins/kubectl-drift/toy_engine.go) against the real API server.
func TestToyEngineScanAndExplain(t *testing.T) {
	ns := E.Namespace(t, "e2e")
	E.Apply(t, `apiVersion: v1
kind: ConfigMap
metadata:
  name: web
  namespace: `+ns+`
  labels:
    toy.example.com/app: web
data:
  mode: blue
`, "--server-side", "--field-manager=toy-controller")
	E.Kubectl(t, "-n", ns, "label", "configmap", "web", "hotfix=1")
	E.Kubectl(t, "-n", ns, "patch", "configmap", "web", "--type=merge", "-p", `{"data":{"mode":"green"}}`)

	bin := filepath.Join(t.TempDir(), KubectlDrift)
	build := exec.Command("go", "build", "-tags", "toyengine", "-o", bin, "./plugins/kubectl-drift")
	build.Dir = E.Root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build -tags toyengine: %v\n%s", err, out)
	}
	run := func(args ...string) (string, int) {
		t.Helper()
		res := E.Run(t, RunOpts{}, bin, args...)
		if res.Code != 0 && res.Code != 1 {
			t.Fatalf("%v: exit %d\n%s", args, res.Code, res.Stderr)
		}
		return res.Stdout, res.Code
	}
	want := map[string]model.VerdictKind{"/metadata/labels/hotfix": model.Reverted, "/data/mode": model.LeftAlone}
	check := func(what string, r model.Report) {
		t.Helper()
		if len(r.Owners) != 1 || r.Owners[0].Engine != "toy" || r.Owners[0].Name != "web" {
			t.Errorf("%s: owners %+v, want the ToyApp web", what, r.Owners)
		}
		got := map[string]model.VerdictKind{}
		for _, d := range r.Drifts {
			for _, v := range d.Verdicts {
				if v.Engine == "toy" {
					got[d.Path] = v.Kind
				}
			}
		}
		for p, v := range want {
			if got[p] != v {
				t.Errorf("%s: %s: toy verdict %q, want %q (all %v)", what, p, got[p], v, got)
			}
		}
	}

	out, code := run("scan", "-n", ns, "--kinds", "configmaps", "-o", "json")
	if code != 1 {
		t.Fatalf("scan: exit %d, want 1\n%s", code, out)
	}
	var res struct{ Items []model.Report }
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(res.Items) != 1 {
		t.Fatalf("scan found %d objects, want the one ConfigMap:\n%s", len(res.Items), out)
	}
	check("scan", res.Items[0])

	out, code = run("explain", "configmap/web", "-n", ns, "-o", "json")
	if code != 1 {
		t.Fatalf("explain: exit %d, want 1\n%s", code, out)
	}
	var r model.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	check("explain", r)
}
