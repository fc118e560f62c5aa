package source_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/kubectl-drift/kubectl-drift/internal/source"
	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// ExportTree writes a commit's tree (not the working tree's edits) with
// executable bits and symlinks, and leaves the repository as it was.
func TestExportTree(t *testing.T) {
	repo := t.TempDir()
	run := testutil.Git(t, repo)
	write := func(name, body string, mode os.FileMode) {
		t.Helper()
		p := filepath.Join(repo, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
	run("init", "-q")
	write("apps/web.yaml", "replicas: 2\n", 0o644)
	write("hack/run.sh", "#!/bin/sh\n", 0o755)
	if err := os.Symlink("web.yaml", filepath.Join(repo, "apps", "link.yaml")); err != nil {
		t.Fatal(err)
	}
	run("add", "-A")
	run("commit", "-q", "-m", "one")
	write("apps/web.yaml", "replicas: 5\n", 0o644) // not committed

	ctx := context.Background()
	commit, err := source.Git(ctx, repo, "rev-parse", "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := source.ExportTree(ctx, repo, commit, dir); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "apps", "web.yaml")); err != nil || string(b) != "replicas: 2\n" {
		t.Errorf("apps/web.yaml = %q, %v; want the commit's", b, err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "hack", "run.sh")); err != nil || fi.Mode()&0o100 == 0 {
		t.Errorf("hack/run.sh lost its executable bit: %v %v", fi, err)
	}
	if l, err := os.Readlink(filepath.Join(dir, "apps", "link.yaml")); err != nil || l != "web.yaml" {
		t.Errorf("apps/link.yaml = %q, %v; want the symlink", l, err)
	}
	if st, err := source.Git(ctx, repo, "status", "--porcelain"); err != nil || st != "M apps/web.yaml" {
		t.Errorf("repository changed: %q %v", st, err)
	}
	if _, err := source.Git(ctx, repo, "rev-parse", "--verify", "--quiet", "no-such-ref^{commit}"); err == nil {
		t.Error("an unknown ref resolved")
	}
	if err := source.ExportTree(ctx, repo, "no-such-ref", t.TempDir()); err == nil {
		t.Error("no error exporting an unknown ref")
	}
}
