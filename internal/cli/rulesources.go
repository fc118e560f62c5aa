package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/engine"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/output"
)

// RuleSourceFlags are the rule and object sources shared by `rules`,
// `compare` and `normalize`: files and directories of YAML, kustomize
// directories, and the cluster.
type RuleSourceFlags struct {
	// Paths are files or directories ("-" for stdin).
	Paths []string
	// Kustomize are directories built with kustomize (-k).
	Kustomize []string
	// FromCluster reads Applications, argocd-cm, Kustomizations and
	// HelmReleases from the cluster (get/list only).
	FromCluster bool
	// Effect (compare --from-cluster) also lists the live objects of the
	// kinds the rules name, one LIST per kind, to compare by effect.
	Effect bool
}

// AddFlags binds the flags; paths come from positional arguments.
func (f *RuleSourceFlags) AddFlags(cmd *cobra.Command) {
	cmd.Flags().StringArrayVarP(&f.Kustomize, "kustomize", "k", nil, "kustomize directory to build and read (repeatable)")
	cmd.Flags().BoolVar(&f.FromCluster, "from-cluster", false, "also read rules from the cluster (Applications, argocd-cm, Kustomizations, HelmReleases)")
}

// ruleInputs is what the rule commands read.
type ruleInputs struct {
	Rules []model.Rule
	// Objects are the non-engine objects of the given files, for
	// comparing rules by effect.
	Objects []*unstructured.Unstructured
	// Problems are inputs that could not be read, one line each
	// ("file:line: error"); they were skipped.
	Problems []string
	// Read counts the documents (and cluster objects) read.
	Read int
	// Owners names the engine objects reconciling an object (the
	// adapters' Owner); nil when unknown.
	Owners func(obj *unstructured.Unstructured) []model.Owner
}

// inputLoader reads rules and objects; tests replace it.
type inputLoader func(ctx context.Context, g *GlobalOptions, f *RuleSourceFlags) (*ruleInputs, error)

// ruleSourceOptions are the options `rules` and `compare` share: the
// sources they read, -o, and the loader tests replace.
type ruleSourceOptions struct {
	*GlobalOptions
	Sources RuleSourceFlags
	Output  string

	load inputLoader
}

// newRuleSourceOptions returns the shared defaults (a table, the engines'
// own reading).
func newRuleSourceOptions(g *GlobalOptions) ruleSourceOptions {
	return ruleSourceOptions{GlobalOptions: g, Output: "table", load: defaultInputLoader}
}

// addFlags binds the sources' flags and -o (outputUsage adds to -o's help).
func (o *ruleSourceOptions) addFlags(cmd *cobra.Command, outputUsage string) {
	o.Sources.AddFlags(cmd)
	addOutputFlag(cmd, &o.Output, tableFormats, outputUsage)
}

// Complete takes the positional paths.
func (o *ruleSourceOptions) Complete(_ *cobra.Command, args []string) error {
	o.Sources.Paths = args
	return nil
}

// validateSources rejects calls with nothing to read.
func (f *RuleSourceFlags) validate() error {
	if len(f.Paths) == 0 && len(f.Kustomize) == 0 && !f.FromCluster {
		return fmt.Errorf("nothing to read: give PATH..., -k DIR or --from-cluster")
	}
	return nil
}

// reportProblems prints skipped inputs and decides the exit: only when
// nothing at all could be read is it an error (exit 2).
func reportProblems(errOut io.Writer, in *ruleInputs) error {
	for _, p := range in.Problems {
		stderrf(errOut, "warning: skipped %s\n", p)
	}
	if in.Read == 0 && len(in.Problems) > 0 {
		return &ExitError{Code: ExitFailure, Err: fmt.Errorf("nothing could be read (%d input(s) failed)", len(in.Problems))}
	}
	return nil
}

// engineEnabled applies --engine to a rule's engine.
func engineEnabled(g *GlobalOptions, e model.Engine) bool {
	return engine.Enabled(g.Engine, e)
}

// tableFormats are the -o values of rules and compare.
var tableFormats = []string{"table", "json", "yaml"}

// validateOutput checks -o for the table/json/yaml commands and makes
// "text" mean "table" (see canonicalOutput).
func validateOutput(o *string) error {
	out, err := canonicalOutput(*o, tableFormats)
	if err != nil {
		return err
	}
	*o = out
	return nil
}

// printStructured writes v as JSON (indented) or YAML (output.PrintObject).
func printStructured(w io.Writer, format string, v any) error {
	return output.PrintObject(w, output.Format(format), v)
}

func newTable(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
}

// describeRemoves renders what a rule removes.
func describeRemoves(r model.Rule) string {
	var parts []string
	if r.WholeResource {
		parts = append(parts, "whole resource")
	}
	for _, p := range r.JSONPointers {
		if p == "" {
			p = `"" (whole object)`
		}
		parts = append(parts, p)
	}
	for _, e := range r.JQPathExpressions {
		parts = append(parts, "jq:"+e)
	}
	if len(r.Managers) > 0 {
		parts = append(parts, "managers:"+strings.Join(r.Managers, ","))
	}
	if r.Value != "" {
		parts = append(parts, "value:"+r.Value)
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " ")
}
