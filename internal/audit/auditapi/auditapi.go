// Package auditapi is what an engine tells the audit (internal/audit)
// about its rules: how each rule counts, which rules reach which, the keys
// its rule shapes accept, and checks of its own over the audited files.
// Each engine fills one Engine in its registry Descriptor
// (engine.Descriptor.Audit); internal/audit reads them and names no engine.
//
// It is a package of its own, not part of internal/audit, because audit's
// tests run the shipped engines: an engine importing audit would make
// those tests an import cycle.
package auditapi

import (
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/source"
)

// CheckID identifies an audit check, e.g. DRIFT001.
type CheckID string

// The checks. IDs are stable: they are what users write in allow lists and
// what code-scanning tools key alerts on. Never renumber.
const (
	CheckTooBroad           CheckID = "DRIFT001"
	CheckDangerousTarget    CheckID = "DRIFT002"
	CheckShadowed           CheckID = "DRIFT003"
	CheckDuplicate          CheckID = "DRIFT004"
	CheckInvalid            CheckID = "DRIFT005"
	CheckMatchesNothing     CheckID = "DRIFT006"
	CheckSlowJQ             CheckID = "DRIFT007"
	CheckDriftDetectionOff  CheckID = "DRIFT008"
	CheckOverBudget         CheckID = "DRIFT009"
	CheckNoJustification    CheckID = "DRIFT010"
	CheckAllowWithoutReason CheckID = "DRIFT011"
	CheckUnparsableFile     CheckID = "DRIFT012"
	CheckRemovedRule        CheckID = "DRIFT013"
)

// Kind says what a rule hides from drift detection, for the checks that
// count and compare ignore rules. Refresh-only rules (model.ScopeRefresh)
// hide nothing whatever their kind.
type Kind int

// The kinds of rules.
const (
	// Other rules are not ignore rules (settings, annotations): the
	// engine's own checks look at them.
	Other Kind = iota
	// Field rules remove fields from the diff.
	Field
	// RenderedField rules remove fields from objects rendered outside the
	// repository (a Helm chart's): no manifest of the repository is
	// expected to match them.
	RenderedField
	// Exclusion rules hide whole objects or kinds from the engine.
	Exclusion
)

// Reach says whether rule s applies to the objects rule r applies to,
// judged by their holders alone (their selectors and paths are compared by
// the audit).
type Reach int

// The reaches.
const (
	// Apart: s never applies where r does.
	Apart Reach = iota
	// Same: s applies wherever r does (same holder, or a global rule of
	// r's instance): equal rules are duplicates, a wider s shadows r.
	Same
	// Peer: s and r are held by different objects that apply different
	// objects, yet an author could mean either for the same targets:
	// equal rules are duplicates, one of which cannot reach its targets.
	Peer
)

// Engine describes one engine's rules to the audit. Every func may be nil.
type Engine struct {
	// Name is the engine's model.Engine (its rules' Engine) and Title how
	// messages name it ("Argo CD"); the registry fills both from the
	// engine's Descriptor (engine.AuditEngines).
	Name  model.Engine
	Title string
	// Kinds classifies the engine's rule types; a type not listed is Other.
	Kinds map[model.RuleType]Kind
	// Global reports a rule that applies to every holder of its instance
	// (Argo CD's argocd-cm): it shadows holders' rules, and the same rule
	// in two files is two rules (two instances). nil: none.
	Global func(r model.Rule) bool
	// Reach relates two of the engine's rules; nil: Same when they have
	// the same holder (model.Origin.Object), else Apart.
	Reach func(s, r model.Rule) Reach
	// PeerHint is the hint of a duplicate of Reach Peer.
	PeerHint string
	// UnknownKey returns a problem with the keys of rule r's own map in
	// doc, the manifest that holds it (a misspelt key the engine's decoder
	// drops silently), or "".
	UnknownKey func(r model.Rule, doc source.Document) string
	// RenderedFrom names what renders the objects rule r targets outside
	// the repository ("the remote Helm chart podinfo"), or "", asking the
	// audited tree.
	RenderedFrom func(r model.Rule, tree Tree) string
	// AggregatedRoles says how the engine ignores the rules of aggregated
	// ClusterRoles by itself (a setting), for a note on a rule that does
	// it by hand; "" when it has no such setting.
	AggregatedRoles string
	// Checks are the engine's own checks over the audited files.
	Checks []Check
}

// Tree is what RenderedFrom may ask of the audited tree.
type Tree struct {
	// Find looks up an audited manifest by origin (File and Object).
	Find func(model.Origin) (source.Document, bool)
	// RemoteCharts lists the remote charts ("name (repository)") that the
	// kustomization in dir (relative to the audit root, '/'-separated)
	// inflates with helmCharts; nil when it has none or there is none.
	RemoteCharts func(dir string) []string
	// Chart reports whether dir (relative to the audit root) is a Helm
	// chart (holds Chart.yaml): its objects are templates the audit does
	// not render.
	Chart func(dir string) bool
}

// Check is an engine's check under one of the audit's check IDs (its
// name, severity and hint are the catalogue's; configuration enables,
// grades and allow-lists it like any other).
type Check struct {
	ID  CheckID
	Run func(in Input) []Finding
}

// Input is what an engine's check reads.
type Input struct {
	// Documents are the audited manifests, with positions.
	Documents []source.Document
	// Rules are every engine's rules extracted from them.
	Rules []model.Rule
	// Policy holds the configuration's policy switches.
	Policy Policy
}

// Policy holds the configuration's policy switches (.drift-audit.yaml
// policy:).
type Policy struct {
	// RequireSelfHeal: automatic correction of drift is required.
	RequireSelfHeal bool
}

// Finding is one finding of an engine's check: about Rule (placed at its
// origin, compared by --base), or placed at File, Line, Column.
type Finding struct {
	Message string
	// Hint replaces the check's hint when set.
	Hint         string
	Rule         *model.Rule
	File         string
	Line, Column int
	// Object and Field name what the finding is about, as in model.Origin.
	Object, Field string
}
