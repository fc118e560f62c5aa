package source

import (
	"path/filepath"
	"strings"
)

// UnderSourcePath reports the first of paths (an engine object's source
// paths: an Argo CD Application's source.path, a Flux Kustomization's
// spec.path; '/'-separated, relative to the repository's root) that holds
// file, a manifest of the same checkout as holderFile, the engine object's
// own file. The repository's root is not known (a command reads the
// directories it is given), but it is some directory holding holderFile:
// each is tried in turn. A file anywhere below the path matches (a
// recursive directory, a kustomization's subdirectories); "." or "" is the
// whole repository.
func UnderSourcePath(file, holderFile string, paths []string) (string, bool) {
	dir, err := filepath.Abs(filepath.Dir(file))
	if err != nil {
		return "", false
	}
	root, err := filepath.Abs(filepath.Dir(holderFile))
	if err != nil {
		return "", false
	}
	for {
		for _, p := range paths {
			src := filepath.Join(root, filepath.FromSlash(strings.TrimPrefix(p, "/")))
			if dir == src || strings.HasPrefix(dir, src+string(filepath.Separator)) {
				return p, true
			}
		}
		parent := filepath.Dir(root)
		if parent == root {
			return "", false
		}
		root = parent
	}
}
