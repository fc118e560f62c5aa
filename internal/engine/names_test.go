package engine_test

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// engineName matches an identifier that names a shipped engine
// (model.EngineArgoCD, RuleFluxKustomizeIgnore, isArgoGlobal...).
var engineName = regexp.MustCompile(`(?i)argo|flux`)

// engineHomes may name engines: the engines themselves, the registry and
// its one registration table, the toy engine.
var engineHomes = []string{"internal/argocd/", "internal/flux/", "internal/engine/", "internal/enginetest/"}

// TestNoEngineNamesOutsideEngines (issue 14): no Go identifier outside the
// engine packages names an engine. Comments and string literals (help
// texts, examples, upstream citations, messages) are documentation and
// not counted; identifiers are code that a third engine would have to
// change. testdata/engine-names.allow lists the files that still do, with
// their count: a count may only shrink, a file may only leave the list.
func TestNoEngineNamesOutsideEngines(t *testing.T) {
	root := filepath.Join("..", "..")
	allow := readAllow(t, filepath.Join("testdata", "engine-names.allow"))
	got := map[string]int{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") || !strings.HasPrefix(rel, "internal/") {
			return nil
		}
		for _, h := range engineHomes {
			if strings.HasPrefix(rel, h) {
				return nil
			}
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok && engineName.MatchString(id.Name) {
				got[rel]++
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for f := range got {
		files = append(files, f)
	}
	sort.Strings(files)
	for _, f := range files {
		if got[f] > allow[f] {
			t.Errorf("%s names an engine in %d identifier(s), allowed %d: ask the registry (internal/engine) instead", f, got[f], allow[f])
		}
	}
	for f, n := range allow {
		if got[f] < n {
			t.Errorf("%s now names an engine in %d identifier(s): lower its count in testdata/engine-names.allow to %d (or remove it at 0)", f, got[f], got[f])
		}
	}
	if t.Failed() {
		var b strings.Builder
		for _, f := range files {
			fmt.Fprintf(&b, "%s %d\n", f, got[f])
		}
		t.Logf("current counts:\n%s", b.String())
	}
}

// readAllow reads "FILE COUNT" lines (# comments).
func readAllow(t *testing.T, path string) map[string]int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	out := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		n, err := strconv.Atoi(fields[len(fields)-1])
		if len(fields) != 2 || err != nil {
			t.Fatalf("%s: bad line %q", path, line)
		}
		out[fields[0]] = n
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
