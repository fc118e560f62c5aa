package render

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// gitRepo makes a real repository in a temporary directory: commit one
// (tag v1, branch old) holds cm.yaml "one", commit two (HEAD of main)
// "two"; the working tree then edits it to "three" without committing.
// It returns the directory and the two commits.
func gitRepo(t *testing.T) (dir, one, two string) {
	t.Helper()
	dir = t.TempDir()
	run := testutil.Git(t, dir)
	write := func(v string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, "cm.yaml"), []byte("value: "+v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run("init", "-q", "-b", "main")
	write("one")
	if err := os.Symlink("cm.yaml", filepath.Join(dir, "link.yaml")); err != nil {
		t.Fatal(err)
	}
	run("add", "-A")
	run("commit", "-q", "-m", "one")
	one = run("rev-parse", "HEAD")
	run("tag", "v1")
	run("branch", "old")
	write("two")
	run("commit", "-q", "-am", "two")
	two = run("rev-parse", "HEAD")
	write("three")
	dir, err := filepath.EvalSymlinks(dir) // as NewEnv resolves Root
	if err != nil {
		t.Fatal(err)
	}
	return dir, one, two
}

func readValue(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "cm.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// TestReadAtRevision: a tag, a branch and a commit of the local history
// are read from that commit (its tree, symlinks kept, in a directory Close
// removes), with one warning naming the revision and the commit; HEAD,
// "" and a revision at HEAD's commit are the working tree (its edits
// included) with HEAD's commit and no warning; an unknown revision is
// the working tree with one warning, given once. The repository is left
// as it was: same HEAD, same refs, same status.
func TestReadAtRevision(t *testing.T) {
	dir, one, two := gitRepo(t)
	state := func() string {
		out, err := exec.Command("git", "-C", dir, "for-each-ref", "--format=%(refname) %(objectname)").Output()
		if err != nil {
			t.Fatal(err)
		}
		st, err := exec.Command("git", "-C", dir, "status", "--porcelain").Output()
		if err != nil {
			t.Fatal(err)
		}
		head, _ := os.ReadFile(filepath.Join(dir, ".git/HEAD"))
		return string(out) + string(st) + string(head)
	}
	before := state()
	var warnings []string
	env := &Env{Root: dir, revisions: newRevisions(), Warn: func(m string) { warnings = append(warnings, m) }}
	ctx := context.Background()

	for _, tc := range []struct {
		rev, value, commit string
		workingTree        bool
		warn               string
	}{
		{rev: "", value: "value: three", commit: two, workingTree: true},
		{rev: "HEAD", value: "value: three", commit: two, workingTree: true},
		{rev: "main", value: "value: three", commit: two, workingTree: true},
		{rev: two, value: "value: three", commit: two, workingTree: true},
		{rev: "v1", value: "value: one", commit: one, warn: "app targetRevision v1: rendered from commit " + one[:12] + " of the local git history (not the working tree: --working-tree renders it)"},
		{rev: "old", value: "value: one", commit: one, warn: "app targetRevision old: rendered from commit " + one[:12]},
		{rev: one[:10], value: "value: one", commit: one, warn: "rendered from commit " + one[:12]},
		{rev: "refs/tags/v1", value: "value: one", commit: one, warn: "rendered from commit " + one[:12]},
		{rev: "v9", value: "value: three", workingTree: true, commit: two, warn: "app targetRevision v9: not a branch, tag or commit of the local git history: rendered from the working tree of " + dir + " instead"},
		{rev: "--output=x", value: "value: three", workingTree: true, commit: two, warn: "not a branch, tag or commit"},
	} {
		warnings = nil
		r := env.ReadAt(ctx, dir, tc.rev, "app targetRevision")
		if got := readValue(t, r.Dir); got != tc.value {
			t.Errorf("%q: read %q, want %q", tc.rev, got, tc.value)
		}
		if r.Commit != tc.commit || r.WorkingTree != tc.workingTree {
			t.Errorf("%q: commit %s working tree %v, want %s %v", tc.rev, r.Commit, r.WorkingTree, tc.commit, tc.workingTree)
		}
		if tc.workingTree != (r.Dir == dir) {
			t.Errorf("%q: dir %s", tc.rev, r.Dir)
		}
		switch {
		case tc.warn == "" && len(warnings) > 0:
			t.Errorf("%q: unexpected warnings %q", tc.rev, warnings)
		case tc.warn != "" && (len(warnings) != 1 || !strings.Contains(warnings[0], tc.warn)):
			t.Errorf("%q: warnings %q, want one with %q", tc.rev, warnings, tc.warn)
		}
	}
	// The tree of v1 keeps its symlink; asked again, no second warning
	// and no second extraction.
	r := env.ReadAt(ctx, dir, "v1", "app targetRevision")
	if got := readValue(t, filepath.Join(r.Dir, "..", filepath.Base(r.Dir))); got != "value: one" {
		t.Errorf("v1 again: %q", got)
	}
	if l, err := os.Readlink(filepath.Join(r.Dir, "link.yaml")); err != nil || l != "cm.yaml" {
		t.Errorf("symlink of v1: %q, %v", l, err)
	}
	warnings = nil
	env.ReadAt(ctx, dir, "v1", "app targetRevision")
	if len(warnings) != 0 || len(env.revisionDirs()) != 1 {
		t.Errorf("v1 read twice: warnings %q, %d trees", warnings, len(env.revisionDirs()))
	}
	if env.CheckoutOf(filepath.Join(r.Dir, "x")) != r.Dir {
		t.Errorf("CheckoutOf does not know the tree of v1")
	}
	if err := env.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(r.Dir); !os.IsNotExist(err) {
		t.Errorf("Close left %s: %v", r.Dir, err)
	}
	if after := state(); after != before {
		t.Errorf("the repository changed:\nbefore %s\nafter %s", before, after)
	}
}

// TestReadAtOutsideGit: a directory that is no repository's root (none,
// or a subdirectory of one) is read as it is; a revision other than
// HEAD says so.
func TestReadAtOutsideGit(t *testing.T) {
	repo, _, _ := gitRepo(t)
	sub := filepath.Join(repo, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{t.TempDir(), sub} {
		var warnings []string
		env := &Env{Root: dir, revisions: newRevisions(), Warn: func(m string) { warnings = append(warnings, m) }}
		if r := env.ReadAt(context.Background(), dir, "HEAD", "x"); r.Dir != dir || r.Commit != "" || len(warnings) != 0 {
			t.Errorf("%s at HEAD: %+v %q", dir, r, warnings)
		}
		r := env.ReadAt(context.Background(), dir, "v1", "GitRepository a/b spec.ref.tag")
		if r.Dir != dir || !r.WorkingTree || len(warnings) != 1 || warnings[0] != "GitRepository a/b spec.ref.tag v1: the checkout is not the root of a git repository: rendered from the working tree of "+dir+" instead" {
			t.Errorf("%s at v1: %+v %q", dir, r, warnings)
		}
	}
}
