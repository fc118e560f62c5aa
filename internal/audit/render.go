package audit

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/output"
	"github.com/kubectl-drift/kubectl-drift/internal/version"
)

// Formats lists the -o values.
var formats = []string{"text", "json", "sarif", "github"}

// Formats returns the supported output formats.
func Formats() []string { return append([]string(nil), formats...) }

// Render writes the result in one of Formats().
func Render(w io.Writer, format string, r *Result) error {
	switch format {
	case "", "text":
		return renderText(w, r)
	case "json":
		return renderJSON(w, r)
	case "sarif":
		return renderSARIF(w, r)
	case "github":
		return renderGitHub(w, r)
	}
	return fmt.Errorf("unknown output format %q: must be one of %s", format, strings.Join(formats, ", "))
}

// textMaxPerCheck bounds the warnings and notes of one check that text
// output lists; the rest are counted in one line (-o json lists all).
// A repository with 551 HelmReleases without drift detection needs the
// point made once, not 551 times. Errors are always listed.
const textMaxPerCheck = 10

// renderText groups findings by file, one line each plus the hint (once per
// check).
func renderText(w io.Writer, r *Result) error {
	var b strings.Builder
	file := "\x00"
	shown := map[CheckID]int{}
	hinted := map[CheckID]bool{}
	hidden := map[CheckID]int{}
	for _, f := range r.Findings {
		if f.Severity != SeverityError && shown[f.Check] >= textMaxPerCheck {
			hidden[f.Check]++
			continue
		}
		shown[f.Check]++
		if f.File != file {
			if file != "\x00" {
				b.WriteString("\n")
			}
			file = f.File
			name := f.File
			if name == "" {
				name = "(no file)"
			}
			b.WriteString(name + "\n")
		}
		pos := ""
		if f.Line > 0 {
			pos = fmt.Sprintf("%d:%d", f.Line, max(f.Column, 1))
		}
		change := ""
		if f.Change != "" {
			change = "[" + string(f.Change) + "] "
		}
		repeats := ""
		if f.Repeats > 1 {
			repeats = fmt.Sprintf(" (x%d)", f.Repeats)
		}
		fmt.Fprintf(&b, "  %-7s %-7s %s %s%s%s\n", pos, f.Severity, f.Check, change, f.Message, repeats)
		if f.Object != "" {
			fmt.Fprintf(&b, "          in %s\n", strings.TrimSpace(f.Object+" "+f.Field))
		}
		if f.Hint != "" && !hinted[f.Check+CheckID(f.Hint)] {
			hinted[f.Check+CheckID(f.Hint)] = true
			fmt.Fprintf(&b, "          fix: %s\n", f.Hint)
		}
	}
	if len(r.Findings) > 0 {
		b.WriteString("\n")
	}
	var more []string
	for id, n := range hidden {
		more = append(more, fmt.Sprintf("%s: %d more like the above not listed (-o json lists all)\n", id, n))
	}
	sort.Strings(more)
	for _, m := range more {
		b.WriteString(m)
	}
	if len(more) > 0 {
		b.WriteString("\n")
	}
	counts := map[Severity]int{}
	for _, f := range r.Findings {
		counts[f.Severity]++
	}
	fmt.Fprintf(&b, "%d files, %d manifests, %d rules: %d errors, %d warnings, %d notes",
		r.Files, r.Manifests, r.Rules, counts[SeverityError], counts[SeverityWarning], counts[SeverityNote])
	if r.Skipped > 0 {
		fmt.Fprintf(&b, " (%d files skipped: no Kubernetes object)", r.Skipped)
	}
	if r.Suppressed > 0 {
		fmt.Fprintf(&b, " (%d allowed by config)", r.Suppressed)
	}
	if r.Base != "" {
		fmt.Fprintf(&b, " (changes since %s)", r.Base)
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// jsonReport is the -o json document.
type jsonReport struct {
	APIVersion string    `json:"apiVersion"`
	Kind       string    `json:"kind"`
	Checks     []Check   `json:"checks"`
	Findings   []Finding `json:"findings"`
	Summary    struct {
		Files      int            `json:"files"`
		Skipped    int            `json:"skipped"`
		Manifests  int            `json:"manifests"`
		Rules      int            `json:"rules"`
		Suppressed int            `json:"suppressed"`
		BySeverity map[string]int `json:"bySeverity"`
		Base       string         `json:"base,omitempty"`
	} `json:"summary"`
}

func renderJSON(w io.Writer, r *Result) error {
	rep := jsonReport{APIVersion: model.APIVersion, Kind: "AuditReport", Checks: Checks(), Findings: r.Findings}
	if rep.Findings == nil {
		rep.Findings = []Finding{}
	}
	rep.Summary.Files, rep.Summary.Manifests, rep.Summary.Rules = r.Files, r.Manifests, r.Rules
	rep.Summary.Skipped = r.Skipped
	rep.Summary.Suppressed, rep.Summary.Base = r.Suppressed, r.Base
	rep.Summary.BySeverity = map[string]int{"error": 0, "warning": 0, "note": 0}
	for _, f := range r.Findings {
		rep.Summary.BySeverity[string(f.Severity)]++
	}
	return output.PrintObject(w, output.JSON, rep)
}

// SARIF 2.1.0 (OASIS), the subset GitHub code scanning reads:
// https://docs.github.com/en/code-security/code-scanning/integrating-with-code-scanning/sarif-support-for-code-scanning
type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool               sarifTool                      `json:"tool"`
	Invocations        []sarifInvocation              `json:"invocations,omitempty"`
	Results            []sarifResult                  `json:"results"`
	OriginalURIBaseIDs map[string]sarifArtifactLocURI `json:"originalUriBaseIds,omitempty"`
	AutomationDetails  *sarifAutomation               `json:"automationDetails,omitempty"`
	ColumnKind         string                         `json:"columnKind"`
}

// sarifInvocation carries findings that have no file: GitHub code scanning
// rejects a result without a location ("locationFromSarifResult: expected at
// least one location", github/codeql-action#2459), so they are tool
// execution notifications instead.
type sarifInvocation struct {
	ExecutionSuccessful        bool                `json:"executionSuccessful"`
	ToolExecutionNotifications []sarifNotification `json:"toolExecutionNotifications,omitempty"`
}

type sarifNotification struct {
	Descriptor *sarifDescriptorRef `json:"descriptor,omitempty"`
	Level      string              `json:"level"`
	Message    sarifText           `json:"message"`
}

type sarifDescriptorRef struct {
	ID string `json:"id"`
}

type sarifAutomation struct {
	ID string `json:"id"`
}

type sarifArtifactLocURI struct {
	URI string `json:"uri"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	InformationURI string      `json:"informationUri"`
	Version        string      `json:"version"`
	Rules          []sarifRule `json:"rules"`
}

type sarifText struct {
	Text string `json:"text"`
}

type sarifRule struct {
	ID                   string          `json:"id"`
	Name                 string          `json:"name"`
	ShortDescription     sarifText       `json:"shortDescription"`
	FullDescription      sarifText       `json:"fullDescription"`
	Help                 sarifText       `json:"help"`
	DefaultConfiguration sarifRuleConfig `json:"defaultConfiguration"`
	Properties           map[string]any  `json:"properties,omitempty"`
}

type sarifRuleConfig struct {
	Level string `json:"level"`
	// Enabled is SARIF's reportingConfiguration.enabled (default true):
	// false for an opt-in check.
	Enabled *bool `json:"enabled,omitempty"`
}

// enabledByDefault is the SARIF enabled property of c: set only when false.
func enabledByDefault(c Check) *bool {
	if !c.OptIn {
		return nil
	}
	off := false
	return &off
}

type sarifResult struct {
	RuleID              string            `json:"ruleId"`
	RuleIndex           int               `json:"ruleIndex"`
	Level               string            `json:"level"`
	Message             sarifText         `json:"message"`
	Locations           []sarifLocation   `json:"locations,omitempty"`
	PartialFingerprints map[string]string `json:"partialFingerprints,omitempty"`
	Properties          map[string]any    `json:"properties,omitempty"`
}

type sarifLocation struct {
	PhysicalLocation sarifPhysical `json:"physicalLocation"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           *sarifRegion  `json:"region,omitempty"`
}

type sarifArtifact struct {
	URI       string `json:"uri"`
	URIBaseID string `json:"uriBaseId,omitempty"`
}

type sarifRegion struct {
	StartLine   int `json:"startLine"`
	StartColumn int `json:"startColumn,omitempty"`
}

const sarifSchemaURI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"

func renderSARIF(w io.Writer, r *Result) error {
	checks := Checks()
	idx := map[CheckID]int{}
	var rules []sarifRule
	for i, c := range checks {
		idx[c.ID] = i
		rules = append(rules, sarifRule{
			ID: string(c.ID), Name: c.Name,
			ShortDescription:     sarifText{c.Summary},
			FullDescription:      sarifText{c.Summary + "."},
			Help:                 sarifText{c.Hint},
			DefaultConfiguration: sarifRuleConfig{Level: string(c.Severity), Enabled: enabledByDefault(c)},
			Properties:           map[string]any{"tags": []string{"gitops", "drift"}},
		})
	}
	run := sarifRun{
		Tool: sarifTool{Driver: sarifDriver{
			Name: "kubectl-drift audit", InformationURI: "https://github.com/kubectl-drift/kubectl-drift",
			Version: version.Version(), Rules: rules,
		}},
		Results:    []sarifResult{},
		ColumnKind: "unicodeCodePoints",
	}
	var notes []sarifNotification
	for _, f := range r.Findings {
		msg := f.Message
		if f.Hint != "" {
			msg += " Fix: " + f.Hint
		}
		if f.File == "" {
			notes = append(notes, sarifNotification{Descriptor: &sarifDescriptorRef{ID: string(f.Check)}, Level: string(f.Severity), Message: sarifText{msg}})
			continue
		}
		res := sarifResult{
			RuleID: string(f.Check), RuleIndex: idx[f.Check], Level: string(f.Severity),
			Message: sarifText{msg},
			// GitHub deduplicates alerts across runs by fingerprint; the
			// line moves when rules above it change, so key on content.
			PartialFingerprints: map[string]string{"driftAuditKey/v1": fingerprint(f)},
		}
		loc := sarifLocation{PhysicalLocation: sarifPhysical{ArtifactLocation: sarifArtifact{URI: f.File, URIBaseID: "%SRCROOT%"}}}
		if f.Line > 0 {
			loc.PhysicalLocation.Region = &sarifRegion{StartLine: f.Line, StartColumn: f.Column}
		}
		res.Locations = []sarifLocation{loc}
		if f.Change != "" || f.Object != "" {
			res.Properties = map[string]any{}
			if f.Change != "" {
				res.Properties["change"] = f.Change
			}
			if f.Object != "" {
				res.Properties["object"] = f.Object
				res.Properties["field"] = f.Field
			}
		}
		run.Results = append(run.Results, res)
	}
	run.Invocations = []sarifInvocation{{ExecutionSuccessful: true, ToolExecutionNotifications: notes}}
	log := sarifLog{Schema: sarifSchemaURI, Version: "2.1.0", Runs: []sarifRun{run}}
	return output.PrintObject(w, output.JSON, log)
}

func fingerprint(f Finding) string {
	return fmt.Sprintf("%s:%s:%s:%s", f.Check, f.File, f.Object+f.Field, f.Message)
}

// renderGitHub prints workflow commands that GitHub Actions turns into
// annotations on the pull request
// (https://docs.github.com/en/actions/using-workflows/workflow-commands-for-github-actions).
func renderGitHub(w io.Writer, r *Result) error {
	var b strings.Builder
	for _, f := range r.Findings {
		cmd := "warning"
		switch f.Severity {
		case SeverityError:
			cmd = "error"
		case SeverityNote:
			cmd = "notice"
		}
		var props []string
		if f.File != "" {
			props = append(props, "file="+ghProp(f.File))
			if f.Line > 0 {
				props = append(props, fmt.Sprintf("line=%d", f.Line))
				if f.Column > 0 {
					props = append(props, fmt.Sprintf("col=%d", f.Column))
				}
			}
		}
		props = append(props, "title="+ghProp(string(f.Check)+" "+f.Name))
		msg := f.Message
		if f.Hint != "" {
			msg += "\n" + f.Hint
		}
		fmt.Fprintf(&b, "::%s %s::%s\n", cmd, strings.Join(props, ","), ghData(msg))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// ghData and ghProp escape as @actions/core does (toCommandValue,
// escapeData, escapeProperty in actions/toolkit packages/core/src/command.ts).
func ghData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

func ghProp(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}
