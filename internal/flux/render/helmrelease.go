package render

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/kustomize"
	"github.com/fluxcd/pkg/chartutil"
	ssautil "github.com/fluxcd/pkg/ssa/utils"
	"github.com/go-logr/logr"
	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/common"
	helmchart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	ri "helm.sh/helm/v4/pkg/release"
	helmrelease "helm.sh/helm/v4/pkg/release/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/kustomize/api/builtins" //nolint:staticcheck // helm-controller's own post-render transformers (internal/postrender/transformer.go) use it; mirrored for fidelity

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/provider"
	"sigs.k8s.io/kustomize/api/resmap"
	kustypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-drift/kubectl-drift/internal/bound"
	"github.com/kubectl-drift/kubectl-drift/internal/render"
	"github.com/kubectl-drift/kubectl-drift/internal/source"
)

// errOffline marks a chart that only a network fetch would give.
var errOffline = errors.New("not available offline")

// renderHelmRelease templates a HelmRelease's chart from the checkout the
// way helm-controller installs it (helm-controller
// internal/controller/helmrelease_controller.go: values composed by
// fluxcd/pkg/chartutil ChartValuesFromReferences; internal/action/install.go
// newInstall: release name ShortenName(GetReleaseName()), namespace
// GetReleaseNamespace(), CRDs not in the manifest; internal/postrender
// build.go: kustomize post-renderers, then commonMetadata, then the origin
// labels), with Helm's own library in client-only mode, as `helm template`.
// The chart must be in the checkout: a GitRepository/Bucket path, or a
// chartRef HelmChart built from one; a HelmRepository or OCIRepository
// chart is "not available offline" unless --source-map maps its URL.
// Hooks are not part of the result: helm-controller neither applies them
// with the release manifest nor checks them for drift. Objects without a
// namespace stay so (Helm's client puts namespaced ones in the release
// namespace when it applies them).
func renderHelmRelease(ctx context.Context, env *render.Env, obj *unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	obj = withLandingNamespace(env, obj)
	var hr helmv2.HelmRelease
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &hr); err != nil {
		return nil, fmt.Errorf("not a valid HelmRelease: %w", err)
	}
	src, err := chartDir(ctx, env, &hr, true)
	if err != nil {
		return nil, err
	}
	chartDir := src.dir
	// Helm's loader reads every file of the chart whole and follows
	// symlinks: check sizes and where links lead first.
	if err := render.CheckTree(chartDir, env.CheckoutOf(chartDir)); err != nil {
		return nil, fmt.Errorf("chart %s: %w", chartDir, err)
	}
	chrt, err := loader.LoadDir(chartDir)
	if err != nil {
		return nil, fmt.Errorf("loading chart %s: %w", chartDir, err)
	}
	if err := src.mergeValuesFiles(chrt); err != nil {
		return nil, err
	}
	values, err := chartutil.ChartValuesFromReferences(ctx, logr.Discard(), &lookupClient{env: env, ctx: ctx}, hr.GetNamespace(), hr.GetValues(), hr.Spec.ValuesFrom...)
	if err != nil {
		return nil, err
	}
	// The rendering's bounds: its functions, its templates marked so
	// that a time or memory bound names the one running.
	rendering := render.NewRendering()
	rendering.Mark(chrt)
	cfg := action.NewConfiguration()
	cfg.CustomTemplateFuncs = rendering.Funcs()
	install := action.NewInstall(cfg)
	install.DryRunStrategy = action.DryRunClient
	install.Replace = true
	install.ReleaseName = shortenName(hr.GetReleaseName())
	install.Namespace = hr.GetReleaseNamespace()
	install.DisableHooks = hr.GetInstall().DisableHooks
	install.SkipSchemaValidation = hr.GetInstall().DisableSchemaValidation
	install.Devel = true
	install.SkipCRDs = true
	install.PostRenderer = postRenderer{hr: &hr}
	if err := capabilities(ctx, env, install); err != nil {
		return nil, err
	}
	rel, err := bound.Run(ctx, "chart "+chartDir, rendering.Limits(env.RenderLimits), func(ctx context.Context) (ri.Releaser, error) {
		return install.RunWithContext(ctx, chrt, values.AsMap())
	})
	if errors.Is(err, render.ErrBound) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("templating chart %s: %w", chartDir, err)
	}
	r, ok := rel.(*helmrelease.Release)
	if !ok {
		return nil, fmt.Errorf("chart %s: only Helm chart API v2 releases are supported", chartDir)
	}
	objs, err := ssautil.ReadObjects(bytes.NewReader([]byte(r.Manifest)))
	if err != nil {
		return nil, err
	}
	// Helm marks what it applies as the release's (helm.sh/helm/v4
	// pkg/action/validate.go setMetadataVisitor, run by install on the
	// built manifest): a label and two annotations, not in rel.Manifest.
	for _, o := range objs {
		l := o.GetLabels()
		if l == nil {
			l = map[string]string{}
		}
		l["app.kubernetes.io/managed-by"] = "Helm"
		o.SetLabels(l)
		a := o.GetAnnotations()
		if a == nil {
			a = map[string]string{}
		}
		a["meta.helm.sh/release-name"] = r.Name
		a["meta.helm.sh/release-namespace"] = r.Namespace
		o.SetAnnotations(a)
	}
	return objs, nil
}

// capabilities gives the templates the cluster's .Capabilities when
// there is a cluster: helm-controller's installs run against it, and Helm
// reads KubeVersion and APIVersions from discovery (helm.sh/helm/v4
// pkg/action/action.go getCapabilities). Offline they are Helm's defaults
// (common.DefaultCapabilities: the Kubernetes version of Helm's client-go
// and the API versions it compiles in), as `helm template` without
// --kube-version/--api-versions. In client-only mode Helm appends the given
// API versions to its defaults (pkg/action/install.go), so a version that
// client-go knows but the cluster does not serve still answers Has: the
// one way this differs from helm-controller.
func capabilities(ctx context.Context, env *render.Env, install *action.Install) error {
	if env.Capabilities == nil {
		return nil
	}
	caps, err := env.Capabilities(ctx)
	if err != nil {
		return fmt.Errorf("reading the cluster's capabilities for the chart: %w", err)
	}
	if caps == nil {
		return nil
	}
	install.APIVersions = caps.APIVersions
	if caps.KubeVersion == "" {
		// API versions given alone (render --api-versions): Helm's
		// default version stays.
		return nil
	}
	kv, err := common.ParseKubeVersion(caps.KubeVersion)
	if err != nil {
		return fmt.Errorf("the cluster's version %q: %w", caps.KubeVersion, err)
	}
	// Major and Minor as the server says them ("27+" on some providers),
	// as getCapabilities copies them.
	if caps.Major != "" && caps.Minor != "" {
		kv.Major, kv.Minor = caps.Major, caps.Minor
	}
	install.KubeVersion = kv
	return nil
}

// shortenName is helm-controller's release name limit (helm-controller
// internal/release/name.go ShortenName): over 53 characters, the name is
// cut and ends in 12 hex digits of its SHA-256.
func shortenName(name string) string {
	const maxLength, hashLength = 53, 12
	if len(name) <= maxLength {
		return name
	}
	sum := fmt.Sprintf("%x", sha256.Sum256([]byte(name)))
	return name[:maxLength-(hashLength+1)] + "-" + sum[:hashLength]
}

// chartDir finds the chart of hr in the checkout (atRevision: a
// GitRepository's at its ref, sourceDir).
func chartDir(ctx context.Context, env *render.Env, hr *helmv2.HelmRelease, atRevision bool) (chartSource, error) {
	if ref := hr.Spec.ChartRef; ref != nil {
		ns := ref.Namespace
		if ns == "" {
			ns = hr.GetNamespace()
		}
		switch ref.Kind {
		case "OCIRepository":
			src, err := env.Lookup(ctx, schema.GroupVersionKind{Group: sourceGroup, Version: "v1", Kind: ref.Kind}, ns, ref.Name)
			if err != nil {
				return chartSource{}, fmt.Errorf("chartRef %s: %w", sourceName(ref.Kind, ns, ref.Name), err)
			}
			url, _, _ := unstructured.NestedString(src.Object, "spec", "url")
			if d, ok := env.SourceMap[url]; ok {
				return chartSource{dir: d, base: d}, nil
			}
			return chartSource{}, fmt.Errorf("chartRef %s (%s): %w; map it with --source-map %s=DIR", sourceName(ref.Kind, ns, ref.Name), url, errOffline, url)
		case externalArtifactKind:
			// The artifact is the chart, as an OCIRepository's is.
			d, err := externalArtifactDir(env, "chartRef", ns, ref.Name)
			return chartSource{dir: d, base: d}, err
		case "HelmChart":
			hc, err := env.Lookup(ctx, schema.GroupVersionKind{Group: sourceGroup, Version: "v1", Kind: ref.Kind}, ns, ref.Name)
			if err != nil {
				return chartSource{}, fmt.Errorf("chartRef %s: %w", sourceName(ref.Kind, ns, ref.Name), err)
			}
			chart, _, _ := unstructured.NestedString(hc.Object, "spec", "chart")
			kind, _, _ := unstructured.NestedString(hc.Object, "spec", "sourceRef", "kind")
			name, _, _ := unstructured.NestedString(hc.Object, "spec", "sourceRef", "name")
			src, err := chartIn(ctx, env, kind, ns, name, chart, atRevision)
			src.valuesFiles, _, _ = unstructured.NestedStringSlice(hc.Object, "spec", "valuesFiles")
			src.ignoreMissing, _, _ = unstructured.NestedBool(hc.Object, "spec", "ignoreMissingValuesFiles")
			return src, err
		}
		return chartSource{}, fmt.Errorf("chartRef kind %q is not supported", ref.Kind)
	}
	if hr.Spec.Chart == nil {
		return chartSource{}, errors.New("spec.chart or spec.chartRef is required")
	}
	s := hr.Spec.Chart.Spec
	ns := s.SourceRef.Namespace
	if ns == "" {
		ns = hr.GetNamespace()
	}
	src, err := chartIn(ctx, env, s.SourceRef.Kind, ns, s.SourceRef.Name, s.Chart, atRevision)
	src.valuesFiles, src.ignoreMissing = s.ValuesFiles, s.IgnoreMissingValuesFiles
	return src, err
}

// sourceName names a source reference as KIND/NAMESPACE/NAME; without a
// namespace (a HelmRelease of the checkout whose namespace is unknown,
// the reference's default) it says so rather than print KIND//NAME.
func sourceName(kind, ns, name string) string {
	if ns == "" {
		return kind + "/" + name + " (in the HelmRelease's namespace, unknown: name the HelmRelease NAMESPACE/NAME)"
	}
	return kind + "/" + ns + "/" + name
}

// chartSource is where a HelmRelease's chart is in the checkout, and the
// values files its HelmChart composes the chart's default values from.
type chartSource struct {
	// dir is the chart; base the source's root, which valuesFiles are
	// relative to (a repository's chart: the chart itself).
	dir, base     string
	valuesFiles   []string
	ignoreMissing bool
}

// mergeValuesFiles makes the chart's default values those of its
// valuesFiles merged in order, as source-controller builds the chart
// artifact helm-controller installs (source-controller
// internal/helm/chart/builder_local.go mergeFileValues, then metadata.go
// OverwriteChartDefaultValues: the chart's values.yaml counts only when
// listed; a list of only "values.yaml" changes nothing, builder.go
// GetValuesFiles). Each file is read through the bounded reader; a path
// that leaves the source, or a missing file without
// ignoreMissingValuesFiles, is an error naming it.
func (c chartSource) mergeValuesFiles(chrt *helmchart.Chart) error {
	if len(c.valuesFiles) == 0 || len(c.valuesFiles) == 1 && filepath.Clean(c.valuesFiles[0]) == "values.yaml" {
		return nil
	}
	merged := map[string]any{}
	for _, f := range c.valuesFiles {
		p, err := render.Join(c.base, f)
		missing := errors.Is(err, fs.ErrNotExist)
		if err != nil && !missing {
			return fmt.Errorf("valuesFiles %s: %w", f, err)
		}
		st, err := os.Stat(p)
		switch {
		case missing && c.ignoreMissing:
			continue
		case missing || err != nil || !st.Mode().IsRegular():
			return fmt.Errorf("valuesFiles: no values file found at path %q (reference %q)", "/"+filepath.ToSlash(filepath.Clean(f)), f)
		}
		b, err := source.ReadFile(p, nil, source.DefaultMaxFileBytes)
		if err != nil {
			return fmt.Errorf("valuesFiles %s: %w", f, err)
		}
		vals := map[string]any{}
		if err := yaml.Unmarshal(b, &vals); err != nil {
			return fmt.Errorf("valuesFiles: unmarshaling values from %q failed: %w", f, err)
		}
		merged = chartutil.MergeMaps(merged, vals)
	}
	chrt.Values = merged
	return nil
}

func chartIn(ctx context.Context, env *render.Env, kind, ns, name, path string, atRevision bool) (chartSource, error) {
	switch kind {
	case "GitRepository", "Bucket":
	case "HelmRepository":
		// A repository's chart is local only when --source-map maps the
		// repository URL to a directory holding its charts unpacked
		// (DIR/<chart name>).
		repo, err := env.Lookup(ctx, schema.GroupVersionKind{Group: sourceGroup, Version: "v1", Kind: kind}, ns, name)
		if err == nil {
			url, _, _ := unstructured.NestedString(repo.Object, "spec", "url")
			if d, ok := env.SourceMap[url]; ok {
				dir, err := render.Join(d, path)
				if err != nil {
					return chartSource{}, fmt.Errorf("chart: %w", err)
				}
				return chartSource{dir: dir, base: dir}, nil
			}
		}
		return chartSource{}, fmt.Errorf("chart %q from %s: %w (keep the chart in a GitRepository or Bucket, or map the repository URL with --source-map URL=DIR holding DIR/%s)", path, sourceName(kind, ns, name), errOffline, path)
	default:
		return chartSource{}, fmt.Errorf("chart source kind %q is not supported", kind)
	}
	root := env.Root
	if src, err := env.Lookup(ctx, schema.GroupVersionKind{Group: sourceGroup, Version: "v1", Kind: kind}, ns, name); err == nil {
		root = sourceDir(ctx, env, src, atRevision)
	}
	dir, err := render.Join(root, path)
	if err != nil {
		return chartSource{}, fmt.Errorf("chart: %w", err)
	}
	return chartSource{dir: dir, base: root}, nil
}

// lookupClient gives fluxcd/pkg/chartutil the one call it makes, Get of a
// ConfigMap or Secret, answered from env (the cluster, or the checkout).
// Any other client method is a programming error: the embedded nil
// interface makes it fail loudly in tests.
type lookupClient struct {
	client.Client
	env *render.Env
	ctx context.Context
}

func (c *lookupClient) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	kind := "ConfigMap"
	if _, ok := obj.(*corev1.Secret); ok {
		kind = "Secret"
	}
	u, err := c.env.Lookup(c.ctx, schema.GroupVersionKind{Version: "v1", Kind: kind}, key.Namespace, key.Name)
	if err != nil {
		return err
	}
	content := u.Object
	if kind == "Secret" {
		// A Secret in the checkout may use stringData; the API server
		// would have folded it into data.
		data, err := objectData(u)
		if err != nil {
			return fmt.Errorf("reading Secret/%s: %w", key.Name, err)
		}
		bin := map[string]any{}
		var derived []string
		for k, v := range data {
			bin[k] = []byte(v)
			derived = append(derived, v)
		}
		c.env.AddSecret(u, derived...)
		content = map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": u.Object["metadata"], "data": bin}
		b, err := json.Marshal(content)
		if err != nil {
			return fmt.Errorf("reading Secret/%s: %w", key.Name, err)
		}
		return json.Unmarshal(b, obj)
	}
	return runtime.DefaultUnstructuredConverter.FromUnstructured(content, obj)
}

// postRenderer is helm-controller's chain of post-renderers (internal/
// postrender build.go BuildPostRenderers): each kustomize post-renderer
// (patches, images) in order, then commonMetadata, then the origin labels,
// which win over commonMetadata labels of the same key.
type postRenderer struct{ hr *helmv2.HelmRelease }

func (p postRenderer) Run(in *bytes.Buffer) (*bytes.Buffer, error) {
	out := in
	var err error
	for _, r := range p.hr.Spec.PostRenderers {
		if r.Kustomize == nil {
			continue
		}
		if out, err = kustomizePost(out, r.Kustomize.Patches, r.Kustomize.Images); err != nil {
			return nil, err
		}
	}
	var ts []resmap.Transformer
	if cm := p.hr.Spec.CommonMetadata; cm != nil {
		if cm.Labels != nil {
			ts = append(ts, labels(cm.Labels))
		}
		if cm.Annotations != nil {
			ts = append(ts, &builtins.AnnotationsTransformerPlugin{Annotations: cm.Annotations,
				FieldSpecs: []kustypes.FieldSpec{{Path: "metadata/annotations", CreateIfNotPresent: true}}})
		}
	}
	origin := map[string]string{helmGroup + "/name": p.hr.GetName()}
	if ns := p.hr.GetNamespace(); ns != "" {
		// Unknown (warned of): no empty namespace label.
		origin[helmGroup+"/namespace"] = ns
	}
	ts = append(ts, labels(origin))
	rf := resmap.NewFactory(provider.NewDefaultDepProvider().GetResourceFactory())
	m, err := rf.NewResMapFromBytes(out.Bytes())
	if err != nil {
		return nil, err
	}
	for _, t := range ts {
		if err := t.Transform(m); err != nil {
			return nil, err
		}
	}
	b, err := m.AsYaml()
	if err != nil {
		return nil, err
	}
	return bytes.NewBuffer(b), nil
}

// labels sets labels on metadata only (not selectors), as helm-controller's
// labelTransformer.
func labels(l map[string]string) resmap.Transformer {
	return &builtins.LabelTransformerPlugin{Labels: l,
		FieldSpecs: []kustypes.FieldSpec{{Path: "metadata/labels", CreateIfNotPresent: true}}}
}

// kustomizePost is helm-controller's Kustomize post-renderer
// (internal/postrender/kustomize.go): the chart output as the one resource
// of an in-memory kustomization with the patches and images.
func kustomizePost(in *bytes.Buffer, patches []kustomize.Patch, images []kustomize.Image) (*bytes.Buffer, error) {
	fs := filesys.MakeFsInMemory()
	cfg := kustypes.Kustomization{TypeMeta: kustypes.TypeMeta{APIVersion: kustypes.KustomizationVersion, Kind: kustypes.KustomizationKind}}
	const input = "helm-output.yaml"
	cfg.Resources = []string{input}
	for _, i := range images {
		cfg.Images = append(cfg.Images, kustypes.Image{Name: i.Name, NewName: i.NewName, NewTag: i.NewTag, Digest: i.Digest})
	}
	for _, p := range patches {
		cfg.Patches = append(cfg.Patches, kustypes.Patch{Patch: p.Patch, Target: adaptSelector(p.Target)})
	}
	if err := fs.WriteFile(input, in.Bytes()); err != nil {
		return nil, err
	}
	k, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	if err := fs.WriteFile("kustomization.yaml", k); err != nil {
		return nil, err
	}
	m, err := krusty.MakeKustomizer(&krusty.Options{LoadRestrictions: kustypes.LoadRestrictionsNone, PluginConfig: kustypes.DisabledPluginConfig()}).Run(fs, ".")
	if err != nil {
		return nil, fmt.Errorf("post-renderer kustomize: %w", err)
	}
	b, err := m.AsYaml()
	if err != nil {
		return nil, err
	}
	return bytes.NewBuffer(b), nil
}

func adaptSelector(s *kustomize.Selector) *kustypes.Selector {
	if s == nil {
		return nil
	}
	out := &kustypes.Selector{LabelSelector: s.LabelSelector, AnnotationSelector: s.AnnotationSelector}
	out.Group, out.Version, out.Kind = s.Group, s.Version, s.Kind
	out.Name, out.Namespace = s.Name, s.Namespace
	return out
}
