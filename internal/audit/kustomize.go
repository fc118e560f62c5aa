package audit

import (
	"path"
	"path/filepath"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/kubectl-drift/kubectl-drift/internal/source"
)

// kustomizationNames are the file names kustomize reads as a
// kustomization (sigs.k8s.io/kustomize/api konfig.RecognizedKustomizationFileNames).
var kustomizationNames = map[string]bool{"kustomization.yaml": true, "kustomization.yml": true, "Kustomization": true}

// kustomizationFile is what the audit needs of a kustomization.yaml: the
// files it patches with and the charts it inflates.
type kustomizationFile struct {
	source.KustomizationPatches `yaml:",inline"`
	HelmCharts                  []struct {
		Name string `yaml:"name"`
		Repo string `yaml:"repo"`
	} `yaml:"helmCharts"`
	ConfigMapGenerator []generatorArgs `yaml:"configMapGenerator"`
	SecretGenerator    []generatorArgs `yaml:"secretGenerator"`
}

// generatorArgs is what a configMapGenerator or secretGenerator entry
// reads from files: "files" items are PATH or KEY=PATH, "envs" items are
// PATH (sigs.k8s.io/kustomize/api/types KvPairSources; api/kv/kv.go splits
// KEY=PATH with internal/generators.ParseFileSource).
type generatorArgs struct {
	Files []string `yaml:"files"`
	Envs  []string `yaml:"envs"`
}

// kustomizations indexes the kustomization files of a snapshot.
type kustomizations struct {
	// patchFiles are the files (relative to the root, '/'-separated) some
	// kustomization patches with.
	patchFiles map[string]bool
	// remoteCharts maps a kustomization's directory to the remote charts
	// its helmCharts inflate (name and repository).
	remoteCharts map[string][]string
	// dataFiles are the files a generator reads as bytes into a ConfigMap
	// or Secret: kustomize never parses them, and Flux substitutes
	// ${VAR} in the generated data before Helm reads it as values.
	dataFiles map[string]bool
}

// readKustomizations reads the kustomization files among files (relative
// to root). A kustomization that does not parse names nothing: kustomize
// fails on it, and the file is no manifest to report.
func readKustomizations(root string, files []string) kustomizations {
	k := kustomizations{patchFiles: map[string]bool{}, remoteCharts: map[string][]string{}, dataFiles: map[string]bool{}}
	for _, f := range files {
		if !kustomizationNames[path.Base(f)] {
			continue
		}
		data, err := source.ReadFile(filepath.Join(root, filepath.FromSlash(f)), nil, 0)
		if err != nil {
			continue
		}
		var kf kustomizationFile
		if yaml.Unmarshal(data, &kf) != nil {
			continue
		}
		dir := path.Dir(f)
		for _, p := range kf.Files() {
			k.patchFiles[path.Clean(path.Join(dir, p))] = true
		}
		for _, g := range append(kf.ConfigMapGenerator, kf.SecretGenerator...) {
			for _, f := range append(g.Files, g.Envs...) {
				// "key=path": the key names the data entry, the rest is
				// the file.
				if _, p, ok := strings.Cut(f, "="); ok {
					f = p
				}
				if f = strings.TrimSpace(f); f != "" {
					k.dataFiles[path.Clean(path.Join(dir, f))] = true
				}
			}
		}
		for _, c := range kf.HelmCharts {
			if c.Repo != "" && c.Name != "" {
				k.remoteCharts[dir] = append(k.remoteCharts[dir], c.Name+" ("+c.Repo+")")
			}
		}
	}
	return k
}

// isPatch reports a document that is a patch, not a whole object: it
// comes from a file a kustomization patches with, or it holds a $patch
// directive (strategic merge: delete, replace, merge) anywhere.
func (k kustomizations) isPatch(d Document) bool {
	return k.patchFiles[d.File] || d.Object != nil && source.HasPatchDirective(d.Object.Object)
}
