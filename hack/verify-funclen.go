//go:build ignore

// verify-funclen fails when a function or method of the module's
// production code (every tracked .go file but tests, hack/ and the e2e
// suites' build-tagged tests) is longer than the limit: a reader should be
// able to name each step of a long function, so it is split into those
// steps. hack/verify-funclen.allow lists the functions being split
// elsewhere, one "path:Name" a line (Name is Recv.Method for a method); an
// entry that is no longer too long fails too, so the list only shrinks.
//
//	go run hack/verify-funclen.go [-max 100] [-allow hack/verify-funclen.allow] [-list]
package main

import (
	"bufio"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"sort"
	"strings"
)

func main() {
	maxLines := flag.Int("max", 100, "longest function allowed, in lines from func to its closing brace")
	allowFile := flag.String("allow", "hack/verify-funclen.allow", "functions allowed to be longer, path:Name a line")
	list := flag.Bool("list", false, "print every function over the limit, allowed or not, longest first")
	flag.Parse()
	if err := run(*maxLines, *allowFile, *list); err != nil {
		fmt.Fprintln(os.Stderr, "verify-funclen:", err)
		os.Exit(1)
	}
}

// long is one function over the limit.
type long struct {
	key   string // path:Name
	lines int
}

func run(maxLines int, allowFile string, list bool) error {
	files, err := goFiles()
	if err != nil {
		return err
	}
	allowed, err := readAllow(allowFile)
	if err != nil {
		return err
	}
	var over []long
	for _, f := range files {
		fl, err := longFuncs(f, maxLines)
		if err != nil {
			return err
		}
		over = append(over, fl...)
	}
	sort.Slice(over, func(i, j int) bool { return over[i].lines > over[j].lines })
	var bad []string
	seen := map[string]bool{}
	for _, l := range over {
		seen[l.key] = true
		if list {
			fmt.Printf("%4d %s\n", l.lines, l.key)
		}
		if !allowed[l.key] {
			bad = append(bad, fmt.Sprintf("%s is %d lines (over %d): split it into steps a reader can name", l.key, l.lines, maxLines))
		}
	}
	for k := range allowed {
		if !seen[k] {
			bad = append(bad, fmt.Sprintf("%s is listed in %s but is not over %d lines (or is gone): remove the line", k, allowFile, maxLines))
		}
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		return fmt.Errorf("%d problem(s):\n  %s", len(bad), strings.Join(bad, "\n  "))
	}
	fmt.Printf("verify-funclen: no function over %d lines outside %s (%d files)\n", maxLines, allowFile, len(files))
	return nil
}

// goFiles are the tracked production .go files: no tests, nothing under
// hack/ (tools and nested modules) or testdata/, and not the copies of
// upstream packages kept as released (internal/argocd/smd: the
// structured-merge-diff Argo CD links, compared with upstream's by its
// tests; splitting it would make it differ from the release it pins).
func goFiles() ([]string, error) {
	out, err := exec.Command("git", "ls-files", "*.go").Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files: %w", err)
	}
	var files []string
	for _, f := range strings.Fields(string(out)) {
		if strings.HasSuffix(f, "_test.go") || strings.HasPrefix(f, "hack/") || strings.Contains(f, "/testdata/") ||
			strings.HasPrefix(f, "internal/argocd/smd/") {
			continue
		}
		files = append(files, f)
	}
	return files, nil
}

// longFuncs returns the function declarations of file longer than max.
func longFuncs(file string, maxLines int) ([]long, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	var out []long
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1
		if n > maxLines {
			out = append(out, long{key: file + ":" + funcName(fn), lines: n})
		}
	}
	return out, nil
}

// funcName is Name, or Recv.Name for a method (the receiver's type name
// without pointer or type parameters).
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	t := fn.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fn.Name.Name
	}
	return fn.Name.Name
}

// readAllow reads the allowlist: "path:Name" a line, # comments.
func readAllow(path string) (map[string]bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if i := strings.Index(line, "#"); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		if line != "" {
			out[line] = true
		}
	}
	return out, sc.Err()
}
