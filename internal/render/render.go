// Package render turns a local checkout into the objects each GitOps engine
// would apply: it finds the engine objects (a Flux Kustomization, ...) in
// the checkout or the cluster, maps their sources to directories of the
// checkout and asks the engine's Renderer to render them.
//
// It knows no engine: each engine implements Renderer in its own package
// (internal/flux/render, ...) and the command hands the renderers in. The
// interface is small on purpose, so that an engine registry can hold it.
package render

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8sversion "k8s.io/apimachinery/pkg/util/version"

	"github.com/kubectl-drift/kubectl-drift/internal/bound"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/redact"
	"github.com/kubectl-drift/kubectl-drift/internal/source"
)

// Ref names one engine object (a Flux Kustomization, an Argo CD
// Application...).
type Ref struct {
	GVK       schema.GroupVersionKind
	Namespace string
	Name      string
}

// String is Kind/namespace/name, the way the engines' CLIs name objects.
func (r Ref) String() string {
	if r.Namespace == "" {
		return r.GVK.Kind + "/" + r.Name
	}
	return r.GVK.Kind + "/" + r.Namespace + "/" + r.Name
}

// RefOf returns the Ref of obj.
func RefOf(obj *unstructured.Unstructured) Ref {
	return Ref{GVK: obj.GroupVersionKind(), Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

// Renderer is what an engine implements to render its objects.
type Renderer interface {
	// Handles says whether obj is an engine object this renderer renders.
	Handles(obj *unstructured.Unstructured) bool
	// Owner returns the engine object that the labels/annotations of a
	// live object name as its applier; false when none does.
	Owner(live *unstructured.Unstructured) (Ref, bool)
	// Render returns the objects the engine would apply for obj, as it
	// would send them to the API server.
	Render(ctx context.Context, env *Env, obj *unstructured.Unstructured) ([]*unstructured.Unstructured, error)
}

// Lander is what a Renderer implements, optionally, to say which
// namespace an object of the checkout without metadata.namespace is
// applied to by the engine objects it renders ("" when none says).
type Lander interface {
	Lands(env *Env, obj *unstructured.Unstructured) string
}

// LandsBy is an Env.Lands that asks the renderers that are Landers, the
// first to know winning.
func LandsBy(env *Env, renderers []Renderer) func(obj *unstructured.Unstructured) string {
	return func(obj *unstructured.Unstructured) string {
		for _, r := range renderers {
			if l, ok := r.(Lander); ok {
				if ns := l.Lands(env, obj); ns != "" {
					return ns
				}
			}
		}
		return ""
	}
}

// Env is what renderers read: the checkout and, optionally, the cluster.
type Env struct {
	// Root is the checkout (--source DIR), absolute with symlinks resolved.
	Root string
	// SourceMap maps a source URL (GitRepository spec.url, ...), or the
	// ExternalArtifactKey of an artifact, to a directory (--source-map
	// URL=DIR); a source not in it is Root.
	SourceMap map[string]string
	// Reader reads engine objects, sources, ConfigMaps and Secrets from the
	// cluster; nil renders from the checkout alone.
	Reader model.Reader
	// Files are the Kubernetes objects found in Root's manifests.
	Files []*unstructured.Unstructured
	// NoRemoteBases refuses kustomize bases fetched from the network.
	NoRemoteBases bool
	// WorkingTree reads every source from the working tree as it is,
	// whatever revision it names (--working-tree): ReadAt then reads no
	// history.
	WorkingTree bool
	// RenderLimits bound one chart's rendering in time and memory.
	RenderLimits bound.Limits
	// FetchTimeout bounds a kustomize build that fetches remote bases
	// (bound.DefaultTimeout when 0; --request-timeout sets it).
	FetchTimeout time.Duration
	// Warn, when set, is told what a renderer did that the user should
	// know of (remote bases fetched); nil drops it.
	Warn func(msg string)
	// StrictSubstitute fails a Flux postBuild substitution on a variable
	// that has no value and no default (kustomize-controller's
	// StrictPostBuildSubstitutions feature gate).
	StrictSubstitute bool
	// Capabilities reads what the cluster serves, for engines that template
	// with it (Helm's .Capabilities); nil offline: each engine's defaults.
	Capabilities func(ctx context.Context) (*Capabilities, error)

	// Secrets learns the values of every Secret a renderer reads
	// (postBuild substituteFrom, valuesFrom): printing masks them wherever
	// they land. Commands pass their own Scrubber, which scrubs all they
	// print; NewEnv makes one.
	Secrets *redact.Scrubber

	// Remotes are the URLs of the git remotes of the repository that
	// holds Root (read from its git config by NewEnv), nil when unknown:
	// OtherRepository compares a source's URL with them.
	Remotes []string

	// Lands, when set, is the namespace an object of Files without
	// metadata.namespace is applied to (a parent Kustomization's
	// targetNamespace), "" when unknown; LandsBy makes it. Lookup matches
	// such an object only in that namespace when it is known.
	Lands func(obj *unstructured.Unstructured) string

	// origins are the files Files were read from.
	origins map[*unstructured.Unstructured]string
	// revisions are the trees ReadAt extracted from the git history,
	// which Close removes.
	revisions *revisions
}

// StaticCapabilities are the Capabilities given by hand when there is no
// cluster (render --kube-version/--api-versions, as helm template's flags
// and as Argo CD's repo-server passes the destination cluster's): version
// is "v1.37.2" or "1.37.2" ("" leaves Helm's default).
func StaticCapabilities(version string, apiVersions []string) (*Capabilities, error) {
	if version == "" {
		return &Capabilities{APIVersions: apiVersions}, nil
	}
	v, err := k8sversion.ParseGeneric(version)
	if err != nil {
		return nil, fmt.Errorf("%q: %w", version, err)
	}
	return &Capabilities{KubeVersion: "v" + strings.TrimPrefix(version, "v"), Major: strconv.Itoa(int(v.Major())),
		Minor: strconv.Itoa(int(v.Minor())), APIVersions: apiVersions}, nil
}

// Capabilities are the cluster's version and served API versions, as
// discovery gives them.
type Capabilities struct {
	// KubeVersion is the server's git version ("v1.37.2"), Major and
	// Minor its /version fields as the server gives them ("1", "37").
	KubeVersion, Major, Minor string
	// APIVersions are "group/version" and "group/version/Kind" of every
	// served resource (helm.sh/helm/v4 pkg/action GetVersionSet's form).
	APIVersions []string
}

// AddSecret records the values of a Secret a renderer read, and of the
// values it derived from them (say, with newlines removed), so that they
// are masked in any rendered object or error text.
func (e *Env) AddSecret(secret *unstructured.Unstructured, derived ...string) {
	if e.Secrets == nil {
		e.Secrets = redact.NewScrubber()
	}
	e.Secrets.Add(secret.Object)
	if len(derived) > 0 {
		sd := map[string]any{}
		for i, v := range derived {
			sd[fmt.Sprint(i)] = v
		}
		e.Secrets.Add(map[string]any{"apiVersion": "v1", "kind": "Secret", "stringData": sd})
	}
}

// CheckoutOf is the checkout dir was found in: the --source-map
// directory, the tree of a revision (ReadAt) or Root that holds it, else
// dir itself.
func (e *Env) CheckoutOf(dir string) string {
	for _, d := range append(append(slices.Sorted(maps.Values(e.SourceMap)), e.revisionDirs()...), e.Root) {
		if d == "" {
			continue
		}
		if within(d, dir) {
			return d
		}
	}
	return dir
}

// MaskText replaces every recorded Secret value in s.
func (e *Env) MaskText(s string) string {
	if e.Secrets == nil {
		return s
	}
	return e.Secrets.String(s)
}

// MaskObject masks a rendered object in place for printing: a Secret's
// values (redact.Object) and, in any other object, the Secret values a
// substitution put into its strings.
func (e *Env) MaskObject(obj *unstructured.Unstructured) {
	redact.Object(obj.Object)
	if e.Secrets == nil {
		return
	}
	obj.Object = maskStrings(obj.Object, e.MaskText).(map[string]any)
}

func maskStrings(v any, mask func(string) string) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			t[k] = maskStrings(x, mask)
		}
		return t
	case []any:
		for i, x := range t {
			t[i] = maskStrings(x, mask)
		}
		return t
	case string:
		return mask(t)
	}
	return v
}

// NewEnv resolves root and reads the manifests it holds (recursively,
// through source's bounded reader). Files that are not Kubernetes manifests
// (Helm templates, values files) are skipped: only the objects matter here.
func NewEnv(root string) (*Env, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	abs, err = filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("--source %s: %w", root, unwrapPath(err))
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("--source %s: not a directory", root)
	}
	docs, _ := source.LoadFiles([]string{abs}, nil, source.Options{Recursive: true, NoPositions: true})
	env := &Env{Root: abs, Remotes: gitRemotes(abs), Secrets: redact.NewScrubber(), origins: map[*unstructured.Unstructured]string{}, revisions: newRevisions()}
	patches := patchFiles(abs)
	for _, d := range source.WithObject(docs) {
		// Kustomize patch fragments are no objects to render or look up.
		if patches[filepath.Clean(d.File)] || source.HasPatchDirective(d.Object.Object) {
			continue
		}
		if !d.Object.IsList() {
			env.Files = append(env.Files, d.Object)
			env.origins[d.Object] = d.File
			continue
		}
		_ = d.Object.EachListItem(func(o runtime.Object) error {
			if u, ok := o.(*unstructured.Unstructured); ok {
				env.Files = append(env.Files, u)
				env.origins[u] = d.File
			}
			return nil
		})
	}
	return env, nil
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Lookup reads one object: from the cluster when Env.Reader is set (what
// the engine reads), else from the checkout's files, where an object
// without a namespace matches the namespace it is applied to (Lands), or
// any when that is unknown. A missing object is a NotFound error.
func (e *Env) Lookup(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error) {
	if e.Reader != nil {
		return e.Reader.Get(ctx, gvk, namespace, name)
	}
	for _, f := range e.Files {
		fg := f.GroupVersionKind()
		if fg.Group == gvk.Group && fg.Kind == gvk.Kind && f.GetName() == name && f.GetNamespace() == namespace {
			return f, nil
		}
	}
	// An object without metadata.namespace is in the namespace it is
	// applied to: when that is known it must be namespace; when it is not
	// (no parent says), it may be any. Tried after the exact matches, so
	// that one of another namespace is never taken for ns/name.
	for _, f := range e.Files {
		fg := f.GroupVersionKind()
		if fg.Group != gvk.Group || fg.Kind != gvk.Kind || f.GetName() != name || f.GetNamespace() != "" {
			continue
		}
		if e.Lands != nil {
			if lands := e.Lands(f); lands != "" && lands != namespace {
				continue
			}
		}
		return f, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Group: gvk.Group, Resource: strings.ToLower(gvk.Kind)}, name)
}

// ExternalArtifactKey is the --source-map key of a Flux ExternalArtifact,
// which has no URL: "ExternalArtifact/NAMESPACE/NAME".
func ExternalArtifactKey(namespace, name string) string {
	return "ExternalArtifact/" + namespace + "/" + name
}

// SourceRoot is the directory of the checkout that holds the source at url:
// its --source-map entry, else Root.
func (e *Env) SourceRoot(url string) string {
	if d, ok := e.SourceMap[url]; ok {
		return d
	}
	return e.Root
}

// Join resolves path (relative, as in a Kustomization's spec.path) inside
// base and refuses one that leaves base, through ".." or a symlink:
// nothing outside the checkout is read.
func Join(base, path string) (string, error) {
	p := filepath.Join(base, filepath.FromSlash(path))
	if !within(base, p) {
		return "", fmt.Errorf("path %q leaves the source directory %s", path, base)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", fmt.Errorf("path %q: %w", path, unwrapPath(err))
	}
	if !within(base, real) {
		return "", fmt.Errorf("path %q leaves the source directory %s through a symlink", path, base)
	}
	return real, nil
}

func within(base, p string) bool {
	rel, err := filepath.Rel(base, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// Error is a render failure of one engine object.
type Error struct {
	Ref Ref
	Err error
}

func (e *Error) Error() string { return e.Ref.String() + ": " + oneLine(e.Err.Error()) }

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Result is the render of one engine object: its objects, or its error.
type Result struct {
	Ref     Ref
	Objects []*unstructured.Unstructured
	Err     error
}

// Targets returns the engine objects of the checkout that a renderer
// handles, sorted.
func Targets(env *Env, renderers []Renderer) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, f := range env.Files {
		if rendererFor(renderers, f) != nil {
			out = append(out, f)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return lessRef(RefOf(out[i]), RefOf(out[j])) })
	return out
}

// Resolve reads the engine object ref names (cluster first when there is
// one, then the checkout, as Lookup does).
func Resolve(ctx context.Context, env *Env, ref Ref) (*unstructured.Unstructured, error) {
	obj, err := env.Lookup(ctx, ref.GVK, ref.Namespace, ref.Name)
	if err != nil && env.Reader != nil && apierrors.IsNotFound(err) {
		// Not in the cluster (yet): the checkout may hold it.
		offline := *env
		offline.Reader = nil
		obj, err = offline.Lookup(ctx, ref.GVK, ref.Namespace, ref.Name)
	}
	if err != nil {
		if apierrors.IsNotFound(err) {
			return nil, &Error{Ref: ref, Err: errors.New("not found in the cluster or the checkout")}
		}
		return nil, &Error{Ref: ref, Err: err}
	}
	if obj.GetNamespace() == "" && ref.Namespace != "" && env.Reader == nil {
		// A checkout object without metadata.namespace, named as
		// ref.Namespace/NAME (Lookup checked that no parent applies it
		// elsewhere): it is in that namespace, as the engine sees it once
		// applied there (its sources, values and labels are read in it).
		obj = obj.DeepCopy()
		obj.SetNamespace(ref.Namespace)
	}
	return obj, nil
}

// Render renders each engine object; one that fails does not stop the
// others. Results come in the order of objs, their objects sorted.
func Render(ctx context.Context, env *Env, renderers []Renderer, objs []*unstructured.Unstructured) []Result {
	out := make([]Result, 0, len(objs))
	for _, obj := range objs {
		ref := RefOf(obj)
		r := rendererFor(renderers, obj)
		if r == nil {
			out = append(out, Result{Ref: ref, Err: &Error{Ref: ref, Err: errors.New("no renderer for this kind")}})
			continue
		}
		got, err := r.Render(ctx, env, obj)
		if err != nil {
			// An error may quote a substituted Secret value.
			out = append(out, Result{Ref: ref, Err: &Error{Ref: ref, Err: errors.New(env.MaskText(err.Error()))}})
			continue
		}
		Sort(got)
		out = append(out, Result{Ref: ref, Objects: got})
	}
	return out
}

// OwnerOf returns the engine object a live object names as its applier,
// or false.
func OwnerOf(renderers []Renderer, live *unstructured.Unstructured) (Ref, bool) {
	for _, r := range renderers {
		if ref, ok := r.Owner(live); ok {
			return ref, true
		}
	}
	return Ref{}, false
}

// ForLive renders the engine object that applies live (its owner by labels,
// or owner when given) and returns the rendered objects.
func ForLive(ctx context.Context, env *Env, renderers []Renderer, live *unstructured.Unstructured, owner *Ref) (Ref, []*unstructured.Unstructured, error) {
	ref, obj, err := ownerOfLive(ctx, env, renderers, live, owner, "no engine object names this object as its own (no Flux or Argo CD ownership labels): name it with --kustomization, --helmrelease or --app")
	if err != nil {
		return ref, nil, err
	}
	res := Render(ctx, env, renderers, []*unstructured.Unstructured{obj})
	return ref, res[0].Objects, res[0].Err
}

// ownerOfLive reads the engine object that applies live: owner when given,
// else the one live's ownership labels name; notOwned is the error when
// none does.
func ownerOfLive(ctx context.Context, env *Env, renderers []Renderer, live *unstructured.Unstructured, owner *Ref, notOwned string) (Ref, *unstructured.Unstructured, error) {
	var ref Ref
	switch {
	case owner != nil:
		ref = *owner
	default:
		var ok bool
		if ref, ok = OwnerOf(renderers, live); !ok {
			return Ref{}, nil, errors.New(notOwned)
		}
	}
	obj, err := Resolve(ctx, env, ref)
	return ref, obj, err
}

func rendererFor(renderers []Renderer, obj *unstructured.Unstructured) Renderer {
	for _, r := range renderers {
		if r.Handles(obj) {
			return r
		}
	}
	return nil
}

// Sort orders objects by API group, kind, namespace and name: a stable
// order whatever order the engine's build produced.
func Sort(objs []*unstructured.Unstructured) {
	sort.SliceStable(objs, func(i, j int) bool { return lessRef(RefOf(objs[i]), RefOf(objs[j])) })
}

func lessRef(a, b Ref) bool {
	if a.GVK.Group != b.GVK.Group {
		return a.GVK.Group < b.GVK.Group
	}
	if a.GVK.Kind != b.GVK.Kind {
		return a.GVK.Kind < b.GVK.Kind
	}
	if a.Namespace != b.Namespace {
		return a.Namespace < b.Namespace
	}
	return a.Name < b.Name
}
