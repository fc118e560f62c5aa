package source

import "strings"

// KustomizationPatches is the part of a kustomization file that names
// patch files (sigs.k8s.io/kustomize/api/types Kustomization:
// patches[].path, patchesStrategicMerge items that are file names,
// patchesJson6902[].path). kustomize reads such a file only as a patch
// onto the resources it builds, never as an object of its own; render and
// audit both skip them. Embed it inline to read more of the file.
type KustomizationPatches struct {
	Patches []struct {
		Path string `yaml:"path"`
	} `yaml:"patches"`
	// PatchesStrategicMerge items are file paths or inline patches.
	PatchesStrategicMerge []string `yaml:"patchesStrategicMerge"`
	PatchesJSON6902       []struct {
		Path string `yaml:"path"`
	} `yaml:"patchesJson6902"`
}

// Files returns the patch files as the kustomization writes them
// ('/'-separated, relative to its directory), inline patches left out:
// an inline patch spans lines, a file name does not.
func (k KustomizationPatches) Files() []string {
	var out []string
	add := func(f string) {
		if f = strings.TrimSpace(f); f != "" && !strings.Contains(f, "\n") {
			out = append(out, f)
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
	return out
}

// HasPatchDirective reports a strategic merge "$patch" key (delete,
// replace, merge) in v, at most a few levels deep (directives sit on the
// object or on the list items it patches): a document holding one is a
// patch, not an object.
func HasPatchDirective(v any) bool { return hasPatchDirective(v, 0) }

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
