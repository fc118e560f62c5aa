package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/redact"
)

// TestSecretValueDoesNotMaskNames: a Secret value that is also an object
// name and a directory name ("guestbook", a database user named after
// its application) must not turn the file paths and names that rules and
// compare print into "***"; the Secret's other value is still never
// printed.
func TestSecretValueDoesNotMaskNames(t *testing.T) {
	dir := filepath.Join("testdata", "rules", "secret-value-equals-app-name")
	for _, args := range [][]string{
		{"rules", dir},
		{"rules", dir, "-o", "json"},
		{"compare", dir},
		{"compare", dir, "-o", "json"},
	} {
		t.Run(strings.Join(args[0:1], "")+strings.Join(args[2:], ""), func(t *testing.T) {
			code, out, errOut := runCommand(t, "", args...)
			if code != ExitNoDrift && code != ExitDrift {
				t.Fatalf("exit %d\nstderr: %s", code, errOut)
			}
			for _, want := range []string{"apps/guestbook/guestbook.yaml", "argocd/guestbook"} {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
			if strings.Contains(out, "***") {
				t.Errorf("output masks a name or path:\n%s", out)
			}
			if strings.Contains(out+errOut, "s3cr3t-pw") {
				t.Errorf("the Secret's password is printed:\n%s\n%s", out, errOut)
			}
		})
	}
}

// TestScrubInputsMasksFreeText: the free text of rule inputs (a problem,
// a rule's error) still loses the values of the Secrets read.
func TestScrubInputsMasksFreeText(t *testing.T) {
	s := redact.NewScrubber()
	s.Add(map[string]any{"apiVersion": "v1", "kind": "Secret", "stringData": map[string]any{"password": "s3cr3t-pw"}})
	in := &ruleInputs{
		Problems: []string{"a.yaml:3: cannot parse \"s3cr3t-pw\""},
		Rules:    []model.Rule{{Error: "jq failed on s3cr3t-pw"}},
	}
	scrubInputs(in, s)
	if strings.Contains(in.Problems[0], "s3cr3t") || strings.Contains(in.Rules[0].Error, "s3cr3t") {
		t.Errorf("value kept: %q, %q", in.Problems[0], in.Rules[0].Error)
	}
	if !strings.Contains(in.Problems[0], "a.yaml:3:") {
		t.Errorf("position lost: %q", in.Problems[0])
	}
	scrubInputs(nil, s) // a failed load has no inputs
}
