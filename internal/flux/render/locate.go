package render

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/kustomize/api/konfig"

	"github.com/kubectl-drift/kubectl-drift/internal/render"
)

// Locate implements render.SourceLocator: where a Kustomization's or a
// HelmRelease's manifests are in the checkout, found the way Render finds
// them (same source root, same path checks).
func (*Renderer) Locate(ctx context.Context, env *render.Env, obj *unstructured.Unstructured) (*render.Location, error) {
	if obj.GroupVersionKind().Kind == helmv2.HelmReleaseKind {
		return locateHelmRelease(ctx, env, obj)
	}
	// adopt edits the checkout: the working tree, whatever ref the
	// source names.
	ks, root, dir, err := kustomizationPath(ctx, env, obj, false)
	if err != nil {
		return nil, err
	}
	if hasKustomization(dir) {
		return &render.Location{Kind: render.LocateKustomize, Dir: dir}, nil
	}
	// No kustomization file: kustomize-controller generates one listing
	// the .yaml/.yml files below spec.path and, whole, the subdirectories
	// that hold a kustomization file of their own (fluxcd/pkg/kustomize
	// kustomize_generator.go, generateKustomization's scan).
	loc := &render.Location{Kind: render.LocateFiles, Dir: dir}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == dir {
			return nil
		}
		if d.IsDir() {
			if hasKustomization(p) {
				loc.KustomizeDirs = append(loc.KustomizeDirs, p)
				return filepath.SkipDir
			}
			return nil
		}
		if ext := filepath.Ext(p); ext != ".yaml" && ext != ".yml" {
			return nil
		}
		if !d.Type().IsRegular() {
			// A symlinked file may point out of the checkout.
			if _, err := render.Join(root, mustRel(root, p)); err != nil {
				return err
			}
		}
		loc.Files = append(loc.Files, p)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("spec.path %s: %w", ks.Spec.Path, err)
	}
	sort.Strings(loc.Files)
	return loc, nil
}

func mustRel(base, p string) string {
	rel, err := filepath.Rel(base, p)
	if err != nil {
		return p
	}
	return filepath.ToSlash(rel)
}

func hasKustomization(dir string) bool {
	for _, n := range konfig.RecognizedKustomizationFileNames() {
		if fi, err := os.Stat(filepath.Join(dir, n)); err == nil && !fi.IsDir() {
			return true
		}
	}
	return false
}

// locateHelmRelease is the chart of hr in the checkout and the values
// over the chart's values.yaml. Inline spec.values are merged last by
// helm-controller (fluxcd/pkg/chartutil values.go
// ChartValuesFromReferences), so they come first here, edited in the
// HelmRelease manifest of the checkout.
func locateHelmRelease(ctx context.Context, env *render.Env, obj *unstructured.Unstructured) (*render.Location, error) {
	var hr helmv2.HelmRelease
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &hr); err != nil {
		return nil, fmt.Errorf("not a valid HelmRelease: %w", err)
	}
	src, err := chartDir(ctx, env, &hr, false)
	if err != nil {
		return nil, err
	}
	loc := &render.Location{Kind: render.LocateHelm, Dir: src.dir}
	if hr.Spec.Values == nil {
		return loc, nil
	}
	// The HelmRelease may have been read from the cluster: its inline
	// values are edited in the checkout's copy.
	manifest, file := env.CheckoutCopy(ctx, obj)
	if file == "" {
		return nil, fmt.Errorf("its spec.values are not in a file of the checkout: they cannot be edited")
	}
	loc.Values = append(loc.Values, render.ValuesLayer{File: file, Prefix: "/spec/values", Object: manifest})
	return loc, nil
}
