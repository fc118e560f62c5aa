package audit

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// ignoreList is a gitignore-like list of paths not audited: one pattern a
// line, '#' comments, a leading '!' re-includes, a trailing '/' matches
// directories only, a pattern without '/' matches a name at any depth, one
// with '/' is anchored at the root, and '**' matches any number of
// directories. It is the subset of gitignore(5) that repositories use to
// leave out vendored charts, CI files and tool configuration.
type ignoreList struct {
	patterns []ignorePattern
}

type ignorePattern struct {
	glob     string
	negate   bool
	dirOnly  bool
	anchored bool
}

// loadIgnore reads root/.driftauditignore (if any) and adds extra patterns
// (--exclude).
func loadIgnore(root string, extra []string) (*ignoreList, error) {
	l := &ignoreList{}
	f, err := os.Open(filepath.Join(root, IgnoreFile))
	switch {
	case err == nil:
		defer func() { _ = f.Close() }() // read only: a Close error loses nothing
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			l.add(sc.Text())
		}
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("%s: %w", IgnoreFile, err)
		}
	case errors.Is(err, fs.ErrNotExist):
	default:
		return nil, err
	}
	for _, p := range extra {
		l.add(p)
	}
	for _, p := range l.patterns {
		if _, err := path.Match(strings.ReplaceAll(p.glob, "**", "*"), ""); err != nil {
			return nil, fmt.Errorf("exclude pattern %q: %w", p.glob, err)
		}
	}
	return l, nil
}

func (l *ignoreList) add(line string) {
	line = strings.TrimRight(line, " \t\r")
	if line == "" || strings.HasPrefix(line, "#") {
		return
	}
	p := ignorePattern{}
	if strings.HasPrefix(line, "!") {
		p.negate, line = true, line[1:]
	}
	if strings.HasSuffix(line, "/") {
		p.dirOnly, line = true, strings.TrimSuffix(line, "/")
	}
	if strings.Contains(line, "/") {
		p.anchored, line = true, strings.TrimPrefix(line, "/")
	}
	p.glob = line
	l.patterns = append(l.patterns, p)
}

// match reports whether rel (slash-separated, relative to the root) is
// ignored; the last matching pattern decides, as in gitignore.
func (l *ignoreList) match(rel string, dir bool) bool {
	if l == nil || rel == "." || rel == "" {
		return false
	}
	ignored := false
	for _, p := range l.patterns {
		if p.dirOnly && !dir {
			continue
		}
		if p.matches(rel) {
			ignored = !p.negate
		}
	}
	return ignored
}

func (p ignorePattern) matches(rel string) bool {
	if !p.anchored {
		ok, _ := path.Match(p.glob, path.Base(rel))
		return ok
	}
	return globPath(strings.Split(p.glob, "/"), strings.Split(rel, "/"))
}

// globPath matches path segments, '**' standing for any number of them.
func globPath(pat, segs []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for i := 0; i <= len(segs); i++ {
				if globPath(pat[1:], segs[i:]) {
					return true
				}
			}
			return false
		}
		if len(segs) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], segs[0]); !ok {
			return false
		}
		pat, segs = pat[1:], segs[1:]
	}
	return len(segs) == 0
}
