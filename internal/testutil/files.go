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
