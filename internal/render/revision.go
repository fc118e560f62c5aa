package render

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/kubectl-drift/kubectl-drift/internal/source"
)

// A source names a git revision the engine checks out (an Argo CD
// Application's targetRevision, a Flux GitRepository's spec.ref); the
// checkout on disk is one working tree, perhaps of another branch. This
// file reads a source at its revision from the local git history, read
// only: `git rev-parse` resolves it and `git archive` streams its tree
// into a temporary directory (no checkout, no worktree, nothing written to
// the repository), removed by Env.Close.

// Revision is what a source was read from.
type Revision struct {
	// Dir is the source's directory: the tree of Commit extracted, or the
	// working tree (WorkingTree).
	Dir string
	// Commit is the commit the revision resolved to; for the working
	// tree, the commit of HEAD ("" when there is none: not a git
	// repository, no commit yet).
	Commit string
	// WorkingTree says Dir is the checkout as it is on disk: the revision
	// was HEAD or empty, resolved to HEAD's commit (the working tree is
	// that commit and the edits not yet committed, which a render before a
	// push means to see), or could not be read (Env.ReadAt said why).
	WorkingTree bool
}

// revisions caches the trees extracted for one Env, by repository and
// commit, and the warnings given, so that N engine objects of one source
// cost one extraction and one line.
type revisions struct {
	mu     sync.Mutex
	dirs   map[string]string
	warned map[string]bool
	temp   []string
}

func newRevisions() *revisions {
	return &revisions{dirs: map[string]string{}, warned: map[string]bool{}}
}

// Close removes the trees extracted for the Env's sources.
func (e *Env) Close() error {
	if e.revisions == nil {
		return nil
	}
	e.revisions.mu.Lock()
	defer e.revisions.mu.Unlock()
	var errs []error
	for _, d := range e.revisions.temp {
		errs = append(errs, os.RemoveAll(d))
	}
	e.revisions.temp, e.revisions.dirs = nil, map[string]string{}
	return errors.Join(errs...)
}

// revisionDirs are the trees extracted so far.
func (e *Env) revisionDirs() []string {
	if e.revisions == nil {
		return nil
	}
	e.revisions.mu.Lock()
	defer e.revisions.mu.Unlock()
	return slices.Sorted(maps.Values(e.revisions.dirs))
}

// ReadAt returns root (Root or a --source-map directory) at the git
// revision rev of the repository holding it: rev ("" or HEAD: the working
// tree) is resolved as a local branch, a tag, a commit, or a branch of a
// remote ("origin/rev"); a commit other than HEAD's is read from the
// local history. When rev cannot be read so (git missing, not a git
// repository, unknown revision, an unreadable tree) the working tree is
// used and one warning says so, naming who (the engine object and its
// field) and rev; when a commit other than HEAD's is read, one warning
// says which, as the working tree is then not what is rendered.
func (e *Env) ReadAt(ctx context.Context, root, rev, who string) Revision {
	r, why := e.readAt(ctx, root, rev)
	var msg string
	switch {
	case why != "":
		msg = fmt.Sprintf("%s %s: %s: rendered from the working tree of %s instead", who, rev, why, root)
	case !r.WorkingTree:
		msg = fmt.Sprintf("%s %s: rendered from commit %s of the local git history (not the working tree: --working-tree renders it)", who, rev, short(r.Commit, 12))
	}
	if msg != "" {
		e.WarnOnce(msg)
	}
	return r
}

// WarnOnce tells Warn msg unless this Env told it already: N engine
// objects of one source give one line.
func (e *Env) WarnOnce(msg string) {
	if e.Warn == nil {
		return
	}
	if e.revisions != nil {
		e.revisions.mu.Lock()
		seen := e.revisions.warned[msg]
		e.revisions.warned[msg] = true
		e.revisions.mu.Unlock()
		if seen {
			return
		}
	}
	e.Warn(msg)
}

// readAt is ReadAt without the warnings: why, when not "", is why the
// working tree was used although rev names something else.
func (e *Env) readAt(ctx context.Context, root, rev string) (Revision, string) {
	wt := Revision{Dir: root, WorkingTree: true}
	head := rev == "" || rev == "HEAD" || e.WorkingTree
	if _, err := exec.LookPath("git"); err != nil {
		if head {
			return wt, ""
		}
		return wt, "git is not installed, the revision cannot be read"
	}
	// The checkout must be a repository's root: the engines' paths are
	// relative to it. A directory inside another repository (a test
	// fixture, a vendored copy) is not the source's repository.
	top, err := source.Git(ctx, root, "rev-parse", "--show-toplevel")
	if err == nil {
		if top, err = filepath.EvalSymlinks(top); err == nil && top != root {
			err = errors.New("inside another repository")
		}
	}
	if err != nil {
		if head {
			return wt, ""
		}
		return wt, "the checkout is not the root of a git repository"
	}
	wt.Commit, _ = source.Git(ctx, root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
	if head {
		return wt, ""
	}
	commit := resolve(ctx, root, rev)
	if commit == "" {
		return wt, "not a branch, tag or commit of the local git history"
	}
	if commit == wt.Commit {
		return wt, ""
	}
	dir, err := e.extract(ctx, top, commit)
	if err != nil {
		return wt, "reading commit " + short(commit, 12) + ": " + err.Error()
	}
	return Revision{Dir: dir, Commit: commit}, ""
}

// resolve is the commit rev names in the repository of dir: a local
// branch, tag or commit (git's own order), else a remote's branch;
// "" when none. A revision that looks like an option is never passed on.
func resolve(ctx context.Context, dir, rev string) string {
	if strings.HasPrefix(rev, "-") || strings.ContainsAny(rev, "\x00\n") {
		return ""
	}
	if c, err := source.Git(ctx, dir, "rev-parse", "--verify", "--quiet", rev+"^{commit}"); err == nil && c != "" {
		return c
	}
	remotes, err := source.Git(ctx, dir, "remote")
	if err != nil {
		return ""
	}
	for _, r := range strings.Fields(remotes) {
		if c, err := source.Git(ctx, dir, "rev-parse", "--verify", "--quiet", "refs/remotes/"+r+"/"+rev+"^{commit}"); err == nil && c != "" {
			return c
		}
	}
	return ""
}

// extract writes the tree of commit of the repository top into a
// temporary directory, once per Env.
func (e *Env) extract(ctx context.Context, top, commit string) (string, error) {
	if e.revisions == nil {
		return "", errors.New("no place to keep it (an Env not made by NewEnv)")
	}
	e.revisions.mu.Lock()
	defer e.revisions.mu.Unlock()
	key := top + "\x00" + commit
	if d, ok := e.revisions.dirs[key]; ok {
		return d, nil
	}
	dir, err := os.MkdirTemp("", "kubectl-drift-rev-")
	if err != nil {
		return "", err
	}
	e.revisions.temp = append(e.revisions.temp, dir)
	if dir, err = filepath.EvalSymlinks(dir); err != nil {
		return "", err
	}
	if err := source.ExportTree(ctx, top, commit, dir); err != nil {
		return "", err
	}
	e.revisions.dirs[key] = dir
	return dir, nil
}

// short is the first n characters of a commit id.
func short(commit string, n int) string {
	if len(commit) > n {
		return commit[:n]
	}
	return commit
}

// ShortRevision is Argo CD's shortenRevision (reposerver/repository
// repository.go): the first n characters of a commit id.
func ShortRevision(commit string, n int) string { return short(commit, n) }
