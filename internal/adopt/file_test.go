package adopt

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteIsAtomicAndChecksTheHash(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "m.yaml")
	if err := os.WriteFile(p, []byte("a: 1\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	f, err := ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Write([]byte("a: 2\n")); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(p)
	st, _ := os.Stat(p)
	if string(got) != "a: 2\n" || st.Mode().Perm() != 0o640 {
		t.Fatalf("got %q mode %v", got, st.Mode().Perm())
	}
	// Someone edits the file after our read: refused, their edit kept.
	if err := os.WriteFile(p, []byte("a: 3\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	err = f.Write([]byte("a: 4\n"))
	if err == nil || !strings.Contains(err.Error(), "changed since it was read") {
		t.Fatalf("got %v", err)
	}
	got, _ = os.ReadFile(p)
	if string(got) != "a: 3\n" {
		t.Fatalf("file overwritten: %q", got)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("temporary files left: %v", entries)
	}
}

func TestReadOnly(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "m.yaml")
	if err := os.WriteFile(p, []byte("a: 1\n"), 0o444); err != nil {
		t.Fatal(err)
	}
	f, err := ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Write([]byte("a: 2\n")); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Fatalf("got %v", err)
	}
	// A read-only checkout: the directory refuses new files.
	if err := os.Chmod(p, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = os.Chmod(dir, 0o755) }()
	if err := f.Write([]byte("a: 2\n")); err == nil || !strings.Contains(err.Error(), "checkout") {
		t.Fatalf("got %v", err)
	}
	got, _ := os.ReadFile(p)
	if string(got) != "a: 1\n" {
		t.Fatalf("written: %q", got)
	}
}

func TestMissingFile(t *testing.T) {
	if _, err := ReadFile(filepath.Join(t.TempDir(), "nope.yaml")); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("got %v", err)
	}
}

func TestSecretRefusal(t *testing.T) {
	for _, c := range []struct{ group, kind, p string }{
		{"", "Secret", "/data/password"},
		{"", "Secret", "/metadata/labels/x"},
		{"example.com", "Thing", "/stringData/token"},
	} {
		var ee *EditError
		if err := SecretRefusal(c.group, c.kind, c.p); !errors.As(err, &ee) || ee.Reason != ReasonSecret {
			t.Errorf("%v: got %v", c, err)
		}
	}
	if err := SecretRefusal("", "ConfigMap", "/data/x"); err != nil {
		t.Errorf("ConfigMap data refused: %v", err)
	}
}

// twoEdits reads a.yaml and b.yaml of dir and plans new content for both.
func twoEdits(t *testing.T, dir string) []*FileEdit {
	t.Helper()
	var edits []*FileEdit
	for _, name := range []string{"a.yaml", "b.yaml"} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(name+": old\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		edits = append(edits, &FileEdit{File: f, After: []byte(name + ": new\n")})
	}
	return edits
}

func contentOf(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestWriteAllOrNothing: a file that changed since it was read stops
// the whole write before the first byte (it used to be checked inside
// the loop, after the files before it were written), and a write that
// fails midway gives the files written before it their content back.
func TestWriteAllOrNothing(t *testing.T) {
	dir := t.TempDir()
	edits := twoEdits(t, dir)
	if err := os.WriteFile(filepath.Join(dir, "b.yaml"), []byte("b.yaml: theirs\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := Write(edits)
	if err == nil || !strings.Contains(err.Error(), "changed since it was read") {
		t.Fatalf("Write = %v", err)
	}
	if got := contentOf(t, filepath.Join(dir, "a.yaml")); got != "a.yaml: old\n" {
		t.Fatalf("a.yaml written though b.yaml had changed: %q", got)
	}

	dir = t.TempDir()
	edits = twoEdits(t, dir)
	calls := 0
	failSecond := func(f *File, data []byte) error {
		calls++
		if calls == 2 {
			return errors.New("disk full")
		}
		return f.replace(data)
	}
	err = write(edits, failSecond)
	if err == nil || !strings.Contains(err.Error(), "disk full") || !strings.Contains(err.Error(), "nothing written") {
		t.Fatalf("write = %v", err)
	}
	for _, name := range []string{"a.yaml", "b.yaml"} {
		if got := contentOf(t, filepath.Join(dir, name)); got != name+": old\n" {
			t.Errorf("%s = %q after a failed write; want its old content", name, got)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Fatalf("temporary files left: %v", entries)
	}

	dir = t.TempDir()
	if err := Write(twoEdits(t, dir)); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a.yaml", "b.yaml"} {
		if got := contentOf(t, filepath.Join(dir, name)); got != name+": new\n" {
			t.Errorf("%s = %q", name, got)
		}
	}
}

// TestWriteThroughSymlink: a manifest that is a symlink inside the
// checkout is written through (the link stays a link, its target gets
// the new content); a link that leaves the checkout is refused before
// anything is read or written.
func TestWriteThroughSymlink(t *testing.T) {
	repo := t.TempDir()
	if err := os.Mkdir(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(repo, "base", "deploy.yaml")
	if err := os.MkdirAll(filepath.Dir(base), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(base, []byte("replicas: 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(repo, "overlay", "deploy.yaml")
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../base/deploy.yaml", link); err != nil {
		t.Fatal(err)
	}
	f, err := ReadFile(link)
	if err != nil {
		t.Fatal(err)
	}
	if err := Write([]*FileEdit{{File: f, After: []byte("replicas: 5\n")}}); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the symlink was replaced by a regular file (%v)", err)
	}
	if got := contentOf(t, base); got != "replicas: 5\n" {
		t.Fatalf("the link's target = %q, want the new content", got)
	}

	outside := filepath.Join(t.TempDir(), "secret.yaml")
	if err := os.WriteFile(outside, []byte("x: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	escape := filepath.Join(repo, "overlay", "escape.yaml")
	if err := os.Symlink(outside, escape); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(escape); err == nil || !strings.Contains(err.Error(), "outside the checkout") {
		t.Fatalf("ReadFile of a link leaving the checkout = %v", err)
	}
	if got := contentOf(t, outside); got != "x: 1\n" {
		t.Fatalf("the file outside the checkout changed: %q", got)
	}
}

// TestReplaceErrorNamesTheFile: a write that fails names the file the
// user asked to change, not the temporary file adopt writes first, and
// still unwraps to the operating system's error.
func TestReplaceErrorNamesTheFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "m.yaml")
	if err := os.WriteFile(p, []byte("a: 1\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	f, err := ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	// The directory is gone: the temporary file cannot be created (root
	// ignores permissions, so a read-only directory would not do).
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	err = f.replace([]byte("a: 2\n"))
	if err == nil || !strings.HasPrefix(err.Error(), "cannot write "+p+": ") || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("replace = %v; want it to name %s and unwrap to ErrNotExist", err, p)
	}
}
