package render

import (
	"context"
	"errors"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// LocationKind says how an engine object's manifests are laid out in the
// checkout, i.e. which adopt locator can find a field's source there.
type LocationKind string

// Kinds of location.
const (
	// LocateKustomize: a directory with a kustomization file.
	LocateKustomize LocationKind = "kustomize"
	// LocateFiles: plain manifest files (a directory the engine builds
	// without a kustomization file of its own), and the kustomize
	// directories below it that it includes whole.
	LocateFiles LocationKind = "files"
	// LocateHelm: a chart directory and the values layered over it.
	LocateHelm LocationKind = "helm"
)

// Location is where in the checkout the desired state of an engine
// object is written, engine-neutral: commands that edit the checkout
// (adopt) turn it into their own locators. Paths are absolute and inside
// the checkout (checked with Join).
type Location struct {
	Kind LocationKind
	// Dir is the kustomize directory (LocateKustomize), the directory of
	// the files (LocateFiles) or the chart (LocateHelm).
	Dir string
	// Files are the manifest files (LocateFiles), sorted.
	Files []string
	// KustomizeDirs are kustomize directories included whole (LocateFiles).
	KustomizeDirs []string
	// Values are the values layered over the chart's values.yaml,
	// highest precedence first (LocateHelm).
	Values []ValuesLayer
}

// ValuesLayer is one source of Helm values: a document of a file, and the
// pointer of the values in it ("" for a values file, "/spec/values" for a
// HelmRelease's inline values).
type ValuesLayer struct {
	File   string
	Prefix string
	// Object, when set, is the object whose document holds the values (the
	// file may hold several documents); else the file's first document.
	Object *unstructured.Unstructured
}

// SourceLocator is what a Renderer implements, optionally, to say where
// an engine object's manifests are in the checkout.
type SourceLocator interface {
	Locate(ctx context.Context, env *Env, obj *unstructured.Unstructured) (*Location, error)
}

// LocateForLive finds the engine object that applies live (its owner by
// labels, or owner when given) and where its manifests are in the
// checkout.
func LocateForLive(ctx context.Context, env *Env, renderers []Renderer, live *unstructured.Unstructured, owner *Ref) (Ref, *Location, error) {
	ref, obj, err := ownerOfLive(ctx, env, renderers, live, owner, "no engine object names this object as its own (no ownership labels or tracking annotation of a rendering engine): name it with --kustomization, --helmrelease or --app")
	if err != nil {
		return ref, nil, err
	}
	r := rendererFor(renderers, obj)
	sl, ok := r.(SourceLocator)
	if r == nil || !ok {
		return ref, nil, &Error{Ref: ref, Err: errors.New("its engine cannot say where its manifests are in the checkout")}
	}
	loc, err := sl.Locate(ctx, env, obj)
	if err != nil {
		return ref, nil, &Error{Ref: ref, Err: errors.New(env.MaskText(err.Error()))}
	}
	return ref, loc, nil
}

// CheckoutCopy is the checkout's copy of the engine object obj and the
// file that holds it: obj itself when it was read from the checkout, else
// (obj read from the cluster) the checkout's object of the same kind,
// namespace and name; nil and "" when the checkout has none. Commands
// that edit an engine object's manifest (adopt) edit that file.
func (e *Env) CheckoutCopy(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, string) {
	if file := e.FileOf(obj); file != "" {
		return obj, file
	}
	offline := *e
	offline.Reader = nil
	m, err := offline.Lookup(ctx, obj.GroupVersionKind(), obj.GetNamespace(), obj.GetName())
	if err != nil {
		return nil, ""
	}
	return m, e.FileOf(m)
}

// FileOf is the checkout file obj was read from (an object of Env.Files),
// or "".
func (e *Env) FileOf(obj *unstructured.Unstructured) string {
	return e.origins[obj]
}
