package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kubectl-drift/kubectl-drift/internal/engine"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/output"
	"github.com/kubectl-drift/kubectl-drift/internal/source"
	"github.com/kubectl-drift/kubectl-drift/internal/suggest"
	"github.com/kubectl-drift/kubectl-drift/internal/suggest/suggestapi"
)

// SuggestOptions are the flags and state of `suggest`.
type SuggestOptions struct {
	*GlobalOptions
	ReportInputs

	Output string

	args   []string
	format output.Format
}

// NewSuggestOptions returns options with defaults.
func NewSuggestOptions(g *GlobalOptions) *SuggestOptions {
	return &SuggestOptions{GlobalOptions: g, Output: string(output.Text)}
}

func newSuggestCommand(g *GlobalOptions) *cobra.Command {
	o := NewSuggestOptions(g)
	cmd := &cobra.Command{
		Use:   "suggest TYPE/NAME [-f FILE | -k DIR] [--rules FILE]... [-o text|json|yaml]",
		Short: "Propose the smallest rule that makes each engine leave controller-owned fields alone",
		Long: `For each drifted field that a controller owns (an HPA or VPA, a built-in
controller, an operator or webhook) and that an engine would still revert
or report, print the smallest rule, in both engines' syntax:

  Argo CD  spec.ignoreDifferences: managedFieldsManagers when the writer's
           manager name is stable, a jq path for an item of a keyed list,
           a JSON pointer otherwise; plus syncOptions
           RespectIgnoreDifferences=true when Git holds the field (a sync
           would write Git's value anyway).
  Flux     Kustomization spec.ignore, HelmRelease spec.driftDetection.ignore,
           with a target naming the object; or the advice to remove the
           field from Git where a rule is not enough (replicas with an HPA).

Each rule is checked before it is shown: it is added to the engine object
that reconciles the object (read from the cluster or --rules), our own
judge must then leave the field alone, and audit must find no error in the
engine object as it would be committed. Manual edits get no rule: adopt
them (kubectl drift adopt) or let the engine revert them.

The cluster is only read. Exit codes: 0 done (suggestions or none), 2 error.`,
		Example: `  # Why does Argo CD keep fighting the HPA? Get the rule.
  kubectl drift suggest deploy/web -n shop

  # Offline, with the Kustomization from Git
  kubectl drift suggest deploy/web --live-file live.yaml -f web.yaml --rules clusters/prod/apps.yaml`,
		Args: cobra.RangeArgs(0, 2),
		RunE: runOptions(o),
	}
	f := cmd.Flags()
	o.bind(f, "File holding the desired state (may be repeated)", "Kustomization directory whose build is the desired state",
		"File with the Argo CD Application or Flux Kustomization/HelmRelease to check the rules against (repeatable)")
	f.StringVarP(&o.Output, "output", "o", o.Output, outputHelp(output.Formats(), ""))
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(output.Formats(), cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.MarkFlagFilename("filename", "yaml", "yml", "json")
	_ = cmd.MarkFlagDirname("kustomize")
	_ = cmd.MarkFlagFilename("rules", "yaml", "yml", "json")
	cmd.ValidArgsFunction = objectCompletion(g)
	return cmd
}

// Complete keeps the arguments.
func (o *SuggestOptions) Complete(_ *cobra.Command, args []string) error {
	o.args = args
	return nil
}

// Validate checks flags; it does no I/O.
func (o *SuggestOptions) Validate() error {
	var err error
	if o.format, err = output.ParseFormat(o.Output); err != nil {
		return err
	}
	if len(o.args) == 0 && o.LiveFile == "" {
		return fmt.Errorf("name the object: TYPE/NAME")
	}
	return nil
}

// suggestionList is the -o json|yaml document.
type suggestionList struct {
	APIVersion string               `json:"apiVersion"`
	Kind       string               `json:"kind"`
	Resource   model.ResourceID     `json:"resource"`
	Items      []suggest.Suggestion `json:"items"`
}

// Run builds, checks and prints the suggestions.
func (o *SuggestOptions) Run(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ex, err := explainReport(ctx, o.GlobalOptions, o.args, o.request())
	if err != nil {
		return err
	}
	engines := engine.SuggestEngines()
	holders, missing := o.holders(ctx, ex, engines)
	copts := suggest.CheckOptions{Extractors: auditExtractors()}
	for _, h := range holders {
		if h.Engine.NeedsSchema && ex.client != nil && copts.Schema == nil {
			// As explain does: such rules are evaluated with the
			// cluster's schema of the object's group-version, read here
			// once so that a failure is said.
			gv := ex.live.GroupVersionKind().GroupVersion()
			models, err := ex.client.OpenAPIModels(gv)
			if err != nil {
				missing = append(missing, "cluster OpenAPI schema: "+oneLine(err.Error()))
				break
			}
			copts.Schema = func(g schema.GroupVersion) (map[string]*spec.Schema, error) {
				if g == gv {
					return models, nil
				}
				return ex.client.OpenAPIModels(g)
			}
		}
	}
	list := suggestionList{APIVersion: model.APIVersion, Kind: "SuggestionList", Resource: ex.report.Resource, Items: []suggest.Suggestion{}}
	for _, s := range suggest.Build(ex.report, engines) {
		s.NotChecked = append([]string(nil), missing...)
		list.Items = append(list.Items, s)
	}
	suggest.CheckAll(ctx, list.Items, holders, ex.report, ex.live, ex.desired, copts)
	switch o.format {
	case output.JSON, output.YAML:
		return output.PrintObject(o.Out, o.format, list)
	}
	_, err = io.WriteString(o.Out, textSuggestions(list, engines, holders))
	return err
}

// holders reads the engine objects that reconcile the object
// (suggest.Holders): from --rules first, then from the cluster explain
// read the object from.
func (o *SuggestOptions) holders(ctx context.Context, ex *explained, engines []suggestapi.Semantics) ([]suggest.EngineObject, []string) {
	var ruleDocs []source.Document
	if len(o.Rules) > 0 {
		ruleDocs, _ = source.LoadFiles(o.Rules, o.In, source.Options{NoPositions: true})
	}
	// A nil *cluster.Client in the interface would not be a nil Reader.
	var reader model.Reader
	if ex.client != nil {
		reader = ex.client
	}
	return suggest.Holders(ctx, ex.report.Owners, engines, ruleDocs, reader)
}

// textSuggestions renders the -o text form: each engine's rule as added to
// the engine object that reconciles the object (or the engine's first
// kind of rule holder when none was found).
func textSuggestions(list suggestionList, engines []suggestapi.Semantics, holders []suggest.EngineObject) string {
	var sb strings.Builder
	w := &sb
	fmt.Fprintf(w, "RESOURCE  %s\n", list.Resource)
	if len(list.Items) == 0 {
		fmt.Fprintln(w, "\nNo drifted field is owned by a controller that an engine would fight: nothing to declare.")
		return sb.String()
	}
	for _, it := range list.Items {
		who := it.Manager
		if who == "" {
			who = "a controller"
		}
		fmt.Fprintf(w, "\n%s  owned by %s (%s)\n", it.FieldPath, who, it.Cause)
		for _, e := range engines {
			if it.Rules[e.Engine] == nil || len(e.Holders) == 0 {
				continue
			}
			kind, where := e.Holders[0].GVK.Kind, ""
			for _, h := range holders {
				if h.Engine.Engine == e.Engine && where == "" {
					kind, where = h.Object.GetKind(), fmt.Sprintf("%s %s/%s", h.Object.GetKind(), h.Object.GetNamespace(), h.Object.GetName())
				}
			}
			if where == "" {
				where = kind + " that reconciles it"
			}
			fmt.Fprintf(w, "\n  %s, add to the %s:\n", e.Title, where)
			for _, line := range strings.Split(strings.TrimSuffix(it.Snippet(e, kind), "\n"), "\n") {
				fmt.Fprintf(w, "    %s\n", line)
			}
		}
		for _, c := range it.Checks {
			status := "ok"
			if !c.OK {
				status = "NOT ENOUGH"
			}
			fmt.Fprintf(w, "\n  checked: %s with the rule: %s verdict %s; audit: %s -> %s\n", c.Owner, c.Engine, c.Verdict, auditSummary(c), status)
		}
		for _, n := range it.NotChecked {
			fmt.Fprintf(w, "  not checked: %s\n", n)
		}
		for _, a := range it.Advice {
			fmt.Fprintf(w, "  advice: %s\n", a)
		}
	}
	return sb.String()
}

func auditSummary(c suggest.Checked) string {
	if len(c.Audit) == 0 {
		return "no finding"
	}
	var parts []string
	for _, f := range c.Audit {
		parts = append(parts, fmt.Sprintf("%s %s", f.Severity, f.Name))
	}
	return strings.Join(parts, ", ")
}
