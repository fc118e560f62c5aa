package render

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kubeyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-drift/kubectl-drift/internal/globmatch"
	"github.com/kubectl-drift/kubectl-drift/internal/source"
)

// manifestFile is repository.go manifestFile.
var manifestFile = regexp.MustCompile(`^.*\.(yaml|yml|json|jsonnet)$`)

// skipFileRenderingMarker is repository.go skipFileRenderingMarker: a file
// holding it is not a manifest.
const skipFileRenderingMarker = "+argocd:skip-file-rendering"

// findManifests mirrors repository.go findManifests and
// getPotentiallyValidManifests: the objects of manifestFiles. Jsonnet is
// not supported.
func findManifests(appPath, repoRoot string, d *directorySource) ([]*unstructured.Unstructured, error) {
	files, err := manifestFiles(appPath, repoRoot, d)
	if err != nil {
		return nil, err
	}
	var objs []*unstructured.Unstructured
	for _, path := range files {
		name := filepath.Base(path)
		if strings.HasSuffix(name, ".jsonnet") {
			rel, _ := filepath.Rel(repoRoot, path)
			return nil, fmt.Errorf("jsonnet file %s: %w (exclude it with directory.exclude to render the rest)", rel, ErrUnsupported)
		}
		got, err := objectsOfFile(path, name)
		if err != nil {
			return nil, err
		}
		objs = append(objs, got...)
	}
	return objs, nil
}

// manifestFiles are the files findManifests reads, in its walk's order:
// the .yaml/.yml/.json/.jsonnet files of the app path (and of its
// subdirectories with recurse), include/exclude globs matched against the
// path relative to the app path with Argo's util/glob (gobwas, no
// separators), symlinks followed only inside the repository.
func manifestFiles(appPath, repoRoot string, d *directorySource) ([]string, error) {
	var files []string
	err := filepath.Walk(appPath, func(path string, f os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if f.IsDir() {
			if path != appPath && !d.Recurse {
				return filepath.SkipDir
			}
			return nil
		}
		ok, err := potentiallyValid(path, f, appPath, repoRoot, d.Include, d.Exclude)
		if err != nil {
			return fmt.Errorf("invalid manifest file %q: %w", path, err)
		}
		if ok {
			files = append(files, path)
		}
		return nil
	})
	return files, err
}

// potentiallyValid mirrors getPotentiallyValidManifestFile.
func potentiallyValid(path string, f os.FileInfo, appPath, repoRoot, include, exclude string) (bool, error) {
	relPath, err := filepath.Rel(appPath, path)
	if err != nil {
		return false, err
	}
	if !manifestFile.MatchString(f.Name()) {
		return false, nil
	}
	real := f
	if f.Mode()&os.ModeSymlink != 0 {
		realPath, err := filepath.EvalSymlinks(path)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return false, nil // Argo logs "destination of symlink is missing"
			}
			return false, err
		}
		rel, err := filepath.Rel(repoRoot, realPath)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return false, fmt.Errorf("illegal filepath in symlink at %q", relPath)
		}
		if real, err = os.Stat(realPath); err != nil {
			return false, err
		}
	}
	if !real.Mode().IsRegular() {
		return false, nil
	}
	if exclude != "" && globmatch.Match(exclude, relPath) {
		return false, nil
	}
	if include != "" && !globmatch.Match(include, relPath) {
		return false, nil
	}
	data, err := source.ReadFile(path, nil, 0)
	if err != nil {
		return false, err
	}
	return !bytes.Contains(data, []byte(skipFileRenderingMarker)), nil
}

// objectsOfFile mirrors getObjsFromYAMLOrJSON: a .json file holds one
// object; a YAML file's documents that fail to parse make an error only
// when some parsed or the file looks like a manifest (else it is an
// unrelated YAML file and is skipped).
func objectsOfFile(path, name string) ([]*unstructured.Unstructured, error) {
	data, err := source.ReadFile(path, nil, 0)
	if err != nil {
		return nil, err
	}
	if strings.HasSuffix(name, ".json") {
		dec := json.NewDecoder(bytes.NewReader(data))
		var obj unstructured.Unstructured
		if err := dec.Decode(&obj); err != nil {
			return nil, fmt.Errorf("failed to unmarshal %q: %w", name, err)
		}
		if dec.More() {
			return nil, fmt.Errorf("found multiple objects in %q: only single objects are allowed in JSON files", name)
		}
		return []*unstructured.Unstructured{&obj}, nil
	}
	objs, err := splitYAMLOrJSON(data)
	if err != nil {
		if len(objs) > 0 || (bytes.Contains(data, []byte("apiVersion:")) && bytes.Contains(data, []byte("kind:")) && bytes.Contains(data, []byte("metadata:"))) {
			return nil, fmt.Errorf("failed to unmarshal %q: %w", name, err)
		}
		return nil, nil
	}
	return objs, nil
}

// splitYAMLOrJSON mirrors repository.go splitYAMLOrJSON.
func splitYAMLOrJSON(data []byte) ([]*unstructured.Unstructured, error) {
	d := kubeyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var objs []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := d.Decode(&u); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return objs, fmt.Errorf("failed to unmarshal manifest: %w", err)
		}
		if u == nil {
			continue
		}
		objs = append(objs, u)
	}
	return objs, nil
}

// mergePatchFile applies the YAML file at path as a JSON merge patch.
func mergePatchFile(doc []byte, path string) ([]byte, error) {
	data, err := source.ReadFile(path, nil, 0)
	if err != nil {
		return nil, err
	}
	patch, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, err
	}
	return jsonpatch.MergePatch(doc, patch)
}

// splitYAML splits tool output (helm template, kustomize build) into
// objects as gitops-engine kube.SplitYAML does: empty and null documents
// dropped, each document an Unstructured (integers stay int64).
func splitYAML(out []byte) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	d := kubeyaml.NewYAMLOrJSONDecoder(bytes.NewReader(out), 4096)
	for {
		var raw json.RawMessage
		if err := d.Decode(&raw); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return objs, fmt.Errorf("failed to unmarshal manifest: %w", err)
		}
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
			continue
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(raw); err != nil {
			return objs, fmt.Errorf("failed to unmarshal manifest: %w", err)
		}
		objs = append(objs, u)
	}
	return objs, nil
}
