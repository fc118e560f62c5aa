package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/cluster"
	"github.com/kubectl-drift/kubectl-drift/internal/compare"
	"github.com/kubectl-drift/kubectl-drift/internal/engine"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/output"
)

// CompareOptions are the flags of `compare`.
type CompareOptions struct {
	ruleSourceOptions
	// To prints the rules translated to this engine instead of the comparison.
	To string
	// Form is the YAML shape of --to: Kustomization or HelmRelease for
	// flux, Application or argocd-cm for argocd.
	Form string
	// Contexts are kubeconfig contexts whose rules are put side by side
	// (--contexts a,b): one engine instance per cluster (an argocd-cm per
	// hub, the Kustomizations of each Flux cluster).
	Contexts []string

	engines compare.Engines
}

// NewCompareOptions returns the defaults.
func NewCompareOptions(g *GlobalOptions) *CompareOptions {
	return &CompareOptions{ruleSourceOptions: newRuleSourceOptions(g)}
}

func newCompareCommand(g *GlobalOptions) *cobra.Command {
	return newCompareCmd(NewCompareOptions(g))
}

// newCompareCmd builds the command over given options (tests inject loaders).
func newCompareCmd(o *CompareOptions) *cobra.Command {
	g := o.GlobalOptions
	cmd := &cobra.Command{
		Use:   "compare [--from-cluster | --contexts A,B] [PATH...] [-k DIR] [-o table|json|yaml] [--to flux|argocd [--form FORM]]",
		Short: "Compare Argo CD ignore rules with Flux ignore rules, or translate them",
		Long: `Compare puts the Argo CD and Flux rules found in the given files (and the
cluster) side by side. For every rule it names the other engine's
counterpart and classifies it:

  equivalent      same objects, same fields
  partial         related, but one side selects other objects or removes other
                  fields (the differences are listed, with example names)
  only-argocd     translatable, but Flux has nothing like it
  only-flux       translatable, but Argo CD has nothing like it
  untranslatable  the other engine cannot say it, and why (managedFieldsManagers,
                  jq selecting array items by value, resource.exclusions, Flux
                  label selectors, whole-object ignores...)
  invalid         the rule itself is broken

Selectors are compared by the names they accept, not by spelling: Argo CD's
group/kind globs (gobwas/glob) against Flux's anchored regexes, exact names
against regexes, Argo's core group "" against Flux's empty group (which
matches every group). When the files also hold ordinary objects, each rule
is evaluated on them too: which fields of which objects each engine ignores.

--to flux|argocd prints the rules of the other engine translated, as YAML to
merge: Kustomization (or --form HelmRelease) ignore entries, or Application
ignoreDifferences (or --form argocd-cm keys). Inexact translations carry a
"# lossy:" comment, left-out parts an "# untranslatable:" comment.

--contexts a,b reads the rules of each kubeconfig context's cluster (one
read of its rule sources each) and puts them side by side, one side per
cluster: two hubs' argocd-cm, or the Kustomizations of two Flux clusters,
with a CONTEXT column; a rule no other cluster (or engine) has is
only-ENGINE@CONTEXT. An unreachable context is a warning.

Exit codes: 0 ok, 2 when nothing could be read.`,
		Example: `  # Compare an Argo CD repo with a Flux repo
  ` + g.Frontend.Name + ` compare ./argocd ./flux

  # Migrate: Argo CD rules as Flux Kustomization ignore entries
  ` + g.Frontend.Name + ` compare ./argocd --to flux > ignore.yaml

  # Check the translation says the same thing
  ` + g.Frontend.Name + ` compare ./argocd ignore.yaml

  # Two Argo CD hubs' argocd-cm side by side
  ` + g.Frontend.Name + ` compare --contexts hub-eu,hub-us`,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE:          runOptions(o),
	}
	o.addFlags(cmd, "with --to: yaml, or json for the translation records")
	cmd.Flags().BoolVar(&o.Sources.Effect, "effect", false, "with --from-cluster, also list the live objects of the kinds the rules name (one LIST per kind) and compare the rules by effect on them")
	cmd.Flags().StringVar(&o.To, "to", "", "translate the other engine's rules to this engine: flux or argocd")
	cmd.Flags().StringSliceVar(&o.Contexts, "contexts", nil, "read the rules of each of these kubeconfig contexts (comma-separated) and put them side by side, one side per cluster; an unreachable context is a warning")
	cmd.Flags().StringVar(&o.Form, "form", "", "shape of --to output: Kustomization|HelmRelease (flux), Application|argocd-cm (argocd)")
	var targets, forms []string
	for _, e := range engine.CompareEngines() {
		if e.Translator != nil {
			targets = append(targets, string(e.Engine))
			forms = append(forms, e.Translator.Forms...)
		}
	}
	_ = cmd.RegisterFlagCompletionFunc("to", cobra.FixedCompletions(targets, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("form", cobra.FixedCompletions(forms, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// Complete takes the positional paths, the engines' compare semantics and
// defaults the form to the --to engine's first.
func (o *CompareOptions) Complete(cmd *cobra.Command, args []string) error {
	if err := o.ruleSourceOptions.Complete(cmd, args); err != nil {
		return err
	}
	o.engines = engine.CompareEngines()
	if t := o.translator(); o.Form == "" && t != nil && len(t.Forms) > 0 {
		o.Form = t.Forms[0]
	}
	return nil
}

// translator is the --to engine's, nil when it has none (or no --to).
func (o *CompareOptions) translator() *compare.Translator {
	for _, e := range o.engines {
		if string(e.Engine) == o.To {
			return e.Translator
		}
	}
	return nil
}

// Validate checks flags.
func (o *CompareOptions) Validate() error {
	if err := validateOutput(&o.Output); err != nil {
		return err
	}
	if o.To == "" {
		if o.Form != "" {
			return fmt.Errorf("--form needs --to")
		}
	} else if t := o.translator(); t == nil {
		var targets []string
		for _, e := range o.engines {
			if e.Translator != nil {
				targets = append(targets, string(e.Engine))
			}
		}
		return fmt.Errorf("invalid --to %q: must be %s", o.To, engine.Or(targets))
	} else if !slices.Contains(t.Forms, o.Form) {
		return fmt.Errorf("invalid --form %q for --to %s: must be %s", o.Form, o.To, engine.Or(t.Forms))
	}
	if o.Sources.Effect && !o.Sources.FromCluster {
		return fmt.Errorf("--effect needs --from-cluster (objects in PATH... are always compared by effect)")
	}
	if len(o.Contexts) > 0 {
		switch {
		case o.Sources.FromCluster:
			return fmt.Errorf("--contexts and --from-cluster are exclusive: --contexts reads each context's cluster")
		case o.To != "":
			return fmt.Errorf("--contexts compares; it does not translate (--to)")
		case o.ConfigFlags != nil && o.ConfigFlags.Context != nil && *o.ConfigFlags.Context != "":
			return fmt.Errorf("--context and --contexts are exclusive")
		}
		seen := map[string]bool{}
		for _, c := range o.Contexts {
			if c == "" || seen[c] {
				return fmt.Errorf("invalid --contexts %q: names must be non-empty and distinct", strings.Join(o.Contexts, ","))
			}
			seen[c] = true
		}
		return nil
	}
	return o.Sources.validate()
}

// Run compares or translates.
func (o *CompareOptions) Run(ctx context.Context) error {
	in, err := o.loadInputs(ctx)
	if err != nil {
		return &ExitError{Code: ExitFailure, Err: err}
	}
	if err := reportProblems(o.ErrOut, in); err != nil {
		return err
	}
	if o.To != "" {
		to := model.Engine(o.To)
		trs, err := compare.Translate(in.Rules, to, in.Objects, o.engines)
		if err != nil {
			return &ExitError{Code: ExitFailure, Err: err}
		}
		if o.Output == "json" {
			return printStructured(o.Out, "json", map[string]any{"apiVersion": model.APIVersion, "kind": "RuleTranslationList", "items": trs})
		}
		b, err := compare.Render(trs, to, o.Form, o.engines)
		if err != nil {
			return &ExitError{Code: ExitFailure, Err: err}
		}
		_, err = o.Out.Write(b)
		return err
	}
	c := compare.Compare(in.Rules, in.Objects, compare.Options{Engines: o.engines, Owners: in.Owners})
	c.Problems = in.Problems
	if o.Output != "table" {
		return printStructured(o.Out, o.Output, c)
	}
	return printComparisonTable(o, c)
}

// loadInputs reads the given files and, with --contexts, the rules of each
// context's cluster (one read of its rule sources per context), each rule
// marked with its context. A context that cannot be read is a warning; only
// when nothing at all could be read is it an error.
func (o *CompareOptions) loadInputs(ctx context.Context) (*ruleInputs, error) {
	if len(o.Contexts) == 0 {
		return o.load(ctx, o.GlobalOptions, &o.Sources)
	}
	in := &ruleInputs{}
	if len(o.Sources.Paths) > 0 || len(o.Sources.Kustomize) > 0 {
		files, err := o.load(ctx, o.GlobalOptions, &o.Sources)
		if err != nil {
			return nil, err
		}
		in = files
	}
	owners := []func(*unstructured.Unstructured) []model.Owner{in.Owners}
	for _, c := range o.Contexts {
		g := *o.GlobalOptions
		g.ConfigFlags = cluster.ForContext(o.ConfigFlags, c)
		cin, err := o.load(ctx, &g, &RuleSourceFlags{FromCluster: true})
		if err != nil {
			in.Problems = append(in.Problems, fmt.Sprintf("context %s: %v", c, err))
			continue
		}
		for _, r := range cin.Rules {
			r.Origin.Context = c
			in.Rules = append(in.Rules, r)
		}
		for _, p := range cin.Problems {
			in.Problems = append(in.Problems, fmt.Sprintf("context %s: %s", c, p))
		}
		in.Read += cin.Read
		in.Objects = append(in.Objects, cin.Objects...)
		owners = append(owners, cin.Owners)
	}
	in.Owners = func(obj *unstructured.Unstructured) []model.Owner {
		var out []model.Owner
		for _, f := range owners {
			if f != nil {
				out = append(out, f(obj)...)
			}
		}
		return out
	}
	return in, nil
}

func printComparisonTable(o *CompareOptions, c *compare.Comparison) error {
	out := output.NewStickyWriter(o.Out)
	if len(c.Results) == 0 {
		out.Println("No rules found.")
		return out.Flush()
	}
	w := output.NewStickyWriter(newTable(out))
	contexts := len(o.Contexts) > 0
	if contexts {
		w.Println("ENGINE\tCONTEXT\tORIGIN\tTARGET\tREMOVES\tSTATUS\tCOUNTERPART / WHY")
	} else {
		w.Println("ENGINE\tORIGIN\tTARGET\tREMOVES\tSTATUS\tCOUNTERPART / WHY")
	}
	for _, r := range c.Results {
		var why []string
		for _, cp := range r.Counterparts {
			s := cp.Origin.String()
			if len(cp.Differences) > 0 {
				s += " (" + strings.Join(cp.Differences, "; ") + ")"
			}
			why = append(why, s)
		}
		why = append(why, r.Reasons...)
		if r.Effect != nil && len(r.Counterparts) > 0 {
			if r.Effect.SameAsCounterparts {
				why = append(why, fmt.Sprintf("same effect on the given objects (%d field(s))", len(r.Effect.Fields)))
			} else {
				for _, f := range r.Effect.OnlyThisRule {
					why = append(why, "only this rule ignores "+f)
				}
				for _, f := range r.Effect.OnlyCounterparts {
					why = append(why, "only the counterpart ignores "+f)
				}
			}
		}
		if len(why) == 0 {
			why = []string{"-"}
		}
		origin := r.Rule.Origin
		lead, indent := string(r.Rule.Engine), "\t\t\t\t\t"
		if contexts {
			lead += "\t" + orDash(nonEmpty(origin.Context))
			origin.Context = "" // in its own column
			indent += "\t"
		}
		w.Printf("%s\t%s\t%s\t%s\t%s\t%s\n", lead, origin.String(), r.Rule.Target.Describe(), describeRemoves(r.Rule), r.Status, why[0])
		for _, x := range why[1:] {
			w.Printf("%s%s\n", indent, x)
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	var sum []string
	// Equivalent, partial, every only-ENGINE (and only-ENGINE@CONTEXT) in
	// order, untranslatable, invalid.
	statuses := []compare.Status{compare.Equivalent, compare.Partial}
	var only []compare.Status
	for s := range c.Summary {
		if !slices.Contains([]compare.Status{compare.Equivalent, compare.Partial, compare.Untranslatable, compare.Invalid}, s) {
			only = append(only, s)
		}
	}
	slices.Sort(only)
	for _, s := range append(append(statuses, only...), compare.Untranslatable, compare.Invalid) {
		if n := c.Summary[s]; n > 0 {
			sum = append(sum, fmt.Sprintf("%d %s", n, s))
		}
	}
	out.Printf("\n%d rule(s): %s\n", len(c.Results), strings.Join(sum, ", "))
	if len(c.Objects) > 0 {
		out.Println("\nBy effect on the given objects:")
		w = output.NewStickyWriter(newTable(out))
		header := []string{"OBJECT"}
		for _, e := range o.engines {
			header = append(header, "IGNORED BY "+strings.ToUpper(e.Title)+" ONLY")
		}
		header = append(header, map[bool]string{true: "BOTH", false: "ALL"}[len(o.engines) == 2])
		w.Println(strings.Join(header, "\t"))
		names := o.engines.Names()
		for _, oe := range c.Objects {
			row := []string{oe.Object.String()}
			for _, e := range names {
				row = append(row, orDash(oe.Only[e]))
			}
			row = append(row, fmt.Sprintf("%d field(s)", oe.Common(names)))
			w.Println(strings.Join(row, "\t"))
		}
		if err := w.Flush(); err != nil {
			return err
		}
	}
	return out.Flush()
}

// nonEmpty is s as a list, empty when s is.
func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

func orDash(ss []string) string {
	if len(ss) == 0 {
		return "-"
	}
	return strings.Join(ss, " ")
}
