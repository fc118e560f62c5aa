package cli

import (
	"context"
	"errors"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/cluster"
	"github.com/kubectl-drift/kubectl-drift/internal/drift"
	"github.com/kubectl-drift/kubectl-drift/internal/engine"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/output"
	"github.com/kubectl-drift/kubectl-drift/internal/source"
)

// ExplainOptions are the flags and state of `explain`.
type ExplainOptions struct {
	*GlobalOptions

	// Filenames and Kustomize name the desired state (-f, -k); neither
	// means it is inferred from managedFields.
	Filenames []string
	Kustomize string
	// RenderFlags: --source DIR renders the desired state as the owning
	// engine would (explain_render.go).
	RenderFlags
	// LiveFile reads the live object from a file ("-" for stdin) instead
	// of the cluster: offline use, no API server needed.
	LiveFile string
	// ServerDryRun asks the Flux adapter for a server-side apply dry-run as
	// kustomize-controller/helm-controller (patch RBAC; nothing persists).
	ServerDryRun bool
	// Rules are files or directories holding the engines' own objects
	// (Argo CD Applications and argocd-cm, Flux Kustomizations and
	// HelmReleases) to judge with instead of, or besides, the cluster's.
	Rules []string
	// Output is -o: text, json or yaml.
	Output string
	// Why prints every reason whole in text output (the default view cuts
	// a reason to three lines).
	Why bool
	// QPS and Burst are client-side rate limits.
	QPS   float32
	Burst int
	// EngineCluster is where the engines' objects live, when not here.
	EngineCluster EngineClusterOptions

	// Set by Complete.
	args      []string
	format    output.Format
	namespace string
	client    *cluster.Client
	color     bool
	// fileDocs are the -f documents, read once (desired) and given to the
	// engines for the marks they carry (Flux's ssa annotations).
	fileDocs []source.Document
	// engineFlags are the engines' own flags (--argocd-namespace...), by
	// engine, registered by each engine's Descriptor.Flags.
	engineFlags map[model.Engine]engine.Flags
	now         func() time.Time
	// getenv reads $COLUMNS for the text width; tests fix it.
	getenv func(string) string
	// newAdapters builds the engine adapters; tests replace it.
	newAdapters func(ctx context.Context, o *ExplainOptions, live *unstructured.Unstructured) ([]model.Adapter, []model.Note, error)
}

// NewExplainOptions returns options with defaults.
func NewExplainOptions(g *GlobalOptions) *ExplainOptions {
	return &ExplainOptions{GlobalOptions: g, Output: string(output.Text), now: time.Now, getenv: os.Getenv, newAdapters: defaultAdapters,
		engineFlags: map[model.Engine]engine.Flags{}}
}

func newExplainCommand(g *GlobalOptions) *cobra.Command {
	o := NewExplainOptions(g)
	cmd := &cobra.Command{
		Use:   "explain TYPE/NAME [-n NAMESPACE] [-f FILE | -k DIR] [--server-dry-run] [--rules FILE]... [--live-file FILE] [-o text|wide|diff|json|yaml] [--why]",
		Short: "Explain the drift of one object: which fields, who changed them, when, and what each engine will do",
		Long: `Explain the drift of one object.

For every drifted field: its path, the desired and live values, which field
manager changed it and when (from managedFields), the cause (manual edit,
autoscaler, controller, operator), and each GitOps engine's verdict:
reverted on the next reconcile, reported only, ignored by a rule, or left
alone because the engine does not own the field.

The desired state comes from -f FILE (YAML or JSON, may hold many documents;
the one matching the object is used) or -k DIR (a kustomization). Without
either, it is inferred from field ownership: fields that a GitOps engine's
field manager (argocd-controller, kustomize-controller, helm-controller) no
longer owns, or that another manager took over, are the drift. Inferred
drift knows who changed a field, not the value the engine applied.

The live object is read from the cluster with one GET (get/list RBAC is all
the tool needs), or from --live-file for offline use. An object without
managedFields (kubectl get -o yaml hides them unless --show-managed-fields
is given) cannot be attributed: without -f/-k explain says drift cannot be
told and exits 3; with -f/-k it compares and warns that every rule that
works on field ownership does nothing.

Secret values are never printed: they show as ***.

With --engine argocd the exit code is Argo CD's sync status of the object:
1 when Argo CD shows it OutOfSync, 0 when Synced, even if other differences
(a live-only label, a field hidden by ignoreDifferences) are listed. When
Argo CD's API is reachable (--argocd-server, $ARGOCD_SERVER, or the argocd
CLI's login), its own diff decides each field; otherwise the tool computes
it, and says so. An unreachable API or a refused token is one warning, not
an error.

Exit codes follow the engines' own verdicts: 1 when the next reconcile
would change the object or an engine reports drift (Argo CD OutOfSync,
HelmRelease driftDetection warn), or its next apply fails (apply-fails),
or a verdict is unknown without -f;
0 when every difference is left as it is (left alone, ignored, not
applied, not watched; e.g. labels the engine sets itself), which are still
shown; 2 on error; 3 drift cannot be told (no managedFields and no
-f/-k).

The text view answers first (per engine: how many fields it will revert
and when, how many it leaves be), then one row per field, then each
distinct reason once with the fields it covers ([N] in the verdict
columns). On a terminal (or with $COLUMNS) it fits the width: values and
managers shorten first, the field path from the middle ("…"), then the
columns CAUSE, CHANGE, WHEN, DESIRED, CHANGED BY and LIVE are dropped in
that order; reasons are cut to three lines (--why prints them whole).
-o wide keeps every column, timestamp and reason whole.`,
		Example: `  # Why is this Deployment OutOfSync / drifted? (desired state inferred)
  kubectl drift explain deploy/web -n shop

  # Compare with the manifest in Git, as JSON
  kubectl drift explain deployment web -n shop -f apps/web.yaml -o json

  # Offline: a saved object (with managed fields) against a kustomization
  kubectl get deploy web -n shop -o yaml --show-managed-fields > live.yaml
  kubectl drift explain deploy/web --live-file live.yaml -k overlays/prod`,
		Args: cobra.RangeArgs(0, 2),
		RunE: runOptions(o),
	}
	f := cmd.Flags()
	f.StringSliceVarP(&o.Filenames, "filename", "f", nil, "File holding the desired state (YAML or JSON, '-' for stdin); may be repeated")
	f.StringVarP(&o.Kustomize, "kustomize", "k", "", "Kustomization directory whose build is the desired state")
	o.addFlags(cmd)
	f.StringVar(&o.LiveFile, "live-file", "", "Read the live object from this file ('-' for stdin) instead of the cluster")
	f.BoolVar(&o.ServerDryRun, "server-dry-run", false, "Decide with a server-side apply dry-run, exactly as the engines diff: Flux as kustomize-controller/helm-controller, Argo CD as argocd-controller for Applications with server-side diff (needs -f/-k and patch RBAC; nothing is persisted)")
	f.StringArrayVar(&o.Rules, "rules", nil, "File with Argo CD Applications/argocd-cm or Flux Kustomizations/HelmReleases to judge with (repeatable)")
	addOutputFlag(cmd, &o.Output, append(output.Formats(), "wide", outputDiff), "text fits the terminal ($COLUMNS overrides; not a terminal: nothing is cut, as kubectl get), wide keeps every column and reason whole; diff is a unified diff of live against desired, each hunk labelled with the verdicts ($KUBECTL_EXTERNAL_DIFF honoured; needs -f, -k or --source)")
	f.BoolVar(&o.Why, "why", false, "Print each reason whole (the text view cuts a reason to three lines)")
	for _, d := range engine.All() {
		if d.Flags != nil {
			if ef := d.Flags("explain", f); ef != nil {
				o.engineFlags[d.Name] = ef
			}
		}
	}
	f.Float32Var(&o.QPS, "qps", 0, "Client-side request rate limit (0: 50)")
	f.IntVar(&o.Burst, "burst", 0, "Client-side request burst (0: 100)")
	addEngineClusterFlags(f, &o.EngineCluster)
	_ = cmd.MarkFlagFilename("filename", "yaml", "yml", "json")
	_ = cmd.MarkFlagDirname("kustomize")
	_ = cmd.MarkFlagFilename("live-file", "yaml", "yml", "json")
	_ = cmd.MarkFlagFilename("rules", "yaml", "yml", "json")
	cmd.ValidArgsFunction = objectCompletion(g)
	return cmd
}

// options are a command's options in kubectl's pattern: Complete fills
// them from the arguments, Validate checks them, Run does the work.
type options interface {
	Complete(cmd *cobra.Command, args []string) error
	Validate() error
	Run(ctx context.Context) error
}

// runOptions is the RunE of a command with such options: Complete,
// Validate, then Run; an error exits 2 unless it carries its own code.
func runOptions(o options) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if err := o.Complete(cmd, args); err != nil {
			return failure(err)
		}
		if err := o.Validate(); err != nil {
			return failure(err)
		}
		return failure(o.Run(cmd.Context()))
	}
}

// failure marks an error as exit code 2 (errors that are already
// ExitErrors keep their code).
func failure(err error) error {
	if err == nil {
		return nil
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return err
	}
	return &ExitError{Code: ExitFailure, Err: err}
}

// objectCompletion completes "TYPE/NAME" and "TYPE NAME" the way kubectl
// get does (k8s.io/kubectl/pkg/util/completion,
// ResourceTypeAndNameCompletionFunc): resource types from discovery, then
// the names of that type in the namespace. explain takes one object, so
// nothing is offered after it. Errors complete nothing, silently.
func objectCompletion(g *GlobalOptions) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		none := cobra.ShellCompDirectiveNoFileComp
		if len(args) >= 2 || (len(args) == 1 && strings.Contains(args[0], "/")) {
			return nil, none
		}
		c, err := cluster.New(g.ConfigFlags, cluster.Options{})
		if err != nil {
			return nil, none
		}
		ns, _, _ := c.Namespace()
		typ, prefix, slash := strings.Cut(toComplete, "/")
		switch {
		case len(args) == 1:
			typ, prefix = args[0], toComplete
		case !slash:
			types, err := c.ResourceTypes()
			if err != nil {
				return nil, none
			}
			var out []string
			for _, t := range types {
				if strings.HasPrefix(t, toComplete) {
					out = append(out, t)
				}
			}
			return out, none
		}
		names, err := c.Names(cmd.Context(), typ, ns)
		if err != nil {
			return nil, none
		}
		var out []string
		for _, n := range names {
			if !strings.HasPrefix(n, prefix) {
				continue
			}
			if len(args) == 1 {
				out = append(out, n)
			} else {
				out = append(out, typ+"/"+n)
			}
		}
		return out, none
	}
}

// Complete resolves flags and arguments into clients and settings.
func (o *ExplainOptions) Complete(cmd *cobra.Command, args []string) error {
	o.args = args
	o.color = output.ColorEnabled(o.Out, nil)
	if o.LiveFile != "" {
		// Offline: no API server is contacted at all.
		return nil
	}
	var err error
	o.client, err = cluster.New(o.ConfigFlags, cluster.Options{QPS: o.QPS, Burst: o.Burst})
	if err != nil {
		return err
	}
	o.namespace, _, err = o.client.Namespace()
	if err != nil {
		return cluster.ConfigError(err)
	}
	return nil
}

// Validate checks flag combinations; it does no I/O.
func (o *ExplainOptions) Validate() error {
	var err error
	if o.Output == outputDiff {
		o.format = output.Text
	} else if o.format, err = output.ParseFormat(o.Output); err != nil {
		return err
	}
	if err := o.ValidateEngine(); err != nil {
		return err
	}
	if len(o.Filenames) > 0 && o.Kustomize != "" {
		return errors.New("-f and -k are mutually exclusive: give the desired state one way")
	}
	if err := o.validateSource(); err != nil {
		return err
	}
	stdin := 0
	for _, f := range o.Filenames {
		if f == "" {
			return errors.New("-f needs a file name")
		}
		if f == "-" {
			stdin++
		}
	}
	if o.LiveFile == "-" {
		stdin++
	}
	if err := o.EngineCluster.validate(o.LiveFile != ""); err != nil {
		return err
	}
	if stdin > 1 {
		return errors.New("only one of -f and --live-file can read stdin ('-')")
	}
	// With --live-file the object may go unnamed (the file holds one).
	if o.LiveFile == "" || len(o.args) > 0 {
		if _, _, err := cluster.ParseArgs(o.args); err != nil {
			return err
		}
	}
	return nil
}

// Run builds the report and prints it. It returns nil (exit 0) when no
// field counts as drift, errDrift (exit 1) when one does.
func (o *ExplainOptions) Run(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	// Inputs named by the engines' flags (--argocd-diff) fail early.
	for _, d := range engine.All() {
		if ef := o.engineFlags[d.Name]; ef != nil {
			if err := ef.Complete(); err != nil {
				return failure(err)
			}
		}
	}
	live, err := o.live(ctx)
	if err != nil {
		return failure(err)
	}
	o.remember(live)
	report, err := o.explain(ctx, live)
	if err != nil {
		return failure(err)
	}
	if o.Output == outputDiff {
		output.MaskSecrets(report)
		if err := o.printDiff(live, report); err != nil {
			return err
		}
	} else {
		opts := output.Options{Format: o.format, Color: o.color, Now: o.now, Width: output.TextWidth(o.Output, o.Out, o.getenv),
			Wide: o.Output == "wide", Why: o.Why}
		if err := output.PrintReport(o.Out, report, opts); err != nil {
			return failure(err)
		}
	}
	switch explainExitCode(o.Engine, report) {
	case ExitDrift:
		return errDrift
	case ExitUndetermined:
		return &ExitError{Code: ExitUndetermined}
	}
	return nil
}

// live reads the live object from the cluster (one GET) or from --live-file.
func (o *ExplainOptions) live(ctx context.Context) (*unstructured.Unstructured, error) {
	if o.LiveFile != "" {
		return o.liveFromFile()
	}
	target, err := o.client.Resolve(o.args, o.namespace)
	if err != nil {
		return nil, err
	}
	obj, err := o.client.Get(ctx, target.GVK, target.Namespace, target.Name)
	if err != nil {
		return nil, err
	}
	if obj.GetKind() == "" {
		obj.SetGroupVersionKind(target.GVK)
	}
	return obj, nil
}

// liveFromFile reads the live object from --live-file: the one it
// holds, or the one the arguments name (drift.Inputs.LiveFile).
func (o *ExplainOptions) liveFromFile() (*unstructured.Unstructured, error) {
	var typ, name string
	if len(o.args) > 0 {
		typ, name, _ = cluster.ParseArgs(o.args)
	}
	return o.inputs().LiveFile(o.LiveFile, typ, name)
}

// inputs is where explain's files are read from and whom they are told:
// stdin, the Secret scrubber, warnings on stderr.
func (o *ExplainOptions) inputs() drift.Inputs {
	return drift.Inputs{In: o.In, Remember: o.remember, Warn: o.warnf}
}

// warnf prints a warning on stderr.
func (o *ExplainOptions) warnf(msg string) { stderrf(o.ErrOut, "warning: %s\n", msg) }

// explain reads the desired state and the engines' adapters, then runs
// the pipeline (drift.Explain) on one live object.
func (o *ExplainOptions) explain(ctx context.Context, live *unstructured.Unstructured) (*model.Report, error) {
	desired, src, err := o.desired(ctx, live)
	if err != nil {
		return nil, err
	}
	adapters, adapterNotes, err := o.newAdapters(ctx, o, live)
	if err != nil {
		return nil, err
	}
	report, err := drift.Explain(ctx, drift.Request{
		Live: live, Desired: desired, Source: src,
		Engine:        o.Engine,
		Adapters:      adapters,
		Notes:         adapterNotes,
		Bystanders:    drift.Bystanders(ctx, o.Engine, o.engineFlags),
		CompareStatus: drift.ComparesStatus(o.Engine),
		Offline:       o.LiveFile != "",
		Secrets:       o.Secrets,
		Warn:          o.warnf,
	})
	if err != nil {
		return nil, err
	}
	return report, nil
}

// desired loads the desired state: the document of -f/-k that is this
// object (drift.Inputs.Desired), the render of --source, or nil
// (inferred) when none is given.
func (o *ExplainOptions) desired(ctx context.Context, live *unstructured.Unstructured) (*unstructured.Unstructured, model.DesiredSource, error) {
	files := drift.DesiredFiles{Filenames: o.Filenames, Kustomize: o.Kustomize, Namespace: o.namespace}
	switch {
	case len(o.Filenames) > 0:
	case o.Kustomize != "":
		var err error
		if files.KustomizeOptions, err = o.kustomizeOptions(); err != nil {
			return nil, model.SourceKustomize, err
		}
	case o.Source != "":
		return o.desiredFromSource(ctx, live)
	}
	d, err := o.inputs().Desired(files, live)
	if len(o.Filenames) > 0 {
		o.fileDocs = d.FileDocs
	}
	return d.Object, d.Source, err
}

// defaultAdapters builds the adapters of the engines --engine selects
// (drift.Adapters) with the --rules documents (drift.Inputs.Rules) and
// the clients explain holds: the live cluster's, or the engines' own
// cluster (--engine-context).
func defaultAdapters(ctx context.Context, o *ExplainOptions, live *unstructured.Unstructured) ([]model.Adapter, []model.Note, error) {
	ruleDocs, notes, err := o.inputs().Rules(o.Engine, o.Rules)
	if err != nil {
		return nil, nil, err
	}
	cfg := engine.Config{
		Purpose: engine.ForExplain, Documents: ruleDocs, Manifests: o.fileDocs, Live: live,
		Offline: o.LiveFile != "", ServerDryRun: o.ServerDryRun, RESTConfig: o.ConfigFlags.ToRESTConfig,
	}
	if o.client != nil {
		cfg.Reader, cfg.RESTMapper = o.client, o.ConfigFlags.ToRESTMapper
		// Called by an engine only when a verdict needs the schema (Argo
		// CD: a managedFieldsManagers rule, a structured-merge or
		// server-side diff), for the object's group-version: its OpenAPI
		// v3 document from the disk cache, never the whole /openapi/v2.
		cfg.Schema = o.client.OpenAPIModels
		if !cfg.Offline {
			cfg.Server = o.client.Host()
		}
	}
	if err := o.EngineCluster.configure(&cfg, o.ConfigFlags, o.client, cluster.Options{QPS: o.QPS, Burst: o.Burst}); err != nil {
		return nil, nil, err
	}
	adapters, adapterNotes, err := drift.Adapters(ctx, o.Engine, cfg, o.engineFlags)
	if err != nil {
		return nil, nil, err
	}
	return adapters, append(notes, adapterNotes...), nil
}

// oneLine folds a multi-line message onto one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
