package audit

import (
	"path/filepath"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-drift/kubectl-drift/internal/audit/auditapi"
)

// auditPrecision audits the fixture testdata/precision/name with the
// shipped engines and cfg (nil: the defaults), as the audit command does.
func auditPrecision(t *testing.T, name string, cfg *Config) *Result {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("testdata", "precision", name))
	if err != nil {
		t.Fatal(err)
	}
	if cfg == nil {
		cfg = &Config{}
	}
	res, err := Run(Options{Root: root, Paths: []string{root}, Config: cfg, Extractors: testExtractors(), Engines: testEngines()})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// positions lists the findings of check id as "file:line".
func positions(res *Result, id CheckID) []string {
	var out []string
	for _, f := range res.Findings {
		if f.Check == id {
			out = append(out, f.File+":"+strconv.Itoa(f.Line))
		}
	}
	return out
}

// TestJustificationInsideTheEntry: a comment inside a rule's entry (between
// its keys) justifies it, in an Application and in an argocd-cm block; a
// comment at the entry's own indentation belongs to the next entry, and
// an entry with no comment at all is still reported.
func TestJustificationInsideTheEntry(t *testing.T) {
	res := auditPrecision(t, "comment-inside-rule-entry", nil)
	want := []string{"application.yaml:19"}
	if d := cmp.Diff(want, positions(res, auditapi.CheckNoJustification)); d != "" {
		t.Errorf("DRIFT010 findings (-want +got):\n%s\n%s", d, render(t, "text", res))
	}
}
