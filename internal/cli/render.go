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
	"k8s.io/apimachinery/pkg/runtime/schema"

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
	// Kustomizations name Flux Kustomizations (NS/NAME) to render.
	Kustomizations []string
	// HelmReleases name Flux HelmReleases (NS/NAME) to render.
	HelmReleases []string
	// Apps name Argo CD Applications (NAME, or NS/NAME) to render.
	Apps []string
	// NoRemoteBases refuses kustomize bases fetched from the network.
	NoRemoteBases bool
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
	// controlPlanes are the control-plane namespaces adopt was given, by
	// the API group of the engine objects there (--argocd-namespace);
	// where --app NAME is when set, else the engine's default.
	controlPlanes map[string]string
}

// addFlags registers the flags; withTargets adds the ones naming engine
// objects.
func (f *RenderFlags) addFlags(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.Source, "source", "", "Checkout (directory) the engines' desired state is rendered from")
	fl.StringArrayVar(&f.SourceMap, "source-map", nil, "URL=DIR: the checkout of a source URL (GitRepository/OCIRepository spec.url); may be repeated; other sources are --source")
	fl.StringArrayVar(&f.Kustomizations, "kustomization", nil, "Flux Kustomization to render, NAMESPACE/NAME (NAME alone: flux-system); may be repeated")
	fl.StringArrayVar(&f.HelmReleases, "helmrelease", nil, "Flux HelmRelease to render, NAMESPACE/NAME (NAME alone: flux-system); may be repeated")
	fl.StringArrayVar(&f.Apps, "app", nil, "Argo CD Application to render, NAME or NAMESPACE/NAME (NAME alone: argocd); may be repeated")
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
		if u, d, ok := strings.Cut(m, "="); !ok || u == "" || d == "" {
			return fmt.Errorf("invalid --source-map %q: want URL=DIR", m)
		}
	}
	for _, k := range f.Kustomizations {
		if _, _, err := parseNamespacedName(k); err != nil {
			return fmt.Errorf("invalid --kustomization %q: %w", k, err)
		}
	}
	for _, k := range f.HelmReleases {
		if _, _, err := parseNamespacedName(k); err != nil {
			return fmt.Errorf("invalid --helmrelease %q: %w", k, err)
		}
	}
	for _, a := range f.Apps {
		if _, _, err := parseAppName(a, f.appNamespace()); err != nil {
			return fmt.Errorf("invalid --app %q: %w", a, err)
		}
	}
	if f.Source == "" && (len(f.SourceMap) > 0 || len(f.Kustomizations) > 0 || len(f.HelmReleases) > 0 || len(f.Apps) > 0) {
		return errors.New("--source-map, --kustomization, --helmrelease and --app need --source DIR")
	}
	return nil
}

func parseNamespacedName(s string) (string, string, error) {
	ns, name, ok := strings.Cut(s, "/")
	if !ok {
		ns, name = "flux-system", s
	}
	if ns == "" || name == "" || strings.Contains(name, "/") {
		return "", "", errors.New("want NAMESPACE/NAME")
	}
	return ns, name, nil
}

// appNamespace is where --app NAME (NAME alone) is: the control plane of
// the engine whose kind Application is, as adopt's flag names it or as a
// default install has it.
func (f *RenderFlags) appNamespace() string {
	if ns := f.controlPlanes[applicationGVK.Group]; ns != "" {
		return ns
	}
	if cp, ok := engine.ControlPlaneOf(applicationGVK.Group); ok {
		return cp.Default
	}
	return ""
}

// parseAppName reads --app: NAME alone is an Application of the
// control-plane namespace controlPlane.
func parseAppName(s, controlPlane string) (string, string, error) {
	if !strings.Contains(s, "/") {
		if controlPlane == "" {
			return "", "", errors.New("want NAMESPACE/NAME")
		}
		s = controlPlane + "/" + s
	}
	return parseNamespacedName(s)
}

// env reads the checkout (and the --source-map directories).
func (f *RenderFlags) env() (*render.Env, error) {
	env, err := render.NewEnv(f.Source)
	if err != nil {
		return nil, err
	}
	env.NoRemoteBases = f.NoRemoteBases
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
	for _, k := range f.Kustomizations {
		ns, name, _ := parseNamespacedName(k)
		out = append(out, render.Ref{GVK: kustomizationGVK, Namespace: ns, Name: name})
	}
	for _, h := range f.HelmReleases {
		ns, name, _ := parseNamespacedName(h)
		out = append(out, render.Ref{GVK: helmReleaseGVK, Namespace: ns, Name: name})
	}
	for _, a := range f.Apps {
		ns, name, _ := parseAppName(a, f.appNamespace())
		out = append(out, render.Ref{GVK: applicationGVK, Namespace: ns, Name: name})
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

// The kinds --kustomization, --helmrelease and --app name.
var (
	kustomizationGVK = schema.GroupVersionKind{Group: "kustomize.toolkit.fluxcd.io", Version: "v1", Kind: "Kustomization"}
	helmReleaseGVK   = schema.GroupVersionKind{Group: "helm.toolkit.fluxcd.io", Version: "v2", Kind: "HelmRelease"}
	applicationGVK   = schema.GroupVersionKind{Group: "argoproj.io", Version: "v1alpha1", Kind: "Application"}
)

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
		Use:   "render --source DIR [--kustomization NS/NAME]... [--helmrelease NS/NAME]... [--source-map URL=DIR]... [--from-cluster] [-o yaml|json]",
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
and jsonnet sources are reported as not supported. The checkout is read as
it is: targetRevision is not checked out.

Without --kustomization/--helmrelease/--app every Flux Kustomization,
HelmRelease and Argo CD Application found in the checkout is rendered. Nothing outside --source (and the --source-map directories) is
read: paths leaving it through ".." or symlinks are refused. Secret values
are masked in the output.

An engine object that fails to render is reported on stderr (one line,
naming it and the file) and the others are still printed; the exit code
is then 2.`,
		Example: `  # Render every Flux Kustomization of a checkout
  ` + g.Frontend.Name + ` render --source .

  # Render one, with postBuild.substituteFrom read from the cluster
  ` + g.Frontend.Name + ` render --source . --kustomization flux-system/apps --from-cluster`,
		Args: cobra.NoArgs,
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
			return failure(fmt.Errorf("no Flux Kustomization or HelmRelease or Argo CD Application found in %s: name one with --kustomization, --helmrelease or --app", o.Source))
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
