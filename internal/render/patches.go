package render

import (
	"io/fs"
	"path/filepath"

	yaml "go.yaml.in/yaml/v3"
	"sigs.k8s.io/kustomize/api/konfig"

	"github.com/kubectl-drift/kubectl-drift/internal/source"
)

// patchFiles are the files below root (absolute, cleaned) that a
// kustomization of root patches with. kustomize reads such a file only
// as a patch onto the resources it builds, never as an object of its
// own: a fragment with apiVersion, kind and name but no chart source (a
// HelmRelease's values for one cluster) names no engine object. A
// kustomization that does not parse names nothing (kustomize fails on it).
func patchFiles(root string) map[string]bool {
	out := map[string]bool{}
	names := map[string]bool{}
	for _, n := range konfig.RecognizedKustomizationFileNames() {
		names[n] = true
	}
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil //nolint:nilerr // an unreadable directory names no patch: skip it, read the rest
		}
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		if !names[d.Name()] || !d.Type().IsRegular() {
			return nil
		}
		data, err := source.ReadFile(p, nil, 0)
		if err != nil {
			return nil //nolint:nilerr // as kustomize would fail on it: no patch named
		}
		var k source.KustomizationPatches
		if yaml.Unmarshal(data, &k) != nil {
			return nil
		}
		dir := filepath.Dir(p)
		for _, f := range k.Files() {
			out[filepath.Clean(filepath.Join(dir, filepath.FromSlash(f)))] = true
		}
		return nil
	})
	return out
}
