package render

import (
	"path/filepath"
	"strings"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/render"
)

// Lands is the namespace obj, an object of the checkout, is applied to:
// its metadata.namespace, else the targetNamespace of the Kustomization
// of the checkout whose spec.path holds its file (the deepest one: the
// generated kustomization takes in every manifest below the path), else
// "" (unknown: no Kustomization of the checkout says). A Kustomization
// that includes files outside its path through a kustomization.yaml is
// not followed: that would need a build.
func (*Renderer) Lands(env *render.Env, obj *unstructured.Unstructured) string {
	if ns := obj.GetNamespace(); ns != "" {
		return ns
	}
	file := env.FileOf(obj)
	if file == "" {
		return ""
	}
	lands, depth := "", -1
	for _, k := range env.Files {
		gvk := k.GroupVersionKind()
		if gvk.Group != kustomizeGroup || gvk.Kind != kustomizev1.KustomizationKind {
			continue
		}
		path, _, _ := unstructured.NestedString(k.Object, "spec", "path")
		dir, err := render.Join(env.Root, path)
		if err != nil || !under(dir, file) || len(dir) <= depth {
			continue
		}
		lands, depth = "", len(dir)
		if ns, _, _ := unstructured.NestedString(k.Object, "spec", "targetNamespace"); ns != "" {
			lands = ns
		}
	}
	return lands
}

// under says whether file is below dir.
func under(dir, file string) bool {
	rel, err := filepath.Rel(dir, file)
	return err == nil && !filepath.IsAbs(rel) && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
