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
	sum  [sha256.Size]byte
	mode fs.FileMode
}

// ReadFile reads a file through the bounded reader and remembers its hash.
func ReadFile(path string) (*File, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("source file %s not found: %w", path, unwrapPath(err))
	}
	if st.IsDir() {
		return nil, fmt.Errorf("source %s is a directory, not a file", path)
	}
	data, err := source.ReadFile(path, nil, source.DefaultMaxFileBytes)
	if err != nil {
		return nil, err
	}
	return &File{Path: path, Data: data, sum: sha256.Sum256(data), mode: st.Mode().Perm()}, nil
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
	st, err := os.Stat(f.Path)
	if err != nil {
		return fmt.Errorf("source file %s not found: %w", f.Path, unwrapPath(err))
	}
	if st.Mode().Perm()&0o222 == 0 {
		return fmt.Errorf("%s is read-only (mode %v): nothing written", f.Path, st.Mode().Perm())
	}
	dir := filepath.Dir(f.Path)
	if st, err := os.Stat(dir); err == nil && st.Mode().Perm()&0o222 == 0 {
		return fmt.Errorf("the checkout %s is read-only (mode %v): nothing written", dir, st.Mode().Perm())
	}
	w, err := os.OpenFile(f.Path, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("%s is read-only (%v): nothing written", f.Path, unwrapPath(err))
	}
	_ = w.Close()
	tmp, err := os.CreateTemp(dir, ".drift-adopt-*")
	if err != nil {
		return fmt.Errorf("the checkout %s is read-only (%v): nothing written", dir, unwrapPath(err))
	}
	name := tmp.Name()
	_ = tmp.Close()
	return os.Remove(name)
}

// Write replaces the file with data, atomically: a temporary file in the
// same directory, synced, then renamed over the original. A file that
// changed since ReadFile is not touched.
func (f *File) Write(data []byte) error {
	now, err := source.ReadFile(f.Path, nil, source.DefaultMaxFileBytes)
	if err != nil {
		return err
	}
	if sha256.Sum256(now) != f.sum {
		return fmt.Errorf("%s changed since it was read: nothing written, run again", f.Path)
	}
	if err := f.Writable(); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(f.Path), ".drift-adopt-*")
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
	if err := os.Rename(name, f.Path); err != nil {
		return err
	}
	f.Data, f.sum = data, sha256.Sum256(data)
	return nil
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
