// Package render renders Flux objects from a local checkout the way the
// Flux controllers do: a Kustomization is built with Flux's own kustomize
// wrapper (github.com/fluxcd/pkg/kustomize, the code kustomize-controller
// and `flux build kustomization` run) and its postBuild substitutions, and
// gets the labels and normalization kustomize-controller applies before its
// server-side apply. It implements internal/render's Renderer.
package render

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strings"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	generator "github.com/fluxcd/pkg/kustomize"
	securefs "github.com/fluxcd/pkg/kustomize/filesys"
	ssautil "github.com/fluxcd/pkg/ssa/utils"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/kubectl-drift/kubectl-drift/internal/render"
	"github.com/kubectl-drift/kubectl-drift/internal/source"
)

// Flux API groups and the label keys kustomize-controller and
// helm-controller put on what they apply (fluxcd/pkg/ssa manager.go
// SetOwnerLabels: <group>/name and <group>/namespace).
const (
	kustomizeGroup = "kustomize.toolkit.fluxcd.io"
	helmGroup      = "helm.toolkit.fluxcd.io"
	sourceGroup    = "source.toolkit.fluxcd.io"
)

// externalArtifactKind is source.toolkit.fluxcd.io/v1 ExternalArtifact
// (source-controller api/v1/externalartifact_types.go, Flux 2.7+): an
// artifact a third-party controller (source-watcher's ArtifactGenerator...)
// publishes in the cluster, in its status.artifact; its spec names only
// the object it is generated for. kustomize-controller reads it as a
// sourceRef (internal/controller/kustomization_controller.go getSource),
// helm-controller as a chartRef whose artifact is the chart
// (internal/controller/helmrelease_controller.go
// getSourceFromExternalArtifact).
const externalArtifactKind = "ExternalArtifact"

// externalArtifactDir is the directory --source-map
// ExternalArtifact/NAMESPACE/NAME=DIR gives the artifact. Without one the
// artifact is unreachable: it is built in the cluster from inputs the
// checkout may not hold, never a path of the checkout, so the error names
// the source and the mapping instead of reading the checkout root.
func externalArtifactDir(env *render.Env, field, ns, name string) (string, error) {
	key, label := render.ExternalArtifactKey(ns, name), externalArtifactKind+"/"+ns+"/"+name
	if ns == "" {
		key, label = render.ExternalArtifactKey("NAMESPACE", name), externalArtifactKind+"/"+name+" (namespace unknown)"
	} else if d, ok := env.SourceMap[key]; ok {
		return d, nil
	}
	return "", fmt.Errorf("%s %s: an artifact a controller publishes in the cluster, not a directory of the checkout: %w; map it with --source-map %s=DIR", field, label, errOffline, key)
}

// Renderer renders Flux Kustomizations and HelmReleases.
type Renderer struct{}

// New returns the Flux renderer.
func New() *Renderer { return &Renderer{} }

// Handles says whether obj is a Flux Kustomization or HelmRelease (any
// API version).
func (*Renderer) Handles(obj *unstructured.Unstructured) bool {
	gvk := obj.GroupVersionKind()
	return (gvk.Group == kustomizeGroup && gvk.Kind == kustomizev1.KustomizationKind) ||
		(gvk.Group == helmGroup && gvk.Kind == helmv2.HelmReleaseKind)
}

// Owner reads the ownership labels kustomize-controller and helm-controller
// set; a HelmRelease's objects also carry its Kustomization's labels when
// the Kustomization applied the HelmRelease only, so the Helm labels win.
func (*Renderer) Owner(live *unstructured.Unstructured) (render.Ref, bool) {
	l := live.GetLabels()
	if name, ns := l[helmGroup+"/name"], l[helmGroup+"/namespace"]; name != "" && ns != "" {
		return render.Ref{GVK: helmv2.GroupVersion.WithKind(helmv2.HelmReleaseKind), Namespace: ns, Name: name}, true
	}
	if name, ns := l[kustomizeGroup+"/name"], l[kustomizeGroup+"/namespace"]; name != "" && ns != "" {
		return render.Ref{GVK: kustomizev1.GroupVersion.WithKind(kustomizev1.KustomizationKind), Namespace: ns, Name: name}, true
	}
	return render.Ref{}, false
}

// Render renders obj as its controller would apply it.
func (*Renderer) Render(ctx context.Context, env *render.Env, obj *unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	if obj.GroupVersionKind().Kind == helmv2.HelmReleaseKind {
		return renderHelmRelease(ctx, env, obj)
	}
	return renderKustomization(ctx, env, obj)
}

// renderKustomization follows kustomize-controller's reconcile
// (kustomize-controller internal/controller/kustomization_controller.go:
// generate, build, then SetOwnerLabels and apply's SetCommonMetadata), as
// `flux build kustomization` does (flux2 internal/build/build.go), with
// these differences:
//   - the generated kustomization.yaml lives in memory instead of a copy
//     of the artifact (as `flux build kustomization --in-memory-build`);
//   - SOPS decryption is not done (an encrypted Secret stays encrypted);
//   - the controller's normalize.UnstructuredList (a round trip through
//     the typed API objects, which writes out defaults such as
//     creationTimestamp: null, protocol: TCP or targetPort: 0 that the
//     API server sets or ignores anyway) is left out, as flux build leaves
//     it out: the result is the manifest as a user would write it, so
//     that explain --source judges exactly as explain -f does.
func renderKustomization(ctx context.Context, env *render.Env, obj *unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	obj = withLandingNamespace(env, obj)
	ks, root, dir, err := kustomizationPath(ctx, env, obj, true)
	if err != nil {
		return nil, err
	}
	// The controller hands the generator the typed object made
	// unstructured again (defaults and all), not the manifest as written.
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(ks)
	if err != nil {
		return nil, fmt.Errorf("converting Kustomization %s: %w", ks.GetName(), err)
	}
	u := unstructured.Unstructured{Object: content}
	m, err := buildKustomization(ctx, env, u, root, dir)
	if err != nil {
		return nil, err
	}
	if err := substitutePostBuild(ctx, env, ks, u, m); err != nil {
		return nil, err
	}
	data, err := m.AsYaml()
	if err != nil {
		return nil, fmt.Errorf("kustomize build failed: %w", err)
	}
	objects, err := ssautil.ReadObjects(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("reading the objects kustomize built: %w", err)
	}
	labelObjects(ks, objects)
	return objects, nil
}

// withLandingNamespace gives a Kustomization or HelmRelease of the
// checkout without metadata.namespace the namespace its parent applies it
// to: the controller reads its sources, variables and values there and
// labels its objects with it (a HelmRelease's sourceRef without a
// namespace is in the HelmRelease's: helm-controller api/v2
// HelmChartTemplate.GetNamespace(hr.Namespace); its release namespace is
// it unless targetNamespace, GetReleaseNamespace). Unknown, it warns and
// returns obj as it is.
func withLandingNamespace(env *render.Env, obj *unstructured.Unstructured) *unstructured.Unstructured {
	if obj.GetNamespace() != "" {
		return obj
	}
	if ns := (*Renderer)(nil).Lands(env, obj); ns != "" {
		obj = obj.DeepCopy()
		obj.SetNamespace(ns)
	} else if env.Warn != nil {
		env.Warn(fmt.Sprintf("%s %s has no metadata.namespace and no Kustomization of the checkout sets its targetNamespace: its namespace is unknown, its objects get no %s/namespace label (name it NAMESPACE/%s)", obj.GetKind(), obj.GetName(), groupOf(obj), obj.GetName()))
	}
	return obj
}

// groupOf is the API group of obj's kind.
func groupOf(obj *unstructured.Unstructured) string {
	return obj.GroupVersionKind().Group
}

// buildKustomization generates the kustomization.yaml of dir the way the
// controller does (in memory, over the checkout) and builds it, within
// the render bounds.
func buildKustomization(ctx context.Context, env *render.Env, u unstructured.Unstructured, root, dir string) (resmap.ResMap, error) {
	manifest, kfile, _, err := generator.NewGenerator(root, u).GenerateManifest(dir)
	if err != nil {
		return nil, fmt.Errorf("generating the kustomization of %s: %w", dir, err)
	}
	// Remote bases need the build FS that lets kustomize clone into a
	// temporary directory (kustomize-controller's --no-remote-bases flag
	// picks between the two the same way).
	var disk filesys.FileSystem
	if env.NoRemoteBases {
		disk, err = securefs.MakeFsOnDiskSecure(root)
	} else {
		disk, err = securefs.MakeFsOnDiskSecureBuild(root)
	}
	if err != nil {
		return nil, fmt.Errorf("the checkout's file system at %s: %w", root, err)
	}
	fs := boundedFS{newFileOverlay(disk, kfile, manifest)}
	m, err := render.BuildRemote(ctx, env, fs, dir, kfile, func(ctx context.Context) (resmap.ResMap, error) {
		return generator.Build(fs, dir)
	})
	if errors.Is(err, render.ErrBound) || errors.Is(err, render.ErrRemoteRefused) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("kustomize build failed: %w", err)
	}
	return m, nil
}

// substitutePostBuild checks every built resource has an apiVersion, kind
// and name, and applies spec.postBuild's variables to them in m. Dry-run:
// the variables are loaded here (cluster or checkout), not by the library
// through a controller-runtime client; the substitution itself, the
// disabled mark and strictness are the library's.
func substitutePostBuild(ctx context.Context, env *render.Env, ks *kustomizev1.Kustomization, u unstructured.Unstructured, m resmap.ResMap) error {
	var substituted *unstructured.Unstructured
	if ks.Spec.PostBuild != nil {
		vars, err := loadVariables(ctx, env, ks)
		if err != nil {
			return err
		}
		substituted = withVariables(u, vars)
	}
	always := ks.GetSubstituteStrategy() == kustomizev1.SubstituteStrategyAlways
	for _, res := range m.Resources() {
		if res.GetName() == "" || res.GetKind() == "" || res.GetApiVersion() == "" {
			return fmt.Errorf("failed to decode Kubernetes apiVersion, kind and name from: %v", res.String())
		}
		if substituted == nil {
			continue
		}
		out, err := generator.SubstituteVariables(ctx, nil, *substituted, res,
			generator.SubstituteWithDryRun(true),
			generator.SubstituteWithStrict(env.StrictSubstitute),
			generator.SubstituteWithAlways(always))
		if err != nil {
			return fmt.Errorf("post build failed for '%s/%s': %w", res.GetGvk(), res.GetName(), err)
		}
		if out != nil {
			if _, err := m.Replace(res); err != nil {
				return fmt.Errorf("post build of '%s/%s': %w", res.GetGvk(), res.GetName(), err)
			}
		}
	}
	return nil
}

// labelObjects writes the ownership labels and spec.commonMetadata the
// controller writes on every object it applies.
func labelObjects(ks *kustomizev1.Kustomization, objects []*unstructured.Unstructured) {
	for _, o := range objects {
		labels := o.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels[kustomizeGroup+"/name"] = ks.GetName()
		if ks.GetNamespace() != "" { // unknown: said above, not written empty
			labels[kustomizeGroup+"/namespace"] = ks.GetNamespace()
		}
		o.SetLabels(labels)
	}
	if cm := ks.Spec.CommonMetadata; cm != nil {
		ssautil.SetCommonMetadata(objects, cm.Labels, cm.Annotations)
	}
}

// kustomizationPath decodes the Kustomization obj and finds its spec.path
// in the checkout: the source root and the directory below it, the way
// Render and Locate both find them (atRevision: at the GitRepository's
// ref, sourceDir).
func kustomizationPath(ctx context.Context, env *render.Env, obj *unstructured.Unstructured, atRevision bool) (ks *kustomizev1.Kustomization, root, dir string, err error) {
	ks = &kustomizev1.Kustomization{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, ks); err != nil {
		return nil, "", "", fmt.Errorf("not a valid Kustomization: %w", err)
	}
	if root, err = sourceRoot(ctx, env, *ks, atRevision); err != nil {
		return nil, "", "", err
	}
	if dir, err = render.Join(root, ks.Spec.Path); err != nil {
		return nil, "", "", fmt.Errorf("spec.path: %w", err)
	}
	return ks, root, dir, nil
}

// sourceRoot is the checkout directory of the Kustomization's source: its
// --source-map entry by the source's URL, else the checkout root, at the
// GitRepository's ref (sourceDir). An ExternalArtifact has no URL and no
// checkout: only its own --source-map entry (externalArtifactDir) gives
// it a directory.
func sourceRoot(ctx context.Context, env *render.Env, ks kustomizev1.Kustomization, atRevision bool) (string, error) {
	ref := ks.Spec.SourceRef
	ns := ref.Namespace
	if ns == "" {
		ns = ks.GetNamespace()
	}
	if ref.Kind == externalArtifactKind {
		return externalArtifactDir(env, "sourceRef", ns, ref.Name)
	}
	gv := schema.GroupVersion{Group: sourceGroup, Version: "v1"}
	if ref.APIVersion != "" {
		if parsed, err := schema.ParseGroupVersion(ref.APIVersion); err == nil {
			gv = parsed
		}
	}
	src, err := env.Lookup(ctx, gv.WithKind(ref.Kind), ns, ref.Name)
	if err != nil {
		// Without a --source-map the source only says which ref to read:
		// unreadable, the checkout is read as it is, as before refs were.
		if apierrors.IsNotFound(err) || len(env.SourceMap) == 0 {
			return env.Root, nil
		}
		return "", fmt.Errorf("reading source %s/%s/%s: %w", ref.Kind, ns, ref.Name, err)
	}
	return sourceDir(ctx, env, src, atRevision), nil
}

// sourceDir is the directory of a source object: its --source-map entry
// by spec.url, else the checkout root; for a GitRepository of the
// checkout's repository read atRevision, that directory at its spec.ref
// from the local git history (render.Env.ReadAt: the working tree when
// the ref does not resolve there, with a warning naming it).
func sourceDir(ctx context.Context, env *render.Env, src *unstructured.Unstructured, atRevision bool) string {
	url, _, _ := unstructured.NestedString(src.Object, "spec", "url")
	root := env.SourceRoot(url)
	if !atRevision || src.GetKind() != "GitRepository" || env.OtherRepository(url) {
		return root
	}
	who := fmt.Sprintf("GitRepository %s/%s", src.GetNamespace(), src.GetName())
	rev, field := gitRef(src)
	if field == "spec.ref.semver" {
		// The highest tag in the range needs the remote's tags: not read.
		env.WarnOnce(fmt.Sprintf("%s %s %s: a semver range is not resolved from the local git history: rendered from the working tree of %s instead", who, field, rev, root))
		return root
	}
	return env.ReadAt(ctx, root, rev, who+" "+field).Dir
}

// gitRef is the revision a GitRepository's spec.ref names and its field,
// in source-controller's order (fluxcd/pkg/git gogit/client.go clone:
// commit, then name, tag, semver, then branch, "master" when none is set;
// git.DefaultBranch).
func gitRef(src *unstructured.Unstructured) (rev, field string) {
	for _, f := range []string{"commit", "name", "tag", "semver", "branch"} {
		if v, _, _ := unstructured.NestedString(src.Object, "spec", "ref", f); v != "" {
			return v, "spec.ref." + f
		}
	}
	return "master", "spec.ref.branch (source-controller's default)"
}

// loadVariables reads postBuild.substituteFrom as the library's
// LoadVariables does (fluxcd/pkg/kustomize kustomize_varsub.go: in order,
// later keys win, newlines removed, optional references may be missing),
// through env (the cluster, or the checkout's files), then lays the inline
// postBuild.substitute over them.
func loadVariables(ctx context.Context, env *render.Env, ks *kustomizev1.Kustomization) (map[string]string, error) {
	vars := map[string]string{}
	for _, ref := range ks.Spec.PostBuild.SubstituteFrom {
		if ref.Kind != "ConfigMap" && ref.Kind != "Secret" {
			continue
		}
		obj, err := env.Lookup(ctx, schema.GroupVersionKind{Version: "v1", Kind: ref.Kind}, ks.GetNamespace(), ref.Name)
		if err != nil {
			if ref.Optional && apierrors.IsNotFound(err) {
				continue
			}
			return nil, fmt.Errorf("substitute from '%s/%s' error: %w", ref.Kind, ref.Name, err)
		}
		data, err := objectData(obj)
		if err != nil {
			return nil, fmt.Errorf("substitute from '%s/%s' error: %w", ref.Kind, ref.Name, err)
		}
		var derived []string
		for k, v := range data {
			v = strings.ReplaceAll(v, "\n", "")
			vars[k] = v
			derived = append(derived, v)
		}
		if ref.Kind == "Secret" {
			env.AddSecret(obj, derived...)
		}
	}
	for k, v := range ks.Spec.PostBuild.Substitute {
		vars[k] = strings.ReplaceAll(v, "\n", "")
	}
	return vars, nil
}

// objectData is a ConfigMap's data, or a Secret's data decoded, with its
// stringData (which a manifest in the checkout may use; the API server
// folds it into data) laid over it.
func objectData(obj *unstructured.Unstructured) (map[string]string, error) {
	out := map[string]string{}
	data, _, err := unstructured.NestedStringMap(obj.Object, "data")
	if err != nil {
		return nil, err
	}
	secret := obj.GetKind() == "Secret"
	for k, v := range data {
		if secret {
			b, err := base64.StdEncoding.DecodeString(v)
			if err != nil {
				return nil, fmt.Errorf("data key %q is not base64", k)
			}
			v = string(b)
		}
		out[k] = v
	}
	if secret {
		sd, _, err := unstructured.NestedStringMap(obj.Object, "stringData")
		if err != nil {
			return nil, err
		}
		for k, v := range sd {
			out[k] = v
		}
	}
	return out, nil
}

// withVariables returns a copy of the Kustomization whose inline
// postBuild.substitute holds every variable, so that the library's
// dry-run substitution uses them all.
func withVariables(u unstructured.Unstructured, vars map[string]string) *unstructured.Unstructured {
	c := u.DeepCopy()
	m := make(map[string]any, len(vars))
	for k, v := range vars {
		m[k] = v
	}
	_ = unstructured.SetNestedField(c.Object, m, "spec", "postBuild", "substitute")
	_ = unstructured.SetNestedField(c.Object, nil, "spec", "postBuild", "substituteFrom")
	return c
}

// boundedFS reads kustomize's inputs through a size limit, so that a
// kustomization naming /dev/zero or a huge file fails instead of
// allocating it (the limit of internal/source's reader).
type boundedFS struct{ filesys.FileSystem }

func (b boundedFS) ReadFile(path string) ([]byte, error) {
	f, err := b.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	return source.ReadAll(io.Reader(f), source.DefaultMaxFileBytes)
}
