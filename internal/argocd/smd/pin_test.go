package smd

import (
	"bufio"
	"os"
	"strings"
	"testing"
)

// TestGoModVersionRecorded fails when go.mod selects another version of
// Module than the one the copy was last checked against: the behaviour
// that made the copy necessary (see the package doc and
// internal/argocd/libversion_test.go) must be looked at again, and
// GoModVersion updated, before the engine's results can be trusted.
func TestGoModVersionRecorded(t *testing.T) {
	f, err := os.Open("../../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }() // read only
	found := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == Module {
			found = fields[1]
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if found != GoModVersion {
		t.Fatalf("go.mod selects %s %q, the copy was checked against %q: check what the Argo CD releases the engine claims link (docs/verdicts.md, \"Library versions\"), rerun TestGoModSMDNullsEmptiedProbe, then update GoModVersion", Module, found, GoModVersion)
	}
	if found == Version {
		t.Fatalf("go.mod selects the pinned version %s itself: the copy is no longer needed", Version)
	}
}
