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
