package testutil

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper()                   {}
func (r *recorder) Errorf(f string, a ...any) { r.errs = append(r.errs, f) }
func (r *recorder) Fatalf(f string, a ...any) { r.errs = append(r.errs, f) }
func (r *recorder) Fatal(a ...any)            { r.errs = append(r.errs, "fatal") }

func TestGolden(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.golden")
	if err := os.WriteFile(path, []byte("a\nb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &recorder{TB: t}
	Golden(r, path, []byte("a\nb\n"))
	if len(r.errs) != 0 {
		t.Errorf("equal content failed: %v", r.errs)
	}
	Golden(r, path, []byte("a\nc\n"))
	if len(r.errs) != 1 || !strings.Contains(r.errs[0], "differs (-want +got)") {
		t.Errorf("different content: %v", r.errs)
	}
	r.errs = nil
	Golden(r, filepath.Join(dir, "missing.golden"), nil)
	if len(r.errs) != 1 || !strings.Contains(r.errs[0], "-update") {
		t.Errorf("missing file: %v", r.errs)
	}
	if Updating() {
		t.Skip("-update given: the write path is exercised by the callers")
	}
}
