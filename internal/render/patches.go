package render

import (
	"io/fs"
	"path/filepath"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	"sigs.k8s.io/kustomize/api/konfig"

	"github.com/kubectl-drift/kubectl-drift/internal/source"
)

// kustomizationPatches is what patchFiles reads of a kustomization file:
// the fields that name patch files (sigs.k8s.io/kustomize/api/types
// Kustomization: patches[].path, patchesStrategicMerge items that are
// file names, patchesJson6902[].path).
type kustomizationPatches struct {
	Patches []struct {
		Path string `yaml:"path"`
	} `yaml:"patches"`
	PatchesStrategicMerge []string `yaml:"patchesStrategicMerge"`
	PatchesJSON6902       []struct {
		Path string `yaml:"path"`
	} `yaml:"patchesJson6902"`
}

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
		var k kustomizationPatches
		if yaml.Unmarshal(data, &k) != nil {
			return nil
		}
		dir := filepath.Dir(p)
		add := func(f string) {
			// An inline patch spans lines; a file name does not.
			if f = strings.TrimSpace(f); f != "" && !strings.Contains(f, "\n") {
				out[filepath.Clean(filepath.Join(dir, filepath.FromSlash(f)))] = true
			}
		}
		for _, x := range k.Patches {
			add(x.Path)
		}
		for _, x := range k.PatchesStrategicMerge {
			add(x)
		}
		for _, x := range k.PatchesJSON6902 {
			add(x.Path)
		}
		return nil
	})
	return out
}

// hasPatchDirective looks for a strategic merge "$patch" key (delete,
// replace, merge), at most a few levels deep: a document holding one is a
// patch, not an object.
func hasPatchDirective(v any, depth int) bool {
	if depth > 6 {
		return false
	}
	switch t := v.(type) {
	case map[string]any:
		if _, ok := t["$patch"]; ok {
			return true
		}
		for _, x := range t {
			if hasPatchDirective(x, depth+1) {
				return true
			}
		}
	case []any:
		for _, x := range t {
			if hasPatchDirective(x, depth+1) {
				return true
			}
		}
	}
	return false
}
