package audit

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/kubectl-drift/kubectl-drift/internal/audit/auditapi"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// Severity grades a finding. The names are SARIF's result levels.
type Severity string

// Severities, from most to least severe.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
	// SeverityNote is informational and never fails a run (e.g. a rule that
	// a change removes: good news).
	SeverityNote Severity = "note"
)

// rank orders severities so that --fail-on can compare them.
func (s Severity) rank() int {
	switch s {
	case SeverityError:
		return 3
	case SeverityWarning:
		return 2
	case SeverityNote:
		return 1
	}
	return 0
}

// AtLeast reports whether s is as severe as min.
func (s Severity) AtLeast(min Severity) bool { return s.rank() >= min.rank() && s.rank() > 0 }

// ParseSeverity reads a severity name.
func ParseSeverity(s string) (Severity, error) {
	switch Severity(strings.ToLower(s)) {
	case SeverityError:
		return SeverityError, nil
	case SeverityWarning:
		return SeverityWarning, nil
	case SeverityNote, "info":
		return SeverityNote, nil
	}
	return "", fmt.Errorf("unknown severity %q: must be error, warning or note", s)
}

// CheckID identifies a check, e.g. DRIFT001 (declared in auditapi, where
// the engines' own checks name them too).
type CheckID = auditapi.CheckID

// Check describes one check: what it looks for and how to fix what it finds.
type Check struct {
	ID   CheckID `json:"id"`
	Name string  `json:"name"`
	// Severity is the default; .drift-audit.yaml may change it.
	Severity Severity `json:"severity"`
	// Summary is one line for listings and SARIF shortDescription.
	Summary string `json:"summary"`
	// Hint says how to fix a finding of this check.
	Hint string `json:"hint"`
	// OptIn checks run only when the configuration enables them
	// (checks: {DRIFT008: {enabled: true}}) or sets a policy reported
	// under them.
	OptIn bool `json:"optIn,omitempty"`
}

// Checks returns every check in ID order. It builds a fresh slice on each
// call so that no caller can change another's view.
func Checks() []Check {
	// drift-detection-off is opt-in: it is a choice more often than a
	// mistake, and was 668 of the findings on 7 public repositories
	// (issue 33), every HelmRelease left at helm-controller's default.
	return []Check{
		{auditapi.CheckTooBroad, "too-broad", SeverityWarning,
			"Rule ignores a whole object, /spec, /metadata, a pod template or container list, or a kind-specific path on every kind",
			"Ignore the single field that drifts (e.g. /spec/replicas) and name the group and kind it belongs to.", false},
		{auditapi.CheckDangerousTarget, "dangerous-target", SeverityError,
			"Rule hides drift of a security-relevant field: image, command, args, securityContext, RBAC rules or a whole Secret",
			"Do not ignore security-relevant fields; fix the writer that changes them, or allow-list the rule with a reason.", false},
		{auditapi.CheckShadowed, "shadowed-rule", SeverityWarning,
			"Rule is fully covered by a broader rule that applies to the same objects",
			"Delete the narrower rule, or narrow the broader one if it was not meant to cover this.", false},
		{auditapi.CheckDuplicate, "duplicate-rule", SeverityWarning,
			"Rule repeats another rule with the same target and paths",
			"Keep one copy: the engine merges the rules, the second changes nothing.", false},
		{auditapi.CheckInvalid, "invalid-rule", SeverityError,
			"Rule cannot be evaluated: bad JSON pointer, jq, glob or regex, or an unknown key",
			"Fix the syntax: escape '~' as ~0 and '/' inside a key as ~1; check jq with `jq -n 'path(EXPR)'`.", false},
		{auditapi.CheckMatchesNothing, "matches-nothing", SeverityWarning,
			"Rule's target or path matches no manifest in the repository",
			"Check the spelling and case of group, kind, name, namespace and path against the manifests.", false},
		{auditapi.CheckSlowJQ, "slow-jq", SeverityError,
			"jq path expression is slow: measured against the repository's manifests with Argo CD's time limit",
			"Use a JSON pointer or a simpler jq path; Argo CD silently skips a jq rule that exceeds ignore.normalizer.jq.timeout.", false},
		{auditapi.CheckDriftDetectionOff, "drift-detection-off", SeverityWarning,
			"Drift detection or correction is switched off for an object",
			"Enable drift detection (HelmRelease driftDetection.mode: enabled, Argo CD selfHeal: true) and ignore only the fields that must drift.", true},
		{auditapi.CheckOverBudget, "over-budget", SeverityWarning,
			"More ignore rules than the budget allows, in total or for one application",
			"A long exclusion list means the GitOps boundary is unclear: move the drifting fields out of Git, or raise the budget deliberately.", false},
		{auditapi.CheckNoJustification, "missing-justification", SeverityWarning,
			"Rule has no justification comment directly above it",
			"Add a comment line directly above the rule saying why the field may drift and who changes it.", false},
		{auditapi.CheckAllowWithoutReason, "allow-without-reason", SeverityError,
			"Allow-list entry in the audit configuration carries no reason",
			"Add `reason:` to the allow entry; entries without a reason suppress nothing.", false},
		{auditapi.CheckUnparsableFile, "unparsable-file", SeverityError,
			"File in the audited paths is not valid YAML/JSON, or a document in it is not a Kubernetes object",
			"Fix the syntax, or leave the file out of the audited paths.", false},
		{auditapi.CheckRemovedRule, "removed-rule", SeverityNote,
			"The change removes or narrows an ignore rule (good news)",
			"Nothing to do: fewer ignored fields means more drift is seen.", false},
	}
}

// lookupCheck returns the check with the given ID or name.
func lookupCheck(idOrName string) (Check, bool) {
	for _, c := range Checks() {
		if strings.EqualFold(string(c.ID), idOrName) || c.Name == idOrName {
			return c, true
		}
	}
	return Check{}, false
}

// Change says how a finding relates to the base revision under --base.
type Change string

// Changes relative to --base.
const (
	ChangeAdded   Change = "added"
	ChangeWidened Change = "widened"
	ChangeRemoved Change = "removed"
)

// Finding is one problem found by one check.
type Finding struct {
	Check    CheckID  `json:"check"`
	Name     string   `json:"name"`
	Severity Severity `json:"severity"`
	Message  string   `json:"message"`
	Hint     string   `json:"hint,omitempty"`
	// File is relative to the audit root (the Git top level), with '/'.
	File   string `json:"file,omitempty"`
	Line   int    `json:"line,omitempty"`
	Column int    `json:"column,omitempty"`
	// Object and Field name the rule's holder, as in model.Origin.
	Object string       `json:"object,omitempty"`
	Field  string       `json:"field,omitempty"`
	Engine model.Engine `json:"engine,omitempty"`
	// Change is set under --base: the rule is new, wider, or gone.
	Change Change `json:"change,omitempty"`
	// Repeats counts identical findings folded into this one (rules
	// expanded from one line, e.g. groups x kinds of one exclusion); 0
	// when there is one.
	Repeats int `json:"repeats,omitempty"`

	// ruleKey ties the finding to the rule it is about (empty for findings
	// about files or configuration); --base uses it.
	ruleKey string
	// count carries a number the base comparison needs (budget findings).
	count int
}

// Position renders file:line:column.
func (f Finding) Position() string {
	s := f.File
	if f.Line > 0 {
		s += fmt.Sprintf(":%d", f.Line)
		if f.Column > 0 {
			s += fmt.Sprintf(":%d", f.Column)
		}
	}
	return s
}

// less orders findings by position as rules are ordered
// (model.Origin.Compare), then by check and message.
func (f Finding) less(o Finding) bool {
	return cmp.Or(f.position().Compare(o.position()), cmp.Compare(f.Check, o.Check), cmp.Compare(f.Message, o.Message)) < 0
}

func (f Finding) position() model.Origin {
	return model.Origin{File: f.File, Line: f.Line, Column: f.Column}
}

// newFinding fills in the check's name and default hint.
func newFinding(id CheckID, msg string) Finding {
	c, _ := lookupCheck(string(id))
	return Finding{Check: id, Name: c.Name, Severity: c.Severity, Message: msg, Hint: c.Hint}
}

// atOrigin places a finding at a rule's origin.
func (f Finding) atOrigin(o model.Origin) Finding {
	f.File, f.Line, f.Column = o.File, o.Line, o.Column
	f.Object, f.Field = o.Object, o.Field
	return f
}
