package audit

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-drift/kubectl-drift/internal/audit/auditapi"
	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// fixtureRoot is a repository with an Argo CD part (Applications and
// argocd-cm), a Flux part (Kustomizations and HelmReleases) and plain
// manifests, holding exactly one planted instance of every check that runs
// without --base. Each planted rule carries a "Planted DRIFTnnn" comment.
const fixtureRoot = "testdata/repo"

func auditFixture(t *testing.T) *Result {
	t.Helper()
	root, err := filepath.Abs(fixtureRoot)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadConfig(filepath.Join(root, DefaultConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(Options{Root: root, Paths: []string{root}, Config: cfg, Extractors: testExtractors(), Engines: testEngines()})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestFixtureRepoFindsEveryPlantedCheckAndNothingElse(t *testing.T) {
	res := auditFixture(t)
	want := []string{
		"DRIFT011 .drift-audit.yaml:8",
		"DRIFT002 argocd/applications.yaml:20",
		"DRIFT003 argocd/applications.yaml:25",
		"DRIFT006 argocd/applications.yaml:30",
		"DRIFT009 argocd/applications.yaml:35",
		"DRIFT005 argocd/applications.yaml:60",
		"DRIFT007 argocd/argocd-cm.yaml:14",
		"DRIFT008 flux/helmreleases.yaml:24",
		"DRIFT001 flux/kustomizations.yaml:15",
		"DRIFT004 flux/kustomizations.yaml:21",
		"DRIFT010 flux/kustomizations.yaml:39",
		"DRIFT012 manifests/broken.yaml:4",
	}
	var got []string
	for _, f := range res.Findings {
		got = append(got, string(f.Check)+" "+f.File+":"+strconv.Itoa(f.Line))
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("findings (-want +got):\n%s\nall findings:\n%s", d, render(t, "text", res))
	}
	// Every check that runs without --base is planted exactly once.
	seen := map[CheckID]int{}
	for _, f := range res.Findings {
		seen[f.Check]++
	}
	for _, c := range Checks() {
		if c.ID == auditapi.CheckRemovedRule {
			continue // only under --base: TestBaseReportsOnlyTheAddedRule
		}
		if seen[c.ID] != 1 {
			t.Errorf("check %s %s found %d times, want exactly 1", c.ID, c.Name, seen[c.ID])
		}
	}
	// Each planted finding sits right under its "Planted" comment (or on
	// the allow entry / the broken line), proving positions are the rule's.
	for _, f := range res.Findings {
		if f.Check == auditapi.CheckUnparsableFile || f.Check == auditapi.CheckNoJustification {
			continue
		}
		lines := readLines(t, filepath.Join(fixtureRoot, f.File))
		above := ""
		for i := f.Line - 2; i >= 0 && i >= f.Line-3; i-- {
			if strings.Contains(lines[i], "Planted") {
				above = lines[i]
				break
			}
		}
		if !strings.Contains(above, string(f.Check)) {
			t.Errorf("%s at %s: no \"Planted %s\" comment directly above", f.Check, f.Position(), f.Check)
		}
	}
	if res.Files != 7 {
		t.Errorf("audited %d files, want 7 (the config file is not a manifest)", res.Files)
	}
}

func TestFixtureRepoGolden(t *testing.T) {
	res := auditFixture(t)
	for _, format := range Formats() {
		t.Run(format, func(t *testing.T) {
			golden(t, "repo-"+format+".golden", render(t, format, res))
		})
	}
}

func render(t *testing.T, format string, r *Result) string {
	t.Helper()
	var buf bytes.Buffer
	if err := Render(&buf, format, r); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	testutil.Golden(t, filepath.Join("testdata", name), []byte(got))
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(string(b), "\n")
}
