package render

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// gitRemotes are the URLs of the remotes in the git config of the
// repository that holds dir (its own .git, or a parent's; a worktree's
// .git file leads to the common config), nil when none is found. Only
// the config file is read: git itself is not run.
func gitRemotes(dir string) []string {
	for d := dir; ; d = filepath.Dir(d) {
		if cfg := gitConfigOf(filepath.Join(d, ".git")); cfg != "" {
			return remoteURLs(cfg)
		}
		if filepath.Dir(d) == d {
			return nil
		}
	}
}

// gitConfigOf is the config file of the git directory (or .git file) at
// dotgit, "" when there is none.
func gitConfigOf(dotgit string) string {
	st, err := os.Stat(dotgit)
	if err != nil {
		return ""
	}
	gitdir := dotgit
	if !st.IsDir() {
		data, err := os.ReadFile(dotgit)
		if err != nil {
			return ""
		}
		p, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
		if !ok {
			return ""
		}
		gitdir = strings.TrimSpace(p)
		if !filepath.IsAbs(gitdir) {
			gitdir = filepath.Join(filepath.Dir(dotgit), gitdir)
		}
		// A worktree's remotes are in the common directory's config.
		if c, err := os.ReadFile(filepath.Join(gitdir, "commondir")); err == nil {
			common := strings.TrimSpace(string(c))
			if !filepath.IsAbs(common) {
				common = filepath.Join(gitdir, common)
			}
			gitdir = common
		}
	}
	return filepath.Join(gitdir, "config")
}

// remoteURLs reads the url keys of the [remote "..."] sections of a git
// config file.
func remoteURLs(config string) []string {
	data, err := os.ReadFile(config)
	if err != nil || len(data) > 1<<20 {
		return nil
	}
	var out []string
	inRemote := false
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(l, "[") {
			inRemote = strings.HasPrefix(l, "[remote ")
			continue
		}
		k, v, ok := strings.Cut(l, "=")
		if inRemote && ok && strings.EqualFold(strings.TrimSpace(k), "url") {
			out = append(out, strings.Trim(strings.TrimSpace(v), `"`))
		}
	}
	return out
}

var (
	scheme  = regexp.MustCompile(`(?i)^[a-z][a-z0-9+.-]*://`)
	user    = regexp.MustCompile(`^[^/@]*@`)
	port    = regexp.MustCompile(`^([^/:]+):[0-9]+/`)
	scpLike = regexp.MustCompile(`^([^/:]+):`)
)

// sameRepo compares two git URLs as the same repository: scheme, user,
// port, a trailing ".git" or "/" and case aside (Argo CD's
// git.NormalizeGitURL lowercases the whole URL too), and scp-like
// host:path as host/path.
func sameRepo(a, b string) bool { return repoKey(a) == repoKey(b) }

func repoKey(u string) string {
	u = strings.TrimSpace(u)
	u = scheme.ReplaceAllString(u, "")
	u = user.ReplaceAllString(u, "")
	u = port.ReplaceAllString(u, "$1/")
	u = scpLike.ReplaceAllString(u, "$1/")
	u = strings.TrimSuffix(strings.TrimSuffix(u, "/"), ".git")
	return strings.ToLower(u)
}

// OtherRepository says whether url, a source's repository URL, is known
// to be another repository than the checkout: neither mapped by
// --source-map nor one of the checkout's git remotes, which must be
// known (a checkout without a git remote says nothing).
func (e *Env) OtherRepository(url string) bool {
	if _, ok := e.SourceMap[url]; ok || len(e.Remotes) == 0 {
		return false
	}
	for _, r := range e.Remotes {
		if sameRepo(r, url) {
			return false
		}
	}
	return true
}
