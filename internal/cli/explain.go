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

	"github.com/kubectl-drift/kubectl-drift/internal/argocd"
	"github.com/kubectl-drift/kubectl-drift/internal/cluster"
	"github.com/kubectl-drift/kubectl-drift/internal/diff"
	"github.com/kubectl-drift/kubectl-drift/internal/flux"
	"github.com/kubectl-drift/kubectl-drift/internal/managedfields"
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
	// ArgoCDNamespace is Argo CD's control-plane namespace (argocd).
	ArgoCDNamespace string
	// ArgoCDDiff is a saved response of Argo CD's managed-resources API,
	// shown beside our verdicts (ARGOCD_SERVER + ARGOCD_AUTH_TOKEN fetch it
	// live instead).
	ArgoCDDiff string
	// ArgoAPI locates Argo CD's API server (explain_argocd.go).
	ArgoAPI ArgoAPIFlags
	// QPS and Burst are client-side rate limits.
	QPS   float32
	Burst int

	// Set by Complete.
	args      []string
	format    output.Format
	namespace string
	client    *cluster.Client
	adapters  []model.Adapter
	color     bool
	// fileDocs are the -f documents, read once (desired) and given to the
	// Flux adapter for the ssa marks they carry.
	fileDocs []source.Document
	// argoDiff is the --argocd-diff response, read once by checkArgoCDDiff.
	argoDiff *argocd.ManagedResources
	now      func() time.Time
	// getenv reads $COLUMNS for the text width; tests fix it.
	getenv func(string) string
	// newAdapters builds the engine adapters; tests replace it.
	newAdapters func(ctx context.Context, o *ExplainOptions, live *unstructured.Unstructured) ([]model.Adapter, []model.Note, error)
}

// NewExplainOptions returns options with defaults.
func NewExplainOptions(g *GlobalOptions) *ExplainOptions {
	return &ExplainOptions{GlobalOptions: g, Output: string(output.Text), now: time.Now, getenv: os.Getenv, newAdapters: defaultAdapters}
}

func newExplainCommand(g *GlobalOptions) *cobra.Command {
	o := NewExplainOptions(g)
	cmd := &cobra.Command{
		Use:   "explain TYPE/NAME [-n NAMESPACE] [-f FILE | -k DIR] [--server-dry-run] [--rules FILE]... [--live-file FILE] [-o text|json|yaml]",
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
-f/-k).`,
		Example: `  # Why is this Deployment OutOfSync / drifted? (desired state inferred)
  kubectl drift explain deploy/web -n shop

  # Compare with the manifest in Git, as JSON
  kubectl drift explain deployment web -n shop -f apps/web.yaml -o json

  # Offline: a saved object (with managed fields) against a kustomization
  kubectl get deploy web -n shop -o yaml --show-managed-fields > live.yaml
  kubectl drift explain deploy/web --live-file live.yaml -k overlays/prod`,
		Args: cobra.RangeArgs(0, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Complete(cmd, args); err != nil {
				return failure(err)
			}
			if err := o.Validate(); err != nil {
				return failure(err)
			}
			return o.Run(cmd.Context())
		},
	}
	f := cmd.Flags()
	f.StringSliceVarP(&o.Filenames, "filename", "f", nil, "File holding the desired state (YAML or JSON, '-' for stdin); may be repeated")
	f.StringVarP(&o.Kustomize, "kustomize", "k", "", "Kustomization directory whose build is the desired state")
	o.RenderFlags.addFlags(cmd)
	f.StringVar(&o.LiveFile, "live-file", "", "Read the live object from this file ('-' for stdin) instead of the cluster")
	f.BoolVar(&o.ServerDryRun, "server-dry-run", false, "Decide with a server-side apply dry-run, exactly as the engines diff: Flux as kustomize-controller/helm-controller, Argo CD as argocd-controller for Applications with server-side diff (needs -f/-k and patch RBAC; nothing is persisted)")
	f.StringArrayVar(&o.Rules, "rules", nil, "File with Argo CD Applications/argocd-cm or Flux Kustomizations/HelmReleases to judge with (repeatable)")
	f.StringVarP(&o.Output, "output", "o", o.Output, outputHelp(append(output.Formats(), "wide"), "wide is text with long reasons on one line; text wraps them to the terminal, $COLUMNS or 120 columns"))
	f.StringVar(&o.ArgoCDNamespace, "argocd-namespace", "argocd", "Namespace of Argo CD's control plane (Applications, argocd-cm)")
	f.StringVar(&o.ArgoCDDiff, "argocd-diff", "", "Argo CD's own diff: a saved GET /api/v1/applications/NAME/managed-resources response (or set ARGOCD_SERVER and ARGOCD_AUTH_TOKEN)")
	_ = cmd.MarkFlagFilename("argocd-diff", "json")
	o.ArgoAPI.addFlags(f)
	f.Float32Var(&o.QPS, "qps", 0, "Client-side request rate limit (0: 50)")
	f.IntVar(&o.Burst, "burst", 0, "Client-side request burst (0: 100)")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(output.Formats(), cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.MarkFlagFilename("filename", "yaml", "yml", "json")
	_ = cmd.MarkFlagDirname("kustomize")
	_ = cmd.MarkFlagFilename("live-file", "yaml", "yml", "json")
	_ = cmd.MarkFlagFilename("rules", "yaml", "yml", "json")
	cmd.ValidArgsFunction = objectCompletion(g)
	return cmd
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
	if o.format, err = output.ParseFormat(o.Output); err != nil {
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
	if err := o.checkArgoCDDiff(); err != nil {
		return failure(err)
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
	opts := output.Options{Format: o.format, Color: o.color, Now: o.now, Width: output.TextWidth(o.Output, o.Out, o.getenv)}
	if err := output.PrintReport(o.Out, report, opts); err != nil {
		return failure(err)
	}
	switch explainExitCode(o.Engine, report) {
	case ExitDrift:
		return errDrift
	case ExitUndetermined:
		return &ExitError{Code: ExitUndetermined}
	}
	return nil
}

// checkArgoCDDiff fails early on an --argocd-diff file that cannot be
// read (missing, over the size limit, /dev/zero) or is not a
// managed-resources response: it is an input like -f, not a hint.
// The parsed response is kept for the Argo CD adapter, which would
// otherwise read and parse the file a second time.
func (o *ExplainOptions) checkArgoCDDiff() error {
	if o.ArgoCDDiff == "" {
		return nil
	}
	mr, err := argocd.ReadManagedResources(o.ArgoCDDiff)
	var perr *argocd.ManagedResourcesError
	if errors.As(err, &perr) {
		return fmt.Errorf("--argocd-diff %s: %s", o.ArgoCDDiff, oneLine(perr.Error()))
	}
	if err != nil {
		return err
	}
	o.argoDiff = mr
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

// explain builds the report of one live object.
func (o *ExplainOptions) explain(ctx context.Context, live *unstructured.Unstructured) (*model.Report, error) {
	gvk := live.GroupVersionKind()
	id := model.ResourceID{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Namespace: live.GetNamespace(), Name: live.GetName()}
	ix, err := managedfields.Parse(live)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", id, err)
	}

	var notes []model.Note
	// Without managedFields and without a desired state there is nothing
	// to infer drift from: say so (exit 3) instead of "No drift." (exit 0).
	undetermined := ix.Empty() && len(o.Filenames) == 0 && o.Kustomize == "" && o.Source == ""
	if ix.Empty() && !undetermined {
		msg := "the live object has no managedFields: drift cannot be attributed to a manager, and every ownership-based rule (Argo CD managedFieldsManagers, Flux field ownership) silently does nothing"
		if o.LiveFile != "" {
			msg += "; save it with kubectl get -o yaml --show-managed-fields"
		}
		fmt.Fprintf(o.ErrOut, "warning: %s\n", msg)
		notes = append(notes, model.Note{Level: model.NoteWarning, Reason: "no-managed-fields", Message: msg})
	}

	desired, src, err := o.desired(ctx, live)
	if err != nil {
		return nil, err
	}
	report := model.NewReport(id, src)
	if desired != nil {
		drifts, err := diff.Compute(desired, live, diff.Options{Owned: ownedFunc(ix, live), CompareStatus: compareStatus(o.Engine)})
		if err != nil {
			return nil, fmt.Errorf("comparing %s with the desired state: %w", id, err)
		}
		report.Drifts = drifts
	} else if undetermined {
		report.Undetermined = "the live object has no managedFields, so who owns each field (and so what drifted) cannot be told; give the desired state with -f FILE or -k DIR (add --server-dry-run to decide as the engine would)"
		if o.LiveFile != "" {
			report.Undetermined += ", or save the object with kubectl get -o yaml --show-managed-fields"
		}
	} else {
		inf := diff.Infer(live, ix, diff.InferOptions{})
		report.Drifts = inf.Drifts
		notes = append(notes, inf.Notes...)
	}
	Attribute(report, live, ix)
	report.Notes = append(report.Notes, notes...)

	adapters, adapterNotes, err := o.newAdapters(ctx, o, live)
	if err != nil {
		return nil, err
	}
	report.Notes = append(report.Notes, adapterNotes...)
	for _, a := range adapters {
		if err := a.Judge(ctx, model.JudgeInput{Live: live, Desired: desired, Report: report}); err != nil {
			report.Notes = append(report.Notes, model.Note{Engine: a.Engine(), Level: model.NoteError, Reason: "judge-failed",
				Message: fmt.Sprintf("%s verdicts unavailable: %v", a.Engine(), err)})
		}
	}
	o.otherEngineOwner(report, live)
	if o.Engine == "auto" {
		report.Notes = quietUninvolvedEngines(report)
	}
	// Mask a Secret's drift values, and scrub every remembered Secret
	// value from notes and reasons (a jq error quotes the value it
	// failed on; an adapter may quote a field).
	o.Secrets.Report(report)
	report.Sort()
	return report, nil
}

// quietUninvolvedEngines drops the notes of an engine that does not
// reconcile the object when --engine was not given: on a cluster without
// Argo CD, "cannot read argocd-cm" or "no Flux ownership labels" tell a
// newcomer nothing about this object. Asking for the engine (--engine
// argocd|flux) keeps them.
func quietUninvolvedEngines(r *model.Report) []model.Note {
	involved := map[model.Engine]bool{}
	for _, ow := range r.Owners {
		involved[ow.Engine] = true
	}
	for _, d := range r.Drifts {
		for _, v := range d.Verdicts {
			if v.Kind != model.LeftAlone {
				involved[v.Engine] = true
			}
		}
	}
	kept := r.Notes[:0]
	for _, n := range r.Notes {
		// Errors stay: a broken --rules file must not vanish.
		if n.Engine != "" && !involved[n.Engine] && n.Level != model.NoteError {
			continue
		}
		kept = append(kept, n)
	}
	return kept
}

// otherEngineOwner names the owner of the engine --engine left out (a
// Flux-owned object explained with --engine argocd), so OWNER does not read
// "none" for an object that another engine reconciles. Ownership is read
// from labels and annotations only; that engine's rules are not applied.
func (o *ExplainOptions) otherEngineOwner(r *model.Report, live *unstructured.Unstructured) {
	if o.Engine == "auto" {
		return
	}
	var other model.Adapter
	switch o.Engine {
	case string(model.EngineArgoCD):
		if a, err := flux.New(flux.Options{}); err == nil {
			other = a
		}
	case string(model.EngineFlux):
		if a, err := argocd.New(argocd.Options{Namespace: o.ArgoCDNamespace}); err == nil {
			other = a
		}
	}
	if other == nil {
		return
	}
	ow := other.Owner(live)
	if ow == nil {
		return
	}
	ow.NotJudged = true
	r.Owners = append(r.Owners, *ow)
	r.Notes = append(r.Notes, model.Note{Engine: ow.Engine, Level: model.NoteWarning, Reason: "engine-not-judged",
		Message: fmt.Sprintf("%s reconciles this object, but --engine %s leaves %s out: its verdicts and rules are not shown (use --engine %s or auto)",
			ow.Ref(), o.Engine, ow.Engine, ow.Engine)})
}

// rulesEngineMismatch warns when --rules holds only objects of the engine
// --engine leaves out (or of no engine): they would be ignored silently.
func rulesEngineMismatch(engine string, docs []source.Document, files []string) string {
	var argo, fl int
	for _, d := range docs {
		if d.Object == nil {
			continue
		}
		gvk := d.Object.GroupVersionKind()
		switch {
		case gvk.Group == "argoproj.io", gvk.Group == "" && gvk.Kind == "ConfigMap" && strings.HasPrefix(d.Object.GetName(), "argocd-"):
			argo++
		case strings.HasSuffix(gvk.Group, ".toolkit.fluxcd.io"):
			fl++
		}
	}
	what := strings.Join(files, ", ")
	switch {
	case argo == 0 && fl == 0:
		return fmt.Sprintf("--rules %s holds no Argo CD Application/argocd-cm and no Flux Kustomization/HelmRelease: it adds no rule", what)
	case engine == string(model.EngineArgoCD) && argo == 0:
		return fmt.Sprintf("--rules %s holds only Flux objects, which --engine argocd does not use (use --engine flux or auto)", what)
	case engine == string(model.EngineFlux) && fl == 0:
		return fmt.Sprintf("--rules %s holds only Argo CD objects, which --engine flux does not use (use --engine argocd or auto)", what)
	}
	return ""
}

// ownedFunc tells diff which live fields somebody set (and so may be
// drift when the desired state lacks them) as opposed to API server
// defaults. Server-side apply leaves defaults unowned, but an Update
// (client-side apply, as Argo CD syncs by default) owns every field the
// server filled in on that request, defaults included. So a field counts
// as set when a non-GitOps manager owns it (someone added it by hand) or a
// GitOps engine owns it through Apply (its applied configuration had it);
// a GitOps Update alone does not say it was ever in the manifest.
func ownedFunc(ix *managedfields.Index, live *unstructured.Unstructured) func(string) bool {
	if ix.Empty() {
		// Without ownership every API server default would look like a
		// field someone added; report only fields the desired state sets
		// (the no-managedFields warning says what is lost).
		return func(string) bool { return false }
	}
	return func(pointer string) bool {
		owners := ix.Owners(live, pointer)
		for _, m := range owners {
			if !managedfields.IsGitOpsManager(m.Manager) || m.Operation == "Apply" {
				return true
			}
		}
		// A GitOps Update owning a field its last-applied configuration
		// names: it was in the manifest, and a field removed from Git since
		// is drift (Argo CD's 3-way diff removes it).
		return len(owners) > 0 && ix.InLastApplied(live, pointer)
	}
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
				return nil, model.SourceFile, fmt.Errorf("%s (%s)", loadError(err), hint)
			}
			fmt.Fprintf(o.ErrOut, "warning: %s\n", hint)
		}
		src, from = model.SourceFile, strings.Join(o.Filenames, ", ")
	case o.Kustomize != "":
		docs, err = source.LoadKustomize(o.Kustomize)
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
	obj, err := PickDocument(objs, live, o.namespace)
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
		return fmt.Errorf("%s (and %d more problems)", oneLine(des[0].Error()), len(des)-1)
	case len(des) == 1:
		return errors.New(oneLine(des[0].Error()))
	}
	return errors.New(oneLine(err.Error()))
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// PickDocument returns the document that is the live object: same API
// group and kind, same name, and same namespace (a document without a
// namespace is in defaultNamespace, as kubectl apply would put it).
func PickDocument(docs []*unstructured.Unstructured, live *unstructured.Unstructured, defaultNamespace string) (*unstructured.Unstructured, error) {
	lgvk := live.GroupVersionKind()
	var candidates []string
	for _, d := range docs {
		if d == nil {
			continue
		}
		gvk := d.GroupVersionKind()
		ns := d.GetNamespace()
		if ns == "" && live.GetNamespace() != "" {
			ns = defaultNamespace
			if ns == "" {
				ns = live.GetNamespace()
			}
		}
		if gvk.Group == lgvk.Group && gvk.Kind == lgvk.Kind && d.GetName() == live.GetName() && (live.GetNamespace() == "" || ns == live.GetNamespace()) {
			return d, nil
		}
		if len(candidates) < 5 {
			candidates = append(candidates, describeObj(d))
		}
	}
	want := describeObj(live)
	if len(candidates) == 0 {
		return nil, fmt.Errorf("no Kubernetes object found, want %s", want)
	}
	more := ""
	if len(docs) > len(candidates) {
		more = ", ..."
	}
	return nil, fmt.Errorf("no document is %s (found %s%s)", want, strings.Join(candidates, ", "), more)
}

func describeObj(u *unstructured.Unstructured) string {
	gvk := u.GroupVersionKind()
	id := model.ResourceID{Group: gvk.Group, Kind: gvk.Kind, Namespace: u.GetNamespace(), Name: u.GetName()}
	return id.String()
}

// Attribute fills, for every drift, the managers that own the field now
// (when the diff did not) and the cause: the class of the most recent
// manager that is not a GitOps engine, or unknown.
func Attribute(r *model.Report, live *unstructured.Unstructured, ix *managedfields.Index) {
	for i := range r.Drifts {
		d := &r.Drifts[i]
		if d.FieldPath == "" {
			d.FieldPath = managedfields.FieldPath(live, d.Path)
		}
		if len(d.Managers) == 0 && !ix.Empty() && d.Change != model.Removed {
			d.Managers = ix.Owners(live, d.Path)
		}
		d.Cause = causeOf(d.Managers)
	}
}

// causeOf picks the most recent non-GitOps manager. Managers come most
// recent first; entries without a time (the API server records none for
// scale subresource updates) keep their place.
func causeOf(ms []model.ManagerRef) model.CauseClass {
	for _, m := range ms {
		if managedfields.IsGitOpsManager(m.Manager) {
			continue
		}
		if m.Class == "" {
			return managedfields.Classify(m.Manager, m.Operation, m.Subresource)
		}
		return m.Class
	}
	return model.CauseUnknown
}

// defaultAdapters builds the engine adapters --engine selects (auto: all),
// through their packages' constructors; commands never reach into an
// adapter's internals. Problems that leave an engine partly blind (no
// OpenAPI schema) become notes.
func defaultAdapters(ctx context.Context, o *ExplainOptions, live *unstructured.Unstructured) ([]model.Adapter, []model.Note, error) {
	var reader model.Reader
	if o.client != nil {
		reader = o.client
	}
	var ruleDocs []source.Document
	if len(o.Rules) > 0 {
		var err error
		if ruleDocs, err = source.LoadFiles(o.Rules, o.In, source.Options{}); err != nil {
			return nil, nil, fmt.Errorf("--rules: %w", loadError(err))
		}
		for _, d := range ruleDocs {
			o.remember(d.Object)
		}
	}
	var (
		out   []model.Adapter
		notes []model.Note
	)
	if len(o.Rules) > 0 {
		if msg := rulesEngineMismatch(o.Engine, ruleDocs, o.Rules); msg != "" {
			fmt.Fprintf(o.ErrOut, "warning: %s\n", msg)
			notes = append(notes, model.Note{Level: model.NoteWarning, Reason: "rules-unused", Message: msg})
		}
	}
	if o.Engine == "auto" || o.Engine == string(model.EngineArgoCD) {
		// Documents keep their YAML nodes, so rules get file:line origins.
		opts := argocd.Options{Reader: reader, Namespace: o.ArgoCDNamespace, Documents: ruleDocs}
		opts.ArgoDiff = o.ArgoAPI.options(o.ArgoCDDiff)
		opts.ArgoDiff.Loaded = o.argoDiff
		if o.ServerDryRun {
			// Applications with server-side diff are judged by a dry-run
			// apply as argocd-controller, like Argo CD's controller does.
			cfg, err := o.ConfigFlags.ToRESTConfig()
			if err != nil {
				return nil, nil, fmt.Errorf("argocd: %w", err)
			}
			if opts.DryRun, err = argocd.NewRESTDryRunner(cfg); err != nil {
				return nil, nil, fmt.Errorf("argocd: %w", err)
			}
		}
		a, err := argocd.New(opts)
		if err != nil {
			return nil, nil, fmt.Errorf("argocd: %w", err)
		}
		// Argo CD's controller diffs managedFieldsManagers rules with a
		// parser built from the cluster's OpenAPI; without it lists are
		// atomic and such rules silently stop matching (DESIGN.md). Only
		// read the (large) schema for objects Argo CD tracks. Load first:
		// argocd-cm may switch tracking to labels, and Owner never reads
		// the cluster itself.
		if o.client != nil {
			a.Load(ctx)
		}
		if o.client != nil && a.Owner(live) != nil {
			parser, perr := o.client.GVKParser()
			if perr != nil {
				notes = append(notes, model.Note{Engine: model.EngineArgoCD, Level: model.NoteWarning, Reason: "no-schema",
					Message: "cannot read the cluster's OpenAPI schema, managedFieldsManagers rules run on a deduced schema: " + perr.Error()})
			} else {
				a.SetGVKParser(parser)
			}
		}
		out = append(out, a)
	}
	if o.Engine == "auto" || o.Engine == string(model.EngineFlux) {
		a, err := fluxAdapter(o, ruleDocs)
		if err != nil {
			return nil, nil, fmt.Errorf("flux: %w", err)
		}
		out = append(out, a)
	}
	return out, notes, nil
}
