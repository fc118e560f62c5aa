package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kubectl-drift/kubectl-drift/internal/engine"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/output"
)

// RulesOptions are the flags of `rules`.
type RulesOptions struct {
	ruleSourceOptions
}

// RuleList is the document `rules -o json|yaml` prints.
type RuleList struct {
	APIVersion string       `json:"apiVersion"`
	Kind       string       `json:"kind"`
	Items      []model.Rule `json:"items"`
	// Problems are inputs that were skipped.
	Problems []string `json:"problems,omitempty"`
}

// NewRulesOptions returns the defaults.
func NewRulesOptions(g *GlobalOptions) *RulesOptions {
	return &RulesOptions{ruleSourceOptions: newRuleSourceOptions(g)}
}

func newRulesCommand(g *GlobalOptions) *cobra.Command {
	return newRulesCmd(NewRulesOptions(g))
}

// newRulesCmd builds the command over given options (tests inject loaders).
func newRulesCmd(o *RulesOptions) *cobra.Command {
	g := o.GlobalOptions
	cmd := &cobra.Command{
		Use:   "rules [--from-cluster] [PATH...] [-k DIR] [-o table|json|yaml]",
		Short: "List every drift-ignore rule of Argo CD and Flux in one model",
		Long: `Rules lists every instruction of Argo CD and Flux that makes a difference
not count as drift, from YAML files and directories, kustomize builds (-k) and
the cluster (--from-cluster): Application ignoreDifferences, argocd-cm
resource customizations, exclusions and compare options, Kustomization
.spec.ignore, HelmRelease .spec.driftDetection, and the Flux ssa, reconcile
and driftDetection marks on objects.

Each rule shows its engine, where it is written (file:line, or object and
field path), the objects it targets, what it removes and its scope.
--engine argocd|flux limits the list to one engine.

Unreadable files are reported with file:line and skipped. Exit codes: 0 ok,
2 when nothing could be read.`,
		Example: `  # Rules of a GitOps checkout
  ` + g.Frontend.Name + ` rules ./clusters ./apps

  # Rules live in the cluster, as JSON
  ` + g.Frontend.Name + ` rules --from-cluster -o json`,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE:          runOptions(o),
	}
	o.addFlags(cmd, "")
	return cmd
}

// Validate checks flags.
func (o *RulesOptions) Validate() error {
	if err := o.ValidateEngine(); err != nil {
		return err
	}
	if err := validateOutput(&o.Output); err != nil {
		return err
	}
	return o.Sources.validate()
}

// Run reads and prints the rules.
func (o *RulesOptions) Run(ctx context.Context) error {
	in, err := o.load(ctx, o.GlobalOptions, &o.Sources)
	if err != nil {
		return &ExitError{Code: ExitFailure, Err: err}
	}
	if err := reportProblems(o.ErrOut, in); err != nil {
		return err
	}
	list := RuleList{APIVersion: model.APIVersion, Kind: "RuleList", Items: []model.Rule{}, Problems: in.Problems}
	for _, r := range in.Rules {
		if engineEnabled(o.GlobalOptions, r.Engine) {
			list.Items = append(list.Items, r)
		}
	}
	model.SortRules(list.Items)
	if o.Output != "table" {
		return printStructured(o.Out, o.Output, list)
	}
	if len(list.Items) == 0 {
		_, err := fmt.Fprintln(o.Out, "No rules found.")
		return err
	}
	w := output.NewStickyWriter(newTable(o.Out))
	w.Println("ENGINE\tTYPE\tORIGIN\tTARGET\tREMOVES\tSCOPE")
	for _, r := range list.Items {
		removes := describeRemoves(r)
		if r.Error != "" {
			removes += " (error: " + r.Error + ")"
		}
		w.Printf("%s\t%s\t%s\t%s\t%s\t%s\n", r.Engine, displayType(r), r.Origin.String(), r.Target.Describe(), removes, r.Scope)
	}
	return w.Flush()
}

// displayType names the mechanism as the user wrote it (the engine's
// Descriptor.DisplayType, else the rule's type).
func displayType(r model.Rule) string { return engine.DisplayType(r) }
