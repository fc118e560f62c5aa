package adopt

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/resid"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-drift/kubectl-drift/internal/model/jsonpointer"
)

// TargetKind says what kind of file holds a field's source.
type TargetKind string

// Kinds of source.
const (
	// InManifest: a document that is the object (a plain file, a
	// kustomize resource, a strategic-merge patch of it).
	InManifest TargetKind = "manifest"
	// InJSONPatch: the value of an add/replace operation of a JSON 6902 patch.
	InJSONPatch TargetKind = "json6902"
	// InKustomization: a kustomization field (images, replicas).
	InKustomization TargetKind = "kustomization"
	// InValues: a Helm values file key.
	InValues TargetKind = "values"
)

// Target is the source node of one field of one object: the file, the
// document and the pointer inside it, and the value to write there when
// it is not the live value itself (an image tag for kustomize images).
type Target struct {
	File string
	// Doc is the document index in File (0-based).
	Doc int
	// Pointer is the field inside that document.
	Pointer string
	Kind    TargetKind
	// Value, when HasValue, replaces the live value (kustomize images
	// take the tag only).
	Value    any
	HasValue bool
	// ObjectRoot: Pointer is an object path, so list items are matched
	// with the live object's merge keys.
	ObjectRoot bool
}

// Locator finds the source node of field pointer of object obj. Plain
// files and kustomize directories implement it here; rendering a --source
// tree (issue 16) can implement it on its ownership mapping.
type Locator interface {
	Locate(obj Object, pointer string, live any) (*Target, error)
}

// FilesLocator finds an object in plain manifest files (-f): the first
// document that is the object. A field absent from it is added there.
type FilesLocator struct {
	Files []string
}

// Locate implements Locator.
func (l FilesLocator) Locate(obj Object, pointer string, _ any) (*Target, error) {
	for _, f := range l.Files {
		t, err := findInFile(f, obj, pointer)
		if err != nil {
			return nil, err
		}
		if t != nil {
			return t, nil
		}
	}
	return nil, fmt.Errorf("no document in %s is %s", strings.Join(l.Files, ", "), obj)
}

func findInFile(f string, obj Object, pointer string) (*Target, error) {
	rf, err := ReadFile(f)
	if err != nil {
		return nil, err
	}
	return findInData(f, rf.Data, obj, pointer)
}

// findInData returns the target of pointer in the document of data (the
// content of file f) that is obj, or nil when no document is.
func findInData(f string, data []byte, obj Object, pointer string) (*Target, error) {
	i, err := FindDocument(data, obj)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f, err)
	}
	if i < 0 {
		return nil, nil
	}
	return &Target{File: f, Doc: i, Pointer: pointer, Kind: InManifest, ObjectRoot: true}, nil
}

// KustomizeLocator finds a field's source in a kustomize directory, the
// way kustomize build would have set it, last writer first: this level's
// images and replicas fields, then its patches (last first), then the
// resources, descending into bases with the names they had there.
type KustomizeLocator struct {
	Dir string
}

// Locate implements Locator.
func (l KustomizeLocator) Locate(obj Object, pointer string, live any) (*Target, error) {
	t, err := locateKustomize(l.Dir, obj, pointer, live, 0)
	if err != nil {
		return nil, err
	}
	if t == nil {
		return nil, fmt.Errorf("%s: no resource of this kustomization is %s", l.Dir, obj)
	}
	return t, nil
}

func kustomizationFile(dir string) string {
	for _, n := range konfig.RecognizedKustomizationFileNames() {
		p := filepath.Join(dir, n)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

func locateKustomize(dir string, obj Object, pointer string, live any, depth int) (*Target, error) {
	if depth > 20 {
		return nil, fmt.Errorf("%s: kustomization bases nest too deep", dir)
	}
	kf := kustomizationFile(dir)
	if kf == "" {
		return nil, fmt.Errorf("%s holds no kustomization file", dir)
	}
	rf, err := ReadFile(kf)
	if err != nil {
		return nil, err
	}
	var k types.Kustomization
	if err := k.Unmarshal(rf.Data); err != nil {
		return nil, fmt.Errorf("%s: %w", kf, err)
	}
	k.FixKustomization()
	// Names and namespace as they were before this level's transformers.
	inner := obj
	inner.Name = strings.TrimSuffix(strings.TrimPrefix(obj.Name, k.NamePrefix), k.NameSuffix)
	if k.Namespace != "" {
		inner.Namespace = ""
	}
	if t := kustomizeFields(kf, &k, inner, pointer, live); t != nil {
		return t, nil
	}
	var fallback *Target
	for i := len(k.Patches) - 1; i >= 0; i-- {
		t, err := patchTarget(dir, kf, k.Patches[i], inner, pointer)
		if err != nil {
			return nil, err
		}
		if t == nil {
			continue
		}
		if t.Kind == InJSONPatch || has(t, pointer) {
			return t, nil
		}
		if fallback == nil && t.Kind == InManifest {
			fallback = t
		}
	}
	var found *Target
	for _, r := range k.Resources {
		p := filepath.Join(dir, r)
		st, err := os.Stat(p)
		if err != nil {
			if strings.Contains(r, "://") || strings.HasPrefix(r, "github.com/") {
				continue // remote bases are not in this checkout
			}
			return nil, fmt.Errorf("%s: resource %s not found", kf, r)
		}
		var t *Target
		if st.IsDir() {
			t, err = locateKustomize(p, inner, pointer, live, depth+1)
			if err != nil && !strings.Contains(err.Error(), "no resource of this kustomization") {
				return nil, err
			}
		} else {
			t, err = findInFile(p, inner, pointer)
			if err != nil {
				return nil, err
			}
		}
		if t != nil && (found == nil || has(t, pointer)) {
			found = t
		}
	}
	switch {
	case found != nil && has(found, pointer):
		return found, nil
	case fallback != nil:
		// Absent everywhere: a new field goes into this overlay's patch of
		// the object, where the environment's own values are.
		return fallback, nil
	}
	return found, nil
}

// has reports whether the target's document already holds the field (or,
// for a new field, its parent): the field came from there.
func has(t *Target, pointer string) bool {
	if t.Kind != InManifest {
		return true
	}
	rf, err := ReadFile(t.File)
	if err != nil {
		return false
	}
	docs, err := parseDocs(rf.Data)
	if err != nil || t.Doc >= len(docs) {
		return false
	}
	_, ok := jsonpointer.Get(docs[t.Doc].value, pointer)
	return ok
}

var containerImage = regexp.MustCompile(`^/spec/(template/spec/|jobTemplate/spec/template/spec/)?(initContainers|containers)/\d+/image$`)

// kustomizeFields: the images and replicas fields of a kustomization set
// an image's tag and a workload's replicas over anything below.
func kustomizeFields(kf string, k *types.Kustomization, obj Object, pointer string, live any) *Target {
	liveVal, _ := jsonpointer.Get(live, pointer)
	if pointer == "/spec/replicas" {
		for i, r := range k.Replicas {
			if r.Name == obj.Name {
				return &Target{File: kf, Pointer: fmt.Sprintf("/replicas/%d/count", i), Kind: InKustomization}
			}
		}
	}
	img, ok := liveVal.(string)
	if !containerImage.MatchString(pointer) || !ok {
		return nil
	}
	name, tag, digest := splitImage(img)
	for i, im := range k.Images {
		if im.Name != name && im.NewName != name {
			continue
		}
		switch {
		case digest != "":
			return &Target{File: kf, Pointer: fmt.Sprintf("/images/%d/digest", i), Kind: InKustomization, Value: digest, HasValue: true}
		case tag != "" && im.NewName != "" && im.NewName != name:
			return nil
		case tag != "":
			return &Target{File: kf, Pointer: fmt.Sprintf("/images/%d/newTag", i), Kind: InKustomization, Value: tag, HasValue: true}
		}
	}
	return nil
}

// splitImage splits "repo/name:tag@digest".
func splitImage(s string) (name, tag, digest string) {
	name = s
	if i := strings.Index(name, "@"); i >= 0 {
		name, digest = name[:i], name[i+1:]
	}
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		name, tag = name[:i], name[i+1:]
	}
	return name, tag, digest
}

// patchTarget returns where a patch of the kustomization touches obj: a
// strategic-merge patch document that is the object, or the add/replace
// operation of a JSON 6902 patch whose path is the field or its parent.
func patchTarget(dir, kf string, p types.Patch, obj Object, pointer string) (*Target, error) {
	if p.Path == "" {
		if p.Patch != "" && strings.Contains(p.Patch, pointer) {
			return nil, &EditError{Pointer: pointer, Reason: ReasonTemplate,
				Msg: fmt.Sprintf("the field is set by an inline patch in %s: edit it by hand", kf)}
		}
		return nil, nil
	}
	file := filepath.Join(dir, p.Path)
	rf, err := ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("%s: patch %w", kf, err)
	}
	var ops []map[string]any
	if yaml.Unmarshal(rf.Data, &ops) == nil && len(ops) > 0 {
		if p.Target != nil && !selects(p.Target, obj) {
			return nil, nil
		}
		for i := len(ops) - 1; i >= 0; i-- {
			op, _ := ops[i]["op"].(string)
			path, _ := ops[i]["path"].(string)
			if op != "add" && op != "replace" {
				continue
			}
			if path == pointer || strings.HasPrefix(pointer, path+"/") {
				return &Target{File: file, Pointer: fmt.Sprintf("/%d/value%s", i, strings.TrimPrefix(pointer, path)), Kind: InJSONPatch}, nil
			}
		}
		return nil, nil
	}
	// A strategic-merge patch: the document that is the object (by the
	// patch's own kind/name, or any document when a target selects).
	if p.Target != nil && !selects(p.Target, obj) {
		return nil, nil
	}
	return findInData(file, rf.Data, obj, pointer)
}

// selects is kustomize's own patch target match on group, kind, name and
// namespace (anchored regular expressions, types.SelectorRegex of
// sigs.k8s.io/kustomize/api/types/selector.go). The version is left out:
// Object does not carry one. A selector that does not compile selects
// nothing.
func selects(s *types.Selector, obj Object) bool {
	sel := *s
	sel.Version = ""
	sr, err := types.NewSelectorRegex(&sel)
	return err == nil && sr.MatchGvk(resid.Gvk{Group: obj.Group, Kind: obj.Kind}) && sr.MatchName(obj.Name) && sr.MatchNamespace(obj.Namespace)
}
