package adopt

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/kubectl-drift/kubectl-drift/internal/redact"
	"github.com/kubectl-drift/kubectl-drift/internal/source"
)

// File is a manifest read for editing. Write refuses to replace it when
// it changed on disk since it was read (an editor, a git checkout).
type File struct {
	Path string
	Data []byte
	// real is Path with its symlinks resolved: the file written, so that
	// a link stays a link and its target gets the new content.
	real string
	sum  [sha256.Size]byte
	mode fs.FileMode
}

// ReadFile reads a file through the bounded reader and remembers its hash.
// A symlink is followed only to a file inside the checkout the link is
// in (CheckoutOf): adopt writes through it, and must not write outside.
func ReadFile(path string) (*File, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("source file %s not found: %w", path, unwrapPath(err))
	}
	if st.IsDir() {
		return nil, fmt.Errorf("source %s is a directory, not a file", path)
	}
	real, err := resolveInside(path)
	if err != nil {
		return nil, err
	}
	data, err := source.ReadFile(real, nil, source.DefaultMaxFileBytes)
	if err != nil {
		return nil, err
	}
	return &File{Path: path, Data: data, real: real, sum: sha256.Sum256(data), mode: st.Mode().Perm()}, nil
}

// resolveInside resolves path's symlinks and refuses a target outside the
// checkout that holds path.
func resolveInside(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("source file %s: %w", path, unwrapPath(err))
	}
	if real == abs {
		return real, nil
	}
	root, err := filepath.EvalSymlinks(CheckoutOf(filepath.Dir(abs)))
	if err != nil {
		return "", err
	}
	if rel, err := filepath.Rel(root, real); err != nil || !filepath.IsLocal(rel) {
		return "", fmt.Errorf("%s is a symlink to %s, outside the checkout %s: nothing written", path, real, root)
	}
	return real, nil
}

// CheckoutOf is the checkout dir lies in: the nearest directory at or
// above it that holds .git, else dir itself.
func CheckoutOf(dir string) string {
	for d := dir; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		up := filepath.Dir(d)
		if up == d {
			return dir
		}
		d = up
	}
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Writable checks, without changing anything, that Write could replace
// the file: the file opens for writing and its directory takes a new file.
func (f *File) Writable() error {
	// Permission bits first: root may write anything, but a file or a
	// checkout marked read-only for everybody is meant to stay as it is.
	st, err := os.Stat(f.target())
	if err != nil {
		return fmt.Errorf("source file %s not found: %w", f.Path, unwrapPath(err))
	}
	if st.Mode().Perm()&0o222 == 0 {
		return fmt.Errorf("%s is read-only (mode %v): nothing written", f.Path, st.Mode().Perm())
	}
	dir := filepath.Dir(f.target())
	if st, err := os.Stat(dir); err == nil && st.Mode().Perm()&0o222 == 0 {
		return fmt.Errorf("the checkout %s is read-only (mode %v): nothing written", dir, st.Mode().Perm())
	}
	w, err := os.OpenFile(f.target(), os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("%s is read-only (%w): nothing written", f.Path, unwrapPath(err))
	}
	_ = w.Close()
	tmp, err := os.CreateTemp(dir, ".drift-adopt-*")
	if err != nil {
		return fmt.Errorf("the checkout %s is read-only (%w): nothing written", dir, unwrapPath(err))
	}
	name := tmp.Name()
	_ = tmp.Close()
	return os.Remove(name)
}

// target is the file written: the symlink's target, or Path.
func (f *File) target() string {
	if f.real != "" {
		return f.real
	}
	return f.Path
}

// check is what must hold before the first byte is written: the file
// is as it was read, and can be replaced.
func (f *File) check() error {
	now, err := source.ReadFile(f.target(), nil, source.DefaultMaxFileBytes)
	if err != nil {
		return err
	}
	if sha256.Sum256(now) != f.sum {
		return fmt.Errorf("%s changed since it was read: nothing written, run again", f.Path)
	}
	return f.Writable()
}

// Write replaces the file with data, atomically: a temporary file in the
// same directory, synced, then renamed over the original (over a
// symlink's target: the link stays). A file that changed since ReadFile
// is not touched.
func (f *File) Write(data []byte) error {
	if err := f.check(); err != nil {
		return err
	}
	return f.replace(data)
}

// replace writes data over the file, atomically, without checking.
func (f *File) replace(data []byte) error {
	if err := f.writeAtomically(data); err != nil {
		// The errors name the temporary file, which the user never sees.
		return fmt.Errorf("cannot write %s: %w", f.target(), err)
	}
	f.Data, f.sum = data, sha256.Sum256(data)
	return nil
}

// writeAtomically writes data into a temporary file beside the target and
// renames it over the target, so that a reader sees the old file or the
// new one, never a part.
func (f *File) writeAtomically(data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(f.target()), ".drift-adopt-*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	defer func() { _ = os.Remove(name) }() // gone after the rename
	if _, err := tmp.Write(data); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(name, f.mode); err != nil {
		return err
	}
	return os.Rename(name, f.target())
}

// SecretRefusal returns an error when a field must not be written in
// plain text into Git: any field of a core Secret, and stringData of any
// object. The value never appears in the message.
func SecretRefusal(group, kind, pointer string) error {
	if redact.IsSecret(group, kind) || pointer == "/stringData" || strings.HasPrefix(pointer, "/stringData/") {
		return &EditError{Pointer: pointer, Reason: ReasonSecret,
			Msg: "a Secret value is never written to Git in plain text: put it in your secret manager (SOPS, Sealed Secrets, External Secrets) and let that write the Secret"}
	}
	return nil
}
