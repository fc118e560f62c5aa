package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kubectl-drift/kubectl-drift/internal/audit"
	"github.com/kubectl-drift/kubectl-drift/internal/engine"
)

// AuditOptions are the flags of `audit`.
type AuditOptions struct {
	*GlobalOptions

	Paths      []string
	Base       string
	MaxRules   int
	ConfigFile string
	// Exclude are gitignore-like patterns of paths not audited, added to
	// the root's .driftauditignore.
	Exclude []string
	Output  string
	// FailOn is error, warning or never: the least severe finding that
	// makes the command exit 1.
	FailOn string
	// Explain is a check ID or name (--explain CODE): print why the check
	// exists, an example and the fix, and audit nothing.
	Explain string

	root   string
	config *audit.Config
	failOn audit.Severity
	// extractors turn manifests into rules; tests may replace them.
	extractors []audit.Extractor
}

// NewAuditOptions returns the defaults.
func NewAuditOptions(g *GlobalOptions) *AuditOptions {
	return &AuditOptions{GlobalOptions: g, Output: "text", FailOn: "error", extractors: auditExtractors()}
}

func newAuditCommand(g *GlobalOptions) *cobra.Command {
	o := NewAuditOptions(g)
	var checks strings.Builder
	for _, c := range audit.Checks() {
		summary := c.Summary
		if c.OptIn {
			summary += " (off unless enabled)"
		}
		fmt.Fprintf(&checks, "  %s %-22s %-7s %s\n", c.ID, c.Name, c.Severity, summary)
	}
	cmd := &cobra.Command{
		Use:   "audit [PATH...] [--base REF] [--max-rules N] [--config FILE] [-o text|json|sarif|github] [--fail-on error|warning|never]",
		Short: "Lint the drift-ignore rules of a Git checkout (Argo CD and Flux)",
		Long: `Audit reviews the rules in a repository that make Argo CD or Flux ignore
drift: Application ignoreDifferences, argocd-cm resource customizations and
exclusions, Kustomization .spec.ignore, HelmRelease driftDetection, and the
kustomize.toolkit.fluxcd.io ssa/reconcile annotations. It works offline on the
files; every finding has a check ID, a severity, a message, a fix hint and
the file:line:column of the rule.

Checks:
` + checks.String() + `
Directories are walked for *.yaml, *.yml and *.json (hidden directories,
Helm charts and YAML that is not a Kubernetes object, such as
kustomization.yaml or values files, are skipped); a file that does not parse
is a finding, not a failure.

matches-nothing and slow-jq look at the manifests under the audited paths:
audit the whole checkout (the default) for them to see every target. The
targets of HelmRelease rules are chart objects rendered outside the
repository and are not looked for.

--base REF reports only what the working tree adds or widens relative to the
Git revision REF (for pull requests), and rules it removes as good news.

DRIFT008 (drift-detection-off) is off unless the configuration enables it
(checks: {DRIFT008: {enabled: true}}) or sets policy.requireSelfHeal: most
HelmReleases leave drift detection at helm-controller's default (off), and
on public repositories it drowned the other findings.

Configuration: --config FILE, or .drift-audit.yaml at the top of the checkout:
  checks:        {DRIFT010: {enabled: false}, too-broad: {severity: error}, DRIFT008: {enabled: true}}
  budget:        {total: 50, perApp: 10}
  justification: {required: true, pattern: "^(why|ticket):"}
  policy:        {requireSelfHeal: true}
  jq:            {timeout: 1s, slowAfter: 500ms}
  allow:         [{check: DRIFT002, file: apps/x.yaml, line: 12, reason: "..."}]

--explain CODE prints why a check exists, an example of what it finds and
the fix (kubectl drift audit --explain DRIFT002).

Exit codes: 0 no finding at or above --fail-on, 1 findings, 2 error.`,
		Example: `  # Lint the whole checkout
  ` + g.Frontend.Name + ` audit

  # In a pull request: only new findings, as GitHub annotations
  ` + g.Frontend.Name + ` audit --base origin/main -o github

  # SARIF for GitHub code scanning
  ` + g.Frontend.Name + ` audit -o sarif > drift-audit.sarif`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Explain != "" {
				return o.RunExplain(args)
			}
			if err := o.Complete(cmd.Context(), args); err != nil {
				return &ExitError{Code: ExitFailure, Err: err}
			}
			if err := o.Validate(); err != nil {
				return &ExitError{Code: ExitFailure, Err: err}
			}
			return o.Run(cmd)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Base, "base", o.Base, "Git revision to compare with: report only what the change adds or widens")
	f.StringArrayVar(&o.Exclude, "exclude", nil, "gitignore-like pattern of paths not to audit (repeatable; added to the root's "+audit.IgnoreFile+")")
	f.IntVar(&o.MaxRules, "max-rules", o.MaxRules, "Budget: the most ignore rules allowed in total (overrides the config; 0 = config)")
	f.StringVar(&o.ConfigFile, "config", o.ConfigFile, "Audit configuration file (default: .drift-audit.yaml at the top of the checkout)")
	addOutputFlag(cmd, &o.Output, audit.Formats(), "")
	f.StringVar(&o.Explain, "explain", "", "Print why the check CODE (DRIFT001..., or its name) exists, an example and its fix, and exit")
	f.StringVar(&o.FailOn, "fail-on", o.FailOn, "Exit 1 on findings at or above this severity: error, warning or never")
	_ = cmd.RegisterFlagCompletionFunc("fail-on", cobra.FixedCompletions([]string{"error", "warning", "never"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.MarkFlagFilename("config", "yaml", "yml")
	return cmd
}

// RunExplain prints the explanation of the check --explain names; it
// takes no paths (exit 2 for an unknown check or a path given).
func (o *AuditOptions) RunExplain(args []string) error {
	if len(args) > 0 {
		return &ExitError{Code: ExitFailure, Err: errors.New("--explain takes no paths: it explains a check, it audits nothing")}
	}
	text, err := audit.Explain(o.Explain)
	if err != nil {
		return &ExitError{Code: ExitFailure, Err: fmt.Errorf("--explain: %w", err)}
	}
	_, err = fmt.Fprint(o.Out, text)
	return err
}

// Complete finds the root (the Git top level, so that positions are
// repository paths) and reads the configuration.
func (o *AuditOptions) Complete(ctx context.Context, args []string) error {
	o.Paths = args
	if len(o.Paths) == 0 {
		o.Paths = []string{"."}
	}
	first, err := filepath.Abs(o.Paths[0])
	if err != nil {
		// Only a working directory that cannot be read fails here.
		return fmt.Errorf("%s: %w", o.Paths[0], err)
	}
	dir := first
	if st, err := os.Stat(first); err == nil && !st.IsDir() {
		dir = filepath.Dir(first)
	}
	if top, err := audit.GitTopLevel(ctx, dir); err == nil {
		o.root = top
	} else if o.Base != "" {
		return fmt.Errorf("--base needs a Git checkout: %w", err)
	} else if wd, err := os.Getwd(); err == nil && within(wd, o.Paths) {
		o.root = wd
	} else {
		o.root = dir
	}
	// Resolve symlinks on both sides so that paths compare (macOS /tmp).
	if r, err := filepath.EvalSymlinks(o.root); err == nil {
		o.root = r
	}
	for i, p := range o.Paths {
		if abs, err := filepath.Abs(p); err == nil {
			if r, err := filepath.EvalSymlinks(abs); err == nil {
				abs = r
			}
			o.Paths[i] = abs
		}
	}
	switch {
	case o.ConfigFile != "":
		file, err := filepath.Abs(o.ConfigFile)
		if err != nil {
			return fmt.Errorf("--config %s: %w", o.ConfigFile, err)
		}
		if o.config, err = audit.LoadConfig(file); err != nil {
			return err
		}
	default:
		def := filepath.Join(o.root, audit.DefaultConfigFile)
		o.config, err = audit.LoadConfig(def)
		if errors.Is(err, fs.ErrNotExist) {
			o.config, err = &audit.Config{}, nil
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func within(dir string, paths []string) bool {
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return false
		}
		r, err := filepath.Rel(dir, abs)
		if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			return false
		}
	}
	return true
}

// Validate checks the flag values.
func (o *AuditOptions) Validate() error {
	out, err := canonicalOutput(o.Output, audit.Formats())
	if err != nil {
		return err
	}
	o.Output = out
	switch o.FailOn {
	case "error":
		o.failOn = audit.SeverityError
	case "warning":
		o.failOn = audit.SeverityWarning
	case "never":
		o.failOn = ""
	default:
		return fmt.Errorf("invalid --fail-on %q: must be error, warning or never", o.FailOn)
	}
	if o.MaxRules < 0 {
		return fmt.Errorf("invalid --max-rules %d: must not be negative", o.MaxRules)
	}
	for _, p := range o.Paths {
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("path %s: %w", p, errors.Unwrap(err))
		}
	}
	return nil
}

// Run audits and prints; exit 1 when a finding reaches --fail-on.
func (o *AuditOptions) Run(cmd *cobra.Command) error {
	opts := audit.Options{
		Root: o.root, Paths: o.Paths, Config: o.config, MaxRules: o.MaxRules,
		Extractors: o.extractors, Exclude: o.Exclude,
		Engines: engine.AuditEngines(),
		Values:  engine.SettingsDocuments,
	}
	var res *audit.Result
	var err error
	if o.Base != "" {
		res, err = audit.RunBase(cmd.Context(), opts, o.Base)
	} else {
		res, err = audit.Run(opts)
	}
	if err != nil {
		return &ExitError{Code: ExitFailure, Err: err}
	}
	if err := audit.Render(o.Out, o.Output, res); err != nil {
		return &ExitError{Code: ExitFailure, Err: err}
	}
	if o.failOn != "" && res.Worst().AtLeast(o.failOn) {
		return &ExitError{Code: ExitDrift}
	}
	return nil
}

// auditExtractors are the registered engines' rule extractors.
func auditExtractors() []audit.Extractor {
	var out []audit.Extractor
	for _, d := range engine.All() {
		if d.RulesFromDocuments != nil {
			out = append(out, d.RulesFromDocuments)
		}
	}
	return out
}
