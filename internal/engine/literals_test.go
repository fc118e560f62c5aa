package engine_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// engineLiteral matches a string literal that is engine knowledge written
// as code: an engine's name, owner kind or the registry's --engine auto
// (engine.Auto) as the whole literal ("flux", "Kustomization", "auto"), or an engine's API group or default namespace
// anywhere in it ("kustomize.toolkit.fluxcd.io", "flux-system/"). A
// literal with white space in it is prose (help, messages) and not
// checked: it is documentation, as comments are, and may cite an
// annotation (argocd.argoproj.io/tracking-id) to explain a behaviour.
var engineLiteral = regexp.MustCompile(`^(auto|argocd|flux|Application|Kustomization|HelmRelease)$|argoproj\.io|fluxcd\.io|flux-system`)

// literalFreePackages are the engine-neutral packages that must take
// every engine name, kind, group and default namespace from the registry
// (issue 34): the engines' Descriptors (engine.OwnerKind, ControlPlane,
// Example...) are the one place they are written.
var literalFreePackages = []string{"internal/cli", "internal/drift", "internal/scan", "internal/serve", "internal/output"}

// TestNoEngineLiteralsOutsideEngines fails when a non-test Go file of an
// engine-neutral package writes an engine's name, kind, API group or
// default namespace as a string literal: that knowledge belongs in the
// engine's Descriptor, so that a third engine changes no command.
func TestNoEngineLiteralsOutsideEngines(t *testing.T) {
	root := filepath.Join("..", "..")
	for _, pkg := range literalFreePackages {
		files, err := filepath.Glob(filepath.Join(root, pkg, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		if len(files) == 0 {
			t.Fatalf("%s: no Go files (moved? update literalFreePackages)", pkg)
		}
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			for _, hit := range engineLiterals(t, path) {
				t.Errorf("%s: %s: take it from the engine's Descriptor (internal/engine) instead", filepath.ToSlash(strings.TrimPrefix(path, root+string(os.PathSeparator))), hit)
			}
		}
	}
}

// engineLiterals returns "line N: LITERAL" for each matching string literal
// of the file.
func engineLiterals(t *testing.T, path string) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		s, err := strconv.Unquote(lit.Value)
		if err != nil {
			t.Fatalf("%s: %v", fset.Position(lit.Pos()), err)
		}
		if isEngineLiteral(s) {
			out = append(out, "line "+strconv.Itoa(fset.Position(lit.Pos()).Line)+": "+lit.Value)
		}
		return true
	})
	return out
}

// isEngineLiteral: s is code naming an engine (engineLiteral), not prose.
func isEngineLiteral(s string) bool {
	s = strings.TrimSpace(s)
	return !strings.ContainsFunc(s, unicode.IsSpace) && engineLiteral.MatchString(s)
}

// TestEngineLiteralPattern: the check catches what it is for and lets
// help prose through.
func TestEngineLiteralPattern(t *testing.T) {
	for s, want := range map[string]bool{
		"flux":                        true,
		"argocd":                      true,
		"HelmRelease":                 true,
		"kustomize.toolkit.fluxcd.io": true,
		"argoproj.io":                 true,
		"flux-system":                 true,
		"flux-system/":                true,
		" flux ":                      true,
		"File with Argo CD Applications/argocd-cm or Flux Kustomizations/HelmReleases": false,
		"Kustomization directory whose build is the desired state":                     false,
		"auto":      true,
		"automatic": false,
	} {
		if got := isEngineLiteral(s); got != want {
			t.Errorf("%q: matched %v, want %v", s, got, want)
		}
	}
}
