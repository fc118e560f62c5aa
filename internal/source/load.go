package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/kubectl-drift/kubectl-drift/internal/bound"
)

// DefaultMaxFileBytes is the default limit on one file (or stdin).
const DefaultMaxFileBytes int64 = 16 << 20

// Options tune LoadFiles.
type Options struct {
	// MaxFileBytes refuses larger files; 0 means DefaultMaxFileBytes.
	MaxFileBytes int64
	// Recursive descends into subdirectories of directory arguments, as
	// kubectl apply -R does.
	Recursive bool
	// SkipHidden leaves out the hidden directories below a directory
	// argument (HiddenDir), as audit, rules and compare read a checkout.
	SkipHidden bool
	// NoPositions keeps no parsed YAML (Document.Node is nil; Line is
	// still set): for objects compared, not cited. A JSON file is then
	// decoded as JSON, which takes a fraction of the memory of a YAML
	// node tree (a 4 MB object: tens of MB instead of hundreds).
	NoPositions bool
}

// isManifestFile: the file extensions read from directories, the set
// kubectl uses (k8s.io/cli-runtime/pkg/resource/builder.go FileExtensions).
func isManifestFile(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// LoadFiles reads manifests from files, directories (their *.yaml, *.yml
// and *.json files, sorted; subdirectories when opts.Recursive) and "-" for
// stdin. A path argument that does not exist is an error and nothing is
// returned. Bad documents and unreadable or over-size files do not stop the
// others: their *DocumentError are joined into the returned error, next to
// the documents that loaded.
func LoadFiles(paths []string, stdin io.Reader, opts Options) ([]Document, error) {
	limit := opts.MaxFileBytes
	if limit <= 0 {
		limit = DefaultMaxFileBytes
	}
	var files []string
	for _, p := range paths {
		if p == "-" {
			files = append(files, p)
			continue
		}
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("cannot read %s: %w", p, unwrapPathError(err))
		}
		if !st.IsDir() {
			files = append(files, p)
			continue
		}
		found, err := listDir(p, opts.Recursive, opts.SkipHidden)
		if err != nil {
			return nil, err
		}
		files = append(files, found...)
	}
	var docs []Document
	var errs []error
	stdinUsed := false
	for _, f := range files {
		var data []byte
		var err error
		if f == "-" {
			if stdinUsed {
				return nil, errors.New(`"-" (stdin) given more than once`)
			}
			stdinUsed = true
			if stdin == nil {
				return nil, errors.New(`"-" given but there is no stdin`)
			}
			data, err = ReadAll(stdin, limit)
		} else {
			data, err = readFile(f, limit)
		}
		if err != nil {
			// One unreadable file (over the limit, a dangling symlink in a
			// directory) does not hide the others.
			var le *LimitError
			de := &DocumentError{Err: fmt.Errorf("cannot read: %w", err)}
			if errors.As(err, &le) {
				de.Err = err
			}
			de.File = f
			errs = append(errs, de)
			continue
		}
		decode := Decode
		if opts.NoPositions {
			decode = DecodeObjects
		}
		got, err := decode(data, f)
		docs = append(docs, got...)
		if err != nil {
			errs = append(errs, err)
		}
	}
	return docs, errors.Join(errs...)
}

func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// HiddenDir is the one rule of the commands that read a checkout (audit,
// rules, compare) for the directories they do not descend into: a
// directory below the root whose name starts with "." (.git, .github,
// .vscode) holds version control data and tool configuration, not
// manifests an engine applies. The root itself is read whatever its name.
func HiddenDir(root, path string, d fs.DirEntry) bool {
	return d.IsDir() && path != root && strings.HasPrefix(d.Name(), ".") && d.Name() != "."
}

func listDir(dir string, recursive, skipHidden bool) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("cannot read %s: %w", p, unwrapPathError(err))
		}
		if d.IsDir() {
			if p != dir && !recursive || skipHidden && HiddenDir(dir, p, d) {
				return filepath.SkipDir
			}
			return nil
		}
		if isManifestFile(d.Name()) {
			out = append(out, p)
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}

// ReadFile is the one bounded reader of a file (or "-" for stdin, read
// from stdin): every command reads its inputs through it (LoadFiles,
// normalize -f, explain --argocd-diff, audit's configuration, kustomize's
// files). It refuses a regular file over limit (0 means
// DefaultMaxFileBytes) before reading it, and reads anything else (a
// device such as /dev/zero, a pipe) through the limit, so no input can
// allocate more than the limit. A FIFO is opened without blocking: with no
// writer it reads as empty instead of hanging. Errors are one line and
// carry the file name.
func ReadFile(path string, stdin io.Reader, limit int64) ([]byte, error) {
	if limit <= 0 {
		limit = DefaultMaxFileBytes
	}
	if path == "-" {
		if stdin == nil {
			return nil, errors.New(`"-" given but there is no stdin`)
		}
		data, err := ReadAll(stdin, limit)
		if err != nil {
			return nil, fmt.Errorf("stdin: %w", err)
		}
		return data, nil
	}
	data, err := readFile(path, limit)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return data, nil
}

// readFile refuses a file over limit before reading it, and still reads
// through a limit in case it grows or is not a regular file (/dev/zero).
func readFile(path string, limit int64) ([]byte, error) {
	flag := os.O_RDONLY
	if st, err := os.Stat(path); err == nil && st.Mode()&fs.ModeNamedPipe != 0 {
		// open(2) of a FIFO blocks until a writer comes; O_NONBLOCK
		// returns at once (and reads EOF while there is no writer).
		flag |= syscall.O_NONBLOCK
	}
	f, err := os.OpenFile(path, flag, 0)
	if err != nil {
		return nil, unwrapPathError(err)
	}
	defer func() { _ = f.Close() }() // read only: a Close error loses nothing
	st, err := f.Stat()
	if err == nil && st.IsDir() {
		return nil, errors.New("is a directory")
	}
	if err == nil && st.Mode().IsRegular() && st.Size() > limit {
		return nil, &LimitError{Size: st.Size(), Limit: limit}
	}
	return ReadAll(f, limit)
}

// ReadAll reads r to its end, or fails once more than limit bytes came
// (0 means DefaultMaxFileBytes): the bounded reader for streams (stdin,
// an HTTP body we read ourselves).
func ReadAll(r io.Reader, limit int64) ([]byte, error) {
	if limit <= 0 {
		limit = DefaultMaxFileBytes
	}
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, unwrapPathError(err)
	}
	if int64(len(data)) > limit {
		return nil, &LimitError{Limit: limit}
	}
	return data, nil
}

// LimitError is an input over the size limit.
type LimitError struct {
	// Size is the file's size when known before reading, else 0.
	Size, Limit int64
}

func (e *LimitError) Error() string {
	if e.Size > 0 {
		return fmt.Sprintf("file is %s, over the %s limit", byteSize(e.Size), byteSize(e.Limit))
	}
	return fmt.Sprintf("input is over the %s limit", byteSize(e.Limit))
}

func byteSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// LoadKustomize builds the kustomization in dir with sigs.k8s.io/kustomize
// krusty as kubectl -k does (k8s.io/cli-runtime/pkg/resource/kustomizevisitor.go:
// default options, loads restricted to the kustomization root, plugins
// disabled, legacy resource order). Flux's kustomize-controller runs the same
// builder (fluxcd/pkg/kustomize kustomize_generator.go Build) but lets bases
// load from anywhere inside the source artifact; and, like Flux, a panic
// inside kustomize becomes an error. Documents carry File = dir and Line = 0:
// kustomize output has no positions.
func LoadKustomize(dir string) (docs []Document, err error) {
	return LoadKustomizeWith(dir, KustomizeOptions{})
}

// KustomizeOptions say how LoadKustomizeWith treats remote bases.
type KustomizeOptions struct {
	// FetchTimeout bounds a build that fetches remote bases
	// (bound.DefaultTimeout when 0).
	FetchTimeout time.Duration
	// Warn, when set, is told that the build fetches remote bases.
	Warn func(msg string)
}

// LoadKustomizeWith is LoadKustomize with the remote-base options.
func LoadKustomizeWith(dir string, o KustomizeOptions) (docs []Document, err error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", dir, unwrapPathError(err))
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s is not a directory (-k needs a kustomization directory)", dir)
	}
	opts := krusty.MakeDefaultOptions()
	opts.Reorder = krusty.ReorderOptionLegacy
	disk := boundedFS{filesys.MakeFsOnDisk()}
	build := func(context.Context) (rm resmap.ResMap, err error) {
		defer func() {
			if r := recover(); r != nil {
				rm, err = nil, fmt.Errorf("kustomize failed: %v", r)
			}
		}()
		return krusty.MakeKustomizer(opts).Run(disk, dir)
	}
	var rm resmap.ResMap
	if refs := RemoteRefs(disk, dir, ""); len(refs) > 0 {
		// kubectl -k fetches remote bases, and so does -k here: said,
		// and bounded in time (kustomize's HTTP loader has no deadline).
		if o.Warn != nil {
			o.Warn(fmt.Sprintf("kustomize build of %s fetches remote bases: %s", dir, RemoteURLs(refs)))
		}
		rm, err = bound.Run(context.Background(), "kustomize build "+dir, bound.Limits{Timeout: o.FetchTimeout, Hint: "fetching " + RemoteURLs(refs)}, build)
		if errors.Is(err, bound.ErrBound) {
			return nil, err
		}
	} else {
		rm, err = build(context.Background())
	}
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w", dir, err)
	}
	for i, r := range rm.Resources() {
		raw, err := r.MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("kustomize build %s: resource %d: %w", dir, i, err)
		}
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(raw); err != nil {
			return nil, fmt.Errorf("kustomize build %s: resource %d: %w", dir, i, err)
		}
		docs = append(docs, Document{Object: obj, File: dir, Index: i})
	}
	return docs, nil
}

// boundedFS reads kustomize's inputs through ReadFile, so a kustomization
// naming /dev/zero or a huge file fails like -f does instead of
// allocating it.
type boundedFS struct{ filesys.FileSystem }

func (b boundedFS) ReadFile(path string) ([]byte, error) {
	return ReadFile(path, nil, DefaultMaxFileBytes)
}
