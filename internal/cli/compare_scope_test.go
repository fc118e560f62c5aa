package cli

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/kubectl-drift/kubectl-drift/internal/compare"
)

// TestCompareEffectStaysWithinSourcePath: compare by effect applies an
// Application's ignoreDifferences only to the objects rendered from its
// source path: frontend's rule removes /spec/replicas from the frontend
// Deployment, not from backend's.
func TestCompareEffectStaysWithinSourcePath(t *testing.T) {
	dir := filepath.Join("testdata", "compare", "effect-within-source-path")
	code, out, errOut := runCommand(t, "", "compare", dir, "-o", "json")
	if code != ExitNoDrift && code != ExitDrift {
		t.Fatalf("exit %d\nstderr: %s", code, errOut)
	}
	var c compare.Comparison
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	got := map[string][]string{}
	for _, o := range c.Objects {
		for _, fields := range o.Ignored {
			got[o.Object.Name] = append(got[o.Object.Name], fields...)
		}
	}
	if len(got["frontend"]) != 1 || got["frontend"][0] != "/spec/replicas" {
		t.Errorf("frontend Deployment: fields %v, want [/spec/replicas]\n%s", got["frontend"], out)
	}
	if len(got["backend"]) != 0 {
		t.Errorf("backend Deployment: fields %v, want none (outside frontend's source path)\n%s", got["backend"], out)
	}
}
