package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/bound"
	"github.com/kubectl-drift/kubectl-drift/internal/cluster"
	"github.com/kubectl-drift/kubectl-drift/internal/engine"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/output"
	"github.com/kubectl-drift/kubectl-drift/internal/render"
)

// RenderFlags are the flags that say where the desired state is rendered
// from; render, and explain's --source, share them.
type RenderFlags struct {
	// Source is the checkout (--source DIR).
	Source string
	// SourceMap are URL=DIR pairs: the checkout of each source URL.
	SourceMap []string
	// NoRemoteBases refuses kustomize bases fetched from the network.
	NoRemoteBases bool
	// WorkingTree renders every source from the working tree, whatever
	// revision it names (--working-tree).
	WorkingTree bool
	// StrictSubstitute fails on a postBuild variable without a value.
	StrictSubstitute bool
	// RenderTimeout bounds one chart's rendering (--render-timeout):
	// a template is a program, and Go cannot stop one.
	RenderTimeout time.Duration
	// KubeVersion and APIVersions are the .Capabilities charts see when
	// no cluster gives them (--kube-version, --api-versions), as helm
	// template takes them and Argo CD's repo-server passes them.
	KubeVersion string
	APIVersions []string
	// owners are the engines' owner-kind flags (--kustomization,
	// --helmrelease, --app: engine.OwnerKind) with the objects they name.
	owners []*ownerFlag
	// controlPlanes are the control-plane namespaces adopt was given, by
	// the API group of the engine objects there (--argocd-namespace);
	// where an owner named without a namespace is when set, else the
	// engine's default.
	controlPlanes map[string]string
}

// ownerFlag is one engine owner kind's flag and the objects it names.
type ownerFlag struct {
	kind engine.OwnerKind
	// controlPlane is the engine's, for a kind whose NAME alone is there.
	controlPlane *engine.ControlPlane
	// title is the engine's (messages: "Flux Kustomization").
	title  string
	values []string
}

// ownerFlags are the registry's owner kinds that have a flag, in
// descending flag-name order (kustomization, helmrelease, app): the order
// render's output and messages listed them in before the engines declared
// them, which scripts and tests rely on.
func ownerFlags() []*ownerFlag {
	var out []*ownerFlag
	for _, d := range engine.All() {
		for _, k := range d.OwnerKinds {
			if k.Flag != "" {
				out = append(out, &ownerFlag{kind: k, controlPlane: d.ControlPlane, title: d.Title})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].kind.Flag > out[j].kind.Flag })
	return out
}

// addFlags registers the flags; withTargets adds the ones naming engine
// objects.
func (f *RenderFlags) addFlags(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.Source, "source", "", "Checkout (directory) the engines' desired state is rendered from")
	fl.StringArrayVar(&f.SourceMap, "source-map", nil, "URL=DIR: the checkout of a source URL (GitRepository/OCIRepository spec.url), or ExternalArtifact/NAMESPACE/NAME=DIR: the unpacked artifact of a Flux ExternalArtifact; may be repeated; other sources are --source")
	f.owners = ownerFlags()
	for _, o := range f.owners {
		fl.StringArrayVar(&o.values, o.kind.Flag, nil, o.kind.Usage)
	}
	fl.BoolVar(&f.WorkingTree, "working-tree", false, "Render every source from the checkout's working tree as it is, not at the revision it names (an Application's targetRevision, a GitRepository's ref, read from the local git history by default): to see changes not yet committed on that revision")
	fl.BoolVar(&f.NoRemoteBases, "no-remote-bases", false, "Refuse kustomize bases fetched from the network (as kustomize-controller --no-remote-bases)")
	fl.BoolVar(&f.StrictSubstitute, "strict-substitute", false, "Fail a Flux postBuild substitution on a variable without a value or default (kustomize-controller's StrictPostBuildSubstitutions)")
	fl.StringVar(&f.KubeVersion, "kube-version", "", "Without a cluster: the Kubernetes version charts see as .Capabilities.KubeVersion (as helm template --kube-version; default Helm's); with one, its discovery")
	fl.StringSliceVar(&f.APIVersions, "api-versions", nil, "Without a cluster: API versions (GROUP/VERSION or GROUP/VERSION/Kind) charts see in .Capabilities.APIVersions besides Helm's defaults (as helm template --api-versions)")
	fl.DurationVar(&f.RenderTimeout, "render-timeout", bound.DefaultTimeout, "How long one Helm chart may take to render; past it the command stops with one line naming the chart and the template")
}

// validate checks the flags without I/O.
func (f *RenderFlags) validate() error {
	if f.RenderTimeout < 0 {
		return fmt.Errorf("invalid --render-timeout %s: give a positive duration", f.RenderTimeout)
	}
	if f.KubeVersion != "" {
		if _, err := render.StaticCapabilities(f.KubeVersion, f.APIVersions); err != nil {
			return fmt.Errorf("invalid --kube-version: %w", err)
		}
	}
	for _, m := range f.SourceMap {
		u, d, ok := strings.Cut(m, "=")
		if !ok || u == "" || d == "" {
			return fmt.Errorf("invalid --source-map %q: want URL=DIR or ExternalArtifact/NAMESPACE/NAME=DIR", m)
		}
		// An ExternalArtifact has no URL: it is named by kind, namespace
		// and name, as render's error names it.
		if rest, ok := strings.CutPrefix(u, "ExternalArtifact/"); ok {
			if ns, name, ok := strings.Cut(rest, "/"); !ok || ns == "" || name == "" || strings.Contains(name, "/") {
				return fmt.Errorf("invalid --source-map %q: want ExternalArtifact/NAMESPACE/NAME=DIR", m)
			}
		}
	}
	named := false
	for _, o := range f.owners {
		for _, v := range o.values {
			if _, _, err := parseOwnerName(v, f.nameAloneIn(o)); err != nil {
				return fmt.Errorf("invalid --%s %q: %w", o.kind.Flag, v, err)
			}
			named = true
		}
	}
	if f.Source == "" && (len(f.SourceMap) > 0 || named) {
		return fmt.Errorf("%s need --source DIR", and(append([]string{"--source-map"}, f.ownerFlagNames()...)))
	}
	return nil
}

// ownerFlagNames are the owner-kind flags, "--kustomization"...
func (f *RenderFlags) ownerFlagNames() []string {
	var out []string
	for _, o := range f.owners {
		out = append(out, "--"+o.kind.Flag)
	}
	return out
}

// oneOwnerOf is the message asking for one owner-kind flag, once.
func (f *RenderFlags) oneOwnerOf() string {
	return "give one of " + engine.Or(f.ownerFlagNames()) + ", once"
}

// and joins values as "a, b and c".
func and(values []string) string {
	if len(values) < 2 {
		return strings.Join(values, "")
	}
	return strings.Join(values[:len(values)-1], ", ") + " and " + values[len(values)-1]
}

// parseOwnerName reads NAMESPACE/NAME; NAME alone is in nameAlone ("":
// a namespace is required).
func parseOwnerName(s, nameAlone string) (string, string, error) {
	ns, name, ok := strings.Cut(s, "/")
	if !ok {
		if nameAlone == "" {
			return "", "", errors.New("want NAMESPACE/NAME")
		}
		ns, name = nameAlone, s
	}
	if ns == "" || name == "" || strings.Contains(name, "/") {
		return "", "", errors.New("want NAMESPACE/NAME")
	}
	return ns, name, nil
}

// nameAloneIn is where an owner the flag names without a namespace is:
// the kind's namespace, else the engine's control plane as adopt's flag
// names it or as a default install has it.
func (f *RenderFlags) nameAloneIn(o *ownerFlag) string {
	if o.kind.Namespace != "" || o.controlPlane == nil {
		return o.kind.Namespace
	}
	if ns := f.controlPlanes[o.controlPlane.Group]; ns != "" {
		return ns
	}
	return o.controlPlane.Default
}

// env reads the checkout (and the --source-map directories).
func (f *RenderFlags) env() (*render.Env, error) {
	env, err := render.NewEnv(f.Source)
	if err != nil {
		return nil, err
	}
	env.NoRemoteBases = f.NoRemoteBases
	env.WorkingTree = f.WorkingTree
	env.StrictSubstitute = f.StrictSubstitute
	env.RenderLimits.Timeout = f.RenderTimeout
	for _, m := range f.SourceMap {
		u, d, _ := strings.Cut(m, "=")
		abs, err := filepath.Abs(d)
		if err == nil {
			abs, err = filepath.EvalSymlinks(abs)
		}
		if err != nil {
			return nil, fmt.Errorf("--source-map %s: %w", m, err)
		}
		if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("--source-map %s: not a directory", m)
		}
		if env.SourceMap == nil {
			env.SourceMap = map[string]string{}
		}
		env.SourceMap[u] = abs
	}
	return env, nil
}

// refs are the engine objects the flags name, in flag order.
func (f *RenderFlags) refs() []render.Ref {
	var out []render.Ref
	for _, o := range f.owners {
		for _, v := range o.values {
			ns, name, _ := parseOwnerName(v, f.nameAloneIn(o))
			out = append(out, render.Ref{GVK: o.kind.GVK, Namespace: ns, Name: name})
		}
	}
	return out
}

// owner is the engine object the flags name when exactly one is given
// (explain renders one owner).
func (f *RenderFlags) owner() *render.Ref {
	refs := f.refs()
	if len(refs) != 1 {
		return nil
	}
	return &refs[0]
}

// ownerKindsTitled names the owner kinds for messages, each engine's
// title once: "Flux Kustomization or HelmRelease or Argo CD Application".
func (f *RenderFlags) ownerKindsTitled() string {
	var parts []string
	title := ""
	for _, o := range f.owners {
		if o.title != title {
			title = o.title
			parts = append(parts, title+" "+o.kind.GVK.Kind)
			continue
		}
		parts = append(parts, o.kind.GVK.Kind)
	}
	return strings.Join(parts, " or ")
}

// ownerUsage is the owner-kind flags in a usage line:
// " [--kustomization NS/NAME]..." for each.
func ownerUsage() string {
	var b strings.Builder
	for _, o := range ownerFlags() {
		b.WriteString(" [--" + o.kind.Flag + " NS/NAME]...")
	}
	return b.String()
}

// examples are the engines' example lines for command.
func examples(command, bin string) string {
	var parts []string
	for _, d := range engine.All() {
		if d.Example != nil {
			if e := d.Example(command, bin); e != "" {
				parts = append(parts, e)
			}
		}
	}
	return strings.Join(parts, "\n\n")
}

// RenderOptions are the flags and state of `render`.
type RenderOptions struct {
	*GlobalOptions
	RenderFlags
	// FromCluster reads engine objects, sources, ConfigMaps and Secrets from
	// the cluster instead of the checkout alone.
	FromCluster bool
	// Output is -o: yaml or json.
	Output string

	client *cluster.Client
}

func newRenderCommand(g *GlobalOptions) *cobra.Command {
	o := &RenderOptions{GlobalOptions: g, Output: "yaml"}
	cmd := &cobra.Command{
		Use:   "render --source DIR" + ownerUsage() + " [--source-map URL=DIR]... [--from-cluster] [-o yaml|json]",
		Short: "Print what each engine would apply from a local checkout",
		Long: `Print the objects each GitOps engine would apply, rendered from a local
checkout the way the engine renders it: a Flux Kustomization is built with
Flux's own kustomize library (a kustomization.yaml is generated where the
path has none), with its patches, images, name prefix/suffix, target
namespace, common metadata and postBuild substitutions, and gets the labels
kustomize-controller adds. A Flux HelmRelease is templated with Helm's own
library from a chart in the checkout (a GitRepository or Bucket path, or a
HelmChart built from one; a chart repository only when --source-map maps its
URL), with values and valuesFrom composed as helm-controller composes them,
its post-renderers, common metadata and the labels helm-controller adds.
Charts see the cluster's .Capabilities (Kubernetes version and served API
versions, from discovery, as helm-controller's installs do) with
--from-cluster; without it, --kube-version and --api-versions when given
(as helm template takes them), else Helm's defaults (the Kubernetes version
of Helm's client library and the API versions it compiles in).
An Argo CD Application (one source or several, with $ref value files) is
rendered as its repo-server would: a directory (recurse, include/exclude),
a kustomization with the Application's kustomize edits, or a chart with its
value files, values/valuesObject and parameters; then the tracking marks
of argocd-cm's resourceTrackingMethod and the destination namespace. Plugin
and jsonnet sources are reported as not supported.

A source is read at the revision it names (an Application's
targetRevision, a GitRepository's ref): from the local git history when
the checkout is a git repository's root holding it (read with git archive
into a temporary directory; the repository is not changed), with a
warning naming the commit; HEAD, or a revision at HEAD's commit, is the
working tree as it is. A revision the history does not hold is rendered
from the working tree with a warning. --working-tree renders every
source from the working tree. A Flux ExternalArtifact is built in the
cluster: map it with --source-map ExternalArtifact/NAMESPACE/NAME=DIR.

Without --kustomization/--helmrelease/--app every Flux Kustomization,
HelmRelease and Argo CD Application found in the checkout is rendered. Nothing outside --source (and the --source-map directories) is
read: paths leaving it through ".." or symlinks are refused. Secret values
are masked in the output.

An engine object that fails to render is reported on stderr (one line,
naming it and the file) and the others are still printed; the exit code
is then 2.`,
		Example: examples("render", g.Frontend.Name),
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Validate(); err != nil {
				return failure(err)
			}
			if err := o.Complete(); err != nil {
				return failure(err)
			}
			return o.Run(cmd.Context())
		},
	}
	o.addFlags(cmd)
	cmd.Flags().BoolVar(&o.FromCluster, "from-cluster", false, "Read engine objects, sources and substituteFrom ConfigMaps/Secrets from the cluster (default: the checkout alone)")
	cmd.Flags().StringVarP(&o.Output, "output", "o", o.Output, "Output format: yaml or json")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"yaml", "json"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// Validate checks the flags; it does no I/O.
func (o *RenderOptions) Validate() error {
	if o.Source == "" {
		return errors.New("render needs --source DIR")
	}
	if _, err := canonicalOutput(o.Output, []string{"yaml", "json"}); err != nil {
		return err
	}
	return o.validate()
}

// Complete builds the cluster client when --from-cluster asks for it.
func (o *RenderOptions) Complete() error {
	if !o.FromCluster {
		return nil
	}
	var err error
	o.client, err = cluster.New(o.ConfigFlags, cluster.Options{})
	return err
}

// Run renders and prints. Objects are printed in a stable order: engine
// objects by kind/namespace/name, and their objects by API group, kind,
// namespace and name.
func (o *RenderOptions) Run(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	var reader model.Reader
	if o.client != nil {
		reader = o.client
	}
	env, err := o.renderEnv(o.GlobalOptions, reader, o.client)
	if err != nil {
		return failure(err)
	}
	defer func() { _ = env.Close() }()
	rs := engine.Renderers(nil)
	var targets []*unstructured.Unstructured
	if refs := o.refs(); len(refs) > 0 {
		for _, ref := range refs {
			obj, err := render.Resolve(ctx, env, ref)
			if err != nil {
				return failure(err)
			}
			targets = append(targets, obj)
		}
	} else {
		targets = render.Targets(env, rs)
		if len(targets) == 0 {
			return failure(fmt.Errorf("no %s found in %s: name one with %s", o.ownerKindsTitled(), o.Source, engine.Or(o.ownerFlagNames())))
		}
	}
	results := render.Render(ctx, env, rs, targets)
	var objs []*unstructured.Unstructured
	failed := 0
	for _, r := range results {
		if r.Err != nil {
			failed++
			stderrf(o.ErrOut, "error: %s\n", r.Err)
			continue
		}
		for _, obj := range r.Objects {
			o.remember(obj)
			c := obj.DeepCopy()
			env.MaskObject(c)
			objs = append(objs, c)
		}
	}
	if err := o.print(objs); err != nil {
		return failure(err)
	}
	if failed > 0 && len(results) == 1 {
		// Its one error line, printed above, is the answer: no second.
		return &ExitError{Code: ExitFailure}
	}
	if failed > 0 {
		return &ExitError{Code: ExitFailure, Err: fmt.Errorf("%d of %d engine objects failed to render", failed, len(results))}
	}
	return nil
}

func (o *RenderOptions) print(objs []*unstructured.Unstructured) error {
	if o.Output == "json" {
		items := make([]any, 0, len(objs))
		for _, obj := range objs {
			items = append(items, obj.Object)
		}
		return output.PrintObject(o.Out, output.JSON, map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
	}
	for _, obj := range objs {
		if err := output.PrintStreamItem(o.Out, output.YAML, obj.Object); err != nil {
			return err
		}
	}
	return nil
}
