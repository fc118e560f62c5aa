package audit

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/kubectl-drift/kubectl-drift/internal/audit/auditapi"
)

// sarifSchemaFile is the OASIS SARIF 2.1.0 JSON schema (errata01),
// vendored so that the test runs offline; where it comes from and under
// which license: testdata/sarif-schema-2.1.0.json.PROVENANCE.
const sarifSchemaFile = "testdata/sarif-schema-2.1.0.json"

func sarifSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	raw, err := os.ReadFile(sarifSchemaFile)
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	if !strings.Contains(text, `"Static Analysis Results Format (SARIF) Version 2.1.0 JSON Schema"`) ||
		!strings.Contains(text, `"id": "`+sarifSchemaURI+`"`) {
		t.Fatalf("%s does not hold the SARIF 2.1.0 schema our output names (%s)", sarifSchemaFile, sarifSchemaURI)
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(sarifSchemaURI, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(sarifSchemaURI)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func sampleResult() *Result {
	mk := func(id CheckID, file string, line, col int, change Change, obj string) Finding {
		f := newFinding(id, "message with \"quotes\", commas: and\nnewlines")
		f.File, f.Line, f.Column, f.Change, f.Object = file, line, col, change, obj
		return f
	}
	return &Result{Files: 3, Manifests: 7, Rules: 5, Findings: []Finding{
		mk(auditapi.CheckDangerousTarget, "argocd/apps.yaml", 12, 9, "", "Application argocd/shop"),
		mk(auditapi.CheckTooBroad, "flux/ks.yaml", 4, 0, ChangeAdded, "Kustomization flux-system/apps"),
		mk(auditapi.CheckRemovedRule, "flux/hr.yaml", 0, 0, ChangeRemoved, ""),
		mk(auditapi.CheckInvalid, "", 0, 0, "", ""),
	}}
}

func TestSARIFValidatesAgainstSchema(t *testing.T) {
	schema := sarifSchema(t)
	for name, res := range map[string]*Result{"findings": sampleResult(), "clean": {}, "fixture repo": auditFixture(t)} {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Render(&buf, "sarif", res); err != nil {
				t.Fatal(err)
			}
			inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(buf.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			if err := schema.Validate(inst); err != nil {
				t.Fatalf("SARIF output does not validate:\n%v\n%s", err, buf.String())
			}
			// What GitHub code scanning needs beyond the schema: relative
			// artifact URIs, every ruleId defined in the driver, ruleIndex
			// pointing at it.
			var log sarifLog
			if err := json.Unmarshal(buf.Bytes(), &log); err != nil {
				t.Fatal(err)
			}
			run := log.Runs[0]
			withFile := 0
			for _, f := range res.Findings {
				if f.File != "" {
					withFile++
				}
			}
			if len(run.Results) != withFile || len(run.Invocations[0].ToolExecutionNotifications) != len(res.Findings)-withFile {
				t.Fatalf("%d results and %d notifications for %d findings (%d with a file)", len(run.Results),
					len(run.Invocations[0].ToolExecutionNotifications), len(res.Findings), withFile)
			}
			for _, r := range run.Results {
				if len(r.Locations) == 0 {
					t.Errorf("result %s has no location: code scanning rejects it", r.RuleID)
				}
				if r.RuleIndex >= len(run.Tool.Driver.Rules) || run.Tool.Driver.Rules[r.RuleIndex].ID != r.RuleID {
					t.Errorf("result %s: ruleIndex %d does not name its rule", r.RuleID, r.RuleIndex)
				}
				for _, l := range r.Locations {
					if u := l.PhysicalLocation.ArtifactLocation.URI; filepath.IsAbs(u) || strings.Contains(u, "\\") {
						t.Errorf("artifact URI %q is not a relative repository path", u)
					}
				}
			}
		})
	}
}

// TestSARIFSchemaRejects proves the validator is live: a log with an
// invalid level must fail.
func TestSARIFSchemaRejects(t *testing.T) {
	schema := sarifSchema(t)
	var buf bytes.Buffer
	if err := Render(&buf, "sarif", sampleResult()); err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(buf.String(), `"level": "error"`, `"level": "fatal"`, 1)
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(bad))
	if err != nil {
		t.Fatal(err)
	}
	if schema.Validate(inst) == nil {
		t.Fatal("a SARIF log with level \"fatal\" validated: the schema check is not working")
	}
}

func TestGitHubAnnotations(t *testing.T) {
	var buf bytes.Buffer
	if err := Render(&buf, "github", sampleResult()); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	want := []string{
		`::error file=argocd/apps.yaml,line=12,col=9,title=DRIFT002 dangerous-target::message with "quotes", commas: and%0Anewlines%0A`,
		`::warning file=flux/ks.yaml,line=4,title=DRIFT001 too-broad::message with "quotes", commas: and%0Anewlines%0A`,
		`::notice file=flux/hr.yaml,title=DRIFT013 removed-rule::message with "quotes", commas: and%0Anewlines%0A`,
		`::error title=DRIFT005 invalid-rule::message with "quotes", commas: and%0Anewlines%0A`,
	}
	if len(lines) != len(want) {
		t.Fatalf("got %d lines, want %d:\n%s", len(lines), len(want), buf.String())
	}
	for i := range want {
		if !strings.HasPrefix(lines[i], want[i]) {
			t.Errorf("line %d:\n got %s\nwant prefix %s", i, lines[i], want[i])
		}
		if strings.Count(lines[i], "\n") != 0 {
			t.Errorf("annotation spans lines: %q", lines[i])
		}
	}
}
