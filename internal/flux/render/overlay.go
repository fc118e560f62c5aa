package render

import (
	"os"
	"path/filepath"
	"slices"

	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// fileOverlay is the checkout on disk with one file, the generated
// kustomization, laid over it in memory. It replaces fluxcd/pkg's
// MakeFsInMemory overlay because that overlay keeps its files in kyaml's
// in-memory tree, which refuses any path component outside
// [a-zA-Z0-9-_.:] ("illegal name 'a+b' in directory creation"): the
// generated file lives at the checkout's absolute path, so a checkout
// under a directory with '+', ' ' or '@' in its name could not render.
// Here the path is only compared, never split into tree nodes.
type fileOverlay struct {
	filesys.FileSystem // the disk layer
	path               string
	data               []byte
}

func newFileOverlay(disk filesys.FileSystem, path string, data []byte) fileOverlay {
	return fileOverlay{FileSystem: disk, path: filepath.Clean(path), data: data}
}

func (f fileOverlay) is(path string) bool { return filepath.Clean(path) == f.path }

func (f fileOverlay) Exists(path string) bool { return f.is(path) || f.FileSystem.Exists(path) }

func (f fileOverlay) IsDir(path string) bool { return !f.is(path) && f.FileSystem.IsDir(path) }

// Open opens the overlaid file from a one-file memory FS under its base
// name (kustomization.yaml and its variants, legal there).
func (f fileOverlay) Open(path string) (filesys.File, error) {
	if !f.is(path) {
		return f.FileSystem.Open(path)
	}
	mem := filesys.MakeFsInMemory()
	name := "/" + filepath.Base(f.path)
	if err := mem.WriteFile(name, f.data); err != nil {
		return nil, err
	}
	return mem.Open(name)
}

func (f fileOverlay) ReadFile(path string) ([]byte, error) {
	if f.is(path) {
		return slices.Clone(f.data), nil
	}
	return f.FileSystem.ReadFile(path)
}

func (f fileOverlay) ReadDir(path string) ([]string, error) {
	names, err := f.FileSystem.ReadDir(path)
	if filepath.Clean(path) != filepath.Dir(f.path) {
		return names, err
	}
	if err != nil && !f.FileSystem.IsDir(path) {
		return nil, err
	}
	if base := filepath.Base(f.path); !slices.Contains(names, base) {
		names = append(names, base)
	}
	return names, nil
}

func (f fileOverlay) Glob(pattern string) ([]string, error) {
	matches, err := f.FileSystem.Glob(pattern)
	if err != nil {
		return nil, err
	}
	if ok, _ := filepath.Match(pattern, f.path); ok && !slices.Contains(matches, f.path) {
		matches = append(matches, f.path)
	}
	return matches, nil
}

func (f fileOverlay) Walk(path string, walkFn filepath.WalkFunc) error {
	onDisk := f.FileSystem.Exists(f.path)
	if err := f.FileSystem.Walk(path, walkFn); err != nil || onDisk {
		return err
	}
	rel, err := filepath.Rel(filepath.Clean(path), f.path)
	if err != nil || rel == ".." || filepath.IsAbs(rel) || len(rel) > 2 && rel[:3] == ".."+string(filepath.Separator) {
		return nil // not under path
	}
	h, err := f.Open(f.path)
	if err != nil {
		return walkFn(f.path, nil, err)
	}
	defer func() { _ = h.Close() }()
	info, err := h.Stat()
	return walkFn(f.path, info, err)
}

// Write operations are refused: nothing but the overlaid file is written
// during a build, and the checkout is never modified.
func (fileOverlay) Create(string) (filesys.File, error) { return nil, os.ErrPermission }
func (fileOverlay) Mkdir(string) error                  { return os.ErrPermission }
func (fileOverlay) MkdirAll(string) error               { return os.ErrPermission }
func (fileOverlay) RemoveAll(string) error              { return os.ErrPermission }
func (fileOverlay) WriteFile(string, []byte) error      { return os.ErrPermission }
