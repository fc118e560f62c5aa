package render

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/redact"
	"github.com/kubectl-drift/kubectl-drift/internal/render"
)

// BuildObjects applies the Kustomization ks's own build to objects read
// from a file (explain -f): its patches, images, namePrefix/nameSuffix,
// targetNamespace, postBuild substitution (substituteFrom read through
// reader, nil for none), the ownership labels and commonMetadata, exactly
// as renderKustomization builds a directory of the checkout: the objects
// are written alone into a temporary directory, which is then built as the
// Kustomization's spec.path. A Kustomization with components cannot be
// built this way (they are paths of its source): that is an error, and the
// caller says it compared the file as written.
// The values of Secrets substituteFrom reads are added to secrets (when not
// nil), so that printing masks them wherever they land.
func BuildObjects(ctx context.Context, reader model.Reader, secrets *redact.Scrubber, ks *unstructured.Unstructured, objects []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	if comps, _, _ := unstructured.NestedStringSlice(ks.Object, "spec", "components"); len(comps) > 0 {
		return nil, errors.New("its spec.components are paths of its source, which a single file does not have")
	}
	dir, err := os.MkdirTemp("", "drift-build-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	var data []byte
	for _, o := range objects {
		b, err := yaml.Marshal(o.Object)
		if err != nil {
			return nil, err
		}
		data = append(append(data, "---\n"...), b...)
	}
	if err := os.WriteFile(filepath.Join(dir, "objects.yaml"), data, 0o600); err != nil {
		return nil, err
	}
	c := ks.DeepCopy()
	_ = unstructured.SetNestedField(c.Object, "./", "spec", "path")
	env, err := render.NewEnv(dir)
	if err != nil {
		return nil, err
	}
	env.Reader = reader
	if secrets != nil {
		env.Secrets = secrets
	}
	env.NoRemoteBases = true
	out, err := renderKustomization(ctx, env, c)
	if err != nil {
		return nil, fmt.Errorf("building as %s %s/%s: %w", kustomizev1.KustomizationKind, ks.GetNamespace(), ks.GetName(), err)
	}
	return out, nil
}
