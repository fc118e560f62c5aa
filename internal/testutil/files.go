package testutil

import (
	"os"
	"path/filepath"
	"testing"
)

// WriteFile writes content to name (slash-separated, relative to dir),
// creating the directories on the way, and returns the file's path.
func WriteFile(t testing.TB, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// WriteTree writes files (slash-separated name → content) into a new
// temporary directory, a repository or a checkout for a test, and returns
// the directory.
func WriteTree(t testing.TB, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		WriteFile(t, root, name, content)
	}
	return root
}

// CopyTree copies the directory tree from (directories and files) into to
// and returns to: a test that writes into a checkout works on a copy of
// its testdata.
func CopyTree(t testing.TB, from, to string) string {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return to
}
