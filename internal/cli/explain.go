package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kustomize/api/konfig"

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

func (o *ExplainOptions) liveFromFile() (*unstructured.Unstructured, error) {
	docs, err := source.LoadFiles([]string{o.LiveFile}, o.In, source.Options{NoPositions: true})
	if err != nil {
		return nil, fmt.Errorf("--live-file: %w", loadError(err))
	}
	var objs []*unstructured.Unstructured
	for _, d := range docs {
		objs = append(objs, expandList(d.Object)...)
	}
	o.remember(objs...)
	if len(objs) == 0 {
		return nil, fmt.Errorf("--live-file %s holds no Kubernetes object", o.LiveFile)
	}
	if len(o.args) == 0 {
		if len(objs) > 1 {
			return nil, fmt.Errorf("--live-file %s holds %d objects: name one as TYPE/NAME", o.LiveFile, len(objs))
		}
		return objs[0], nil
	}
	typ, name, _ := cluster.ParseArgs(o.args)
	var match []*unstructured.Unstructured
	for _, obj := range objs {
		if obj.GetName() == name && typeMatchesKind(typ, obj.GetObjectKind().GroupVersionKind()) {
			match = append(match, obj)
		}
	}
	switch len(match) {
	case 0:
		return nil, fmt.Errorf("--live-file %s holds no %s named %q", o.LiveFile, typ, name)
	case 1:
		return match[0], nil
	}
	return nil, fmt.Errorf("--live-file %s holds %d objects named %s/%s: keep one", o.LiveFile, len(match), typ, name)
}

// typeMatchesKind compares a command-line type with a kind without a
// cluster to ask: "deploy", "deployment", "deployments", "Deployment",
// "deployments.apps" all name apps/Deployment. Offline there is no
// discovery, so only the common short names are known.
func typeMatchesKind(typ string, gvk schema.GroupVersionKind) bool {
	t := strings.ToLower(typ)
	res, group, _ := strings.Cut(t, ".")
	if group != "" {
		// "deployments.apps" or "deployments.v1.apps".
		if i := strings.LastIndex(group, "."); i >= 0 && strings.HasPrefix(group, "v") {
			group = group[i+1:]
		}
		if group != strings.ToLower(gvk.Group) {
			return false
		}
	}
	kind := strings.ToLower(gvk.Kind)
	if res == kind || res == kind+"s" || res == kind+"es" || (strings.HasSuffix(kind, "y") && res == kind[:len(kind)-1]+"ies") {
		return true
	}
	return offlineShortName(res) == kind
}

// offlineShortName maps kubectl's short names of built-in kinds to the
// lower-case kind, for --live-file without a cluster.
func offlineShortName(short string) string {
	switch short {
	case "deploy":
		return "deployment"
	case "cm":
		return "configmap"
	case "svc":
		return "service"
	case "sa":
		return "serviceaccount"
	case "ds":
		return "daemonset"
	case "sts":
		return "statefulset"
	case "rs":
		return "replicaset"
	case "po":
		return "pod"
	case "ns":
		return "namespace"
	case "ing":
		return "ingress"
	case "pvc":
		return "persistentvolumeclaim"
	case "pv":
		return "persistentvolume"
	case "hpa":
		return "horizontalpodautoscaler"
	case "cj":
		return "cronjob"
	case "netpol":
		return "networkpolicy"
	case "pdb":
		return "poddisruptionbudget"
	case "crd":
		return "customresourcedefinition"
	case "ep":
		return "endpoints"
	case "limits":
		return "limitrange"
	case "quota":
		return "resourcequota"
	case "no":
		return "node"
	case "sc":
		return "storageclass"
	}
	return ""
}

// expandList flattens a `kind: List` (what kubectl get -o yaml prints for
// several objects) into its items.
func expandList(obj *unstructured.Unstructured) []*unstructured.Unstructured {
	if obj == nil {
		return nil
	}
	if !obj.IsList() {
		return []*unstructured.Unstructured{obj}
	}
	var out []*unstructured.Unstructured
	_ = obj.EachListItem(func(o runtime.Object) error {
		if u, ok := o.(*unstructured.Unstructured); ok {
			out = append(out, u)
		}
		return nil
	})
	return out
}

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
		Bystanders:    o.bystanders(ctx),
		CompareStatus: comparesStatus(o.Engine),
		Offline:       o.LiveFile != "",
		Secrets:       o.Secrets,
		Warn:          func(msg string) { stderrf(o.ErrOut, "warning: %s\n", msg) },
	})
	if err != nil {
		return nil, err
	}
	return report, nil
}

// bystanders are the adapters of the engines --engine left out, asked only
// who owns the object.
func (o *ExplainOptions) bystanders(ctx context.Context) []model.Adapter {
	var out []model.Adapter
	for _, d := range engine.Others(o.Engine) {
		if a, _, err := d.New(ctx, engine.Config{Purpose: engine.ForOwner, Flags: o.engineFlags[d.Name]}); err == nil {
			out = append(out, a)
		}
	}
	return out
}

// comparesStatus: a status in the desired state is compared only for an
// engine that judges it (Argo CD, per resource.compareoptions
// ignoreResourceStatusField); Flux applies with server-side apply, which
// never writes status.
func comparesStatus(selected string) bool {
	d, ok := engine.Lookup(selected)
	return ok && d.ComparesStatus
}

// rulesEngineMismatch warns when --rules holds only objects of engines
// --engine leaves out (or of no engine): they would be ignored silently.
func rulesEngineMismatch(selected string, docs []source.Document, files []string) string {
	count := map[model.Engine]int{}
	for _, d := range source.WithObject(docs) {
		if e, ok := engine.EngineOf(d.Object); ok {
			count[e.Name]++
		}
	}
	what := strings.Join(files, ", ")
	var kinds, present, use []string
	for _, d := range engine.All() {
		kinds = append(kinds, d.RuleObjects)
		if count[d.Name] > 0 {
			present = append(present, d.Title)
			use = append(use, "--engine "+string(d.Name))
		}
	}
	switch {
	case len(present) == 0:
		return fmt.Sprintf("--rules %s holds no %s: it adds no rule", what, strings.Join(kinds, " and no "))
	case selected != engine.Auto && count[model.Engine(selected)] == 0:
		return fmt.Sprintf("--rules %s holds only %s objects, which --engine %s does not use (use %s or auto)", what, engine.Or(present), selected, strings.Join(use, ", "))
	}
	return ""
}

// desired loads the desired state: the document of -f/-k that is this
// object, or nil (inferred) when neither flag is given.
func (o *ExplainOptions) desired(ctx context.Context, live *unstructured.Unstructured) (*unstructured.Unstructured, model.DesiredSource, error) {
	var (
		docs []source.Document
		err  error
		src  model.DesiredSource
		from string
	)
	switch {
	case len(o.Filenames) > 0:
		// Compared, not cited: no YAML node trees kept (a 4 MB
		// manifest would hold hundreds of MB of them).
		hint := ""
		for _, f := range o.Filenames {
			if k := kustomizationIn(f); k != "" {
				// The raw files of an overlay are not what gets applied
				// (patches, name prefixes, generated ConfigMaps...).
				hint = fmt.Sprintf("%s holds %s: -f reads its files as they are; use -k %s to compare with its kustomize build", f, k, f)
			}
		}
		docs, err = source.LoadFiles(o.Filenames, o.In, source.Options{NoPositions: true})
		o.fileDocs = docs
		if hint != "" {
			if err != nil {
				return nil, model.SourceFile, fmt.Errorf("%w (%s)", loadError(err), hint)
			}
			stderrf(o.ErrOut, "warning: %s\n", hint)
		}
		src, from = model.SourceFile, strings.Join(o.Filenames, ", ")
	case o.Kustomize != "":
		kopts, kerr := o.kustomizeOptions()
		if kerr != nil {
			return nil, model.SourceKustomize, kerr
		}
		docs, err = source.LoadKustomizeWith(o.Kustomize, kopts)
		src, from = model.SourceKustomize, o.Kustomize
	case o.Source != "":
		return o.desiredFromSource(ctx, live)
	default:
		return nil, model.SourceManagedFields, nil
	}
	var objs []*unstructured.Unstructured
	for _, d := range docs {
		objs = append(objs, expandList(d.Object)...)
	}
	o.remember(objs...)
	if err != nil {
		// Even one bad document fails the command: a desired state read
		// in part would report drift that is not there.
		return nil, src, loadError(err)
	}
	obj, err := drift.PickDocument(objs, live, o.namespace)
	if err != nil {
		return nil, src, fmt.Errorf("%s: %w", from, err)
	}
	return obj, src, nil
}

// kustomizationIn returns the kustomization file name in dir ("" when
// path is not a directory or holds none), by the names kustomize looks for.
func kustomizationIn(path string) string {
	if fi, err := os.Stat(path); err != nil || !fi.IsDir() {
		return ""
	}
	for _, name := range konfig.RecognizedKustomizationFileNames() {
		if _, err := os.Stat(filepath.Join(path, name)); err == nil {
			return name
		}
	}
	return ""
}

// loadError keeps a loader's error to one line: the loaders join one
// error per bad document, and the user needs the first, and how many more.
func loadError(err error) error {
	des := source.DocumentErrors(err)
	switch {
	case len(des) > 1:
		return fmt.Errorf("%w (and %d more problems)", oneLineError{des[0]}, len(des)-1)
	case len(des) == 1:
		return oneLineError{des[0]}
	}
	return oneLineError{err}
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// oneLineError is err told on one line (a YAML or label-selector error
// may span lines; a command's error is one line), still unwrapping to err
// so that callers can tell what failed.
type oneLineError struct{ err error }

func (e oneLineError) Error() string { return oneLine(e.err.Error()) }
func (e oneLineError) Unwrap() error { return e.err }

// defaultAdapters builds the adapters of the engines --engine selects
// (auto: all) through the registry; commands never reach into an
// adapter's internals. Problems that leave an engine partly blind (no
// OpenAPI schema) become notes.
func defaultAdapters(ctx context.Context, o *ExplainOptions, live *unstructured.Unstructured) ([]model.Adapter, []model.Note, error) {
	var ruleDocs []source.Document
	var notes []model.Note
	if len(o.Rules) > 0 {
		var err error
		if ruleDocs, err = source.LoadFiles(o.Rules, o.In, source.Options{}); err != nil {
			return nil, nil, fmt.Errorf("--rules: %w", loadError(err))
		}
		for _, d := range ruleDocs {
			o.remember(d.Object)
		}
		if msg := rulesEngineMismatch(o.Engine, ruleDocs, o.Rules); msg != "" {
			stderrf(o.ErrOut, "warning: %s\n", msg)
			notes = append(notes, model.Note{Level: model.NoteWarning, Reason: "rules-unused", Message: msg})
		}
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
	var out []model.Adapter
	for _, d := range engine.Selected(o.Engine) {
		cfg.Flags, cfg.Named = o.engineFlags[d.Name], o.Engine == string(d.Name)
		a, n, err := d.New(ctx, cfg)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", d.Name, err)
		}
		out = append(out, a)
		notes = append(notes, n...)
	}
	return out, notes, nil
}
