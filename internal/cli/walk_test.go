package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestRulesAndCompareSkipHiddenDirectories: rules and compare read a
// directory as audit does, without its hidden directories (.git,
// .github): the Application under .github is a CI fixture.
func TestRulesAndCompareSkipHiddenDirectories(t *testing.T) {
	dir := filepath.Join("testdata", "rules", "hidden-directory")
	for _, cmd := range []string{"rules", "compare"} {
		code, out, errOut := runCommand(t, "", cmd, dir, "-o", "json")
		if code != ExitNoDrift && code != ExitDrift {
			t.Fatalf("%s: exit %d\nstderr: %s", cmd, code, errOut)
		}
		if !strings.Contains(out, "argocd/shop") {
			t.Errorf("%s: the Application outside hidden directories is missing:\n%s", cmd, out)
		}
		if strings.Contains(out, "ci-fixture") || strings.Contains(out, ".github") {
			t.Errorf("%s: read a hidden directory:\n%s", cmd, out)
		}
	}
}
