package jq

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestCompile(t *testing.T) {
	if _, err := CompileDelete(".spec.replicas"); err != nil {
		t.Fatal(err)
	}
	if _, err := CompileDelete(".spec["); err == nil {
		t.Error("CompileDelete accepted a broken expression")
	}
	// "| x" is valid jq on its own but not inside del( ): Argo CD wraps it.
	if _, err := CompileDelete(") | (."); err == nil {
		t.Error("CompileDelete did not wrap the expression in del()")
	}
}

func TestRunDeleteAndPaths(t *testing.T) {
	doc := map[string]any{"spec": map[string]any{"replicas": 3, "x": "y"}}
	code, err := CompileDelete(".spec.replicas")
	if err != nil {
		t.Fatal(err)
	}
	var got []any
	if _, err := Run(code, doc, time.Second, func(v any) bool { got = append(got, v); return true }); err != nil {
		t.Fatal(err)
	}
	want := []any{map[string]any{"spec": map[string]any{"x": "y"}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("del = %v, want %v", got, want)
	}

	paths, err := CompilePath(".spec[]")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	if _, err := Run(paths, doc, 0, func(any) bool { n++; return n < 1 }); err != nil || n != 1 {
		t.Errorf("Run stopped after %d results (%v), want 1: each returning false must stop it", n, err)
	}
}

func TestRunErrors(t *testing.T) {
	code, err := CompilePath(`error("boom")`)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(code, map[string]any{}, time.Second, func(any) bool { return true })
	if err == nil || errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "boom") {
		t.Errorf("runtime error = %v", err)
	}

	slow, err := CompileDelete(`.a | until(false; .)`)
	if err != nil {
		t.Fatal(err)
	}
	took, err := Run(slow, map[string]any{"a": 1}, 50*time.Millisecond, func(any) bool { return true })
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "50ms") {
		t.Errorf("endless expression: err = %v, want ErrTimeout naming the limit", err)
	}
	if took < 50*time.Millisecond {
		t.Errorf("timed out after %s, before the limit", took)
	}
}

// TestEveryGojqErrorHasAClass reads the error types gojq declares (the
// types with an Error method in its module's source) and fails on one
// Class does not name: an upgrade of gojq that adds an error form must
// give it a class here (it would be redacted anyway, to the generic
// class, but told less well). A class for a type gojq no longer has
// fails too.
func TestEveryGojqErrorHasAClass(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/itchyny/gojq").Output()
	if err != nil {
		t.Skipf("go list cannot locate gojq's source: %v", err)
	}
	dir := strings.TrimSpace(string(out))
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no gojq source in %s: %v", dir, err)
	}
	declared := map[string]bool{}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || fn.Name.Name != "Error" || len(fn.Recv.List) != 1 ||
				fn.Type.Params.NumFields() != 0 || fn.Type.Results.NumFields() != 1 {
				continue
			}
			typ := fn.Recv.List[0].Type
			if star, ok := typ.(*ast.StarExpr); ok {
				typ = star.X
			}
			if id, ok := typ.(*ast.Ident); ok {
				declared[id.Name] = true
			}
		}
	}
	if len(declared) < 20 {
		t.Fatalf("found only %d error types in %s: the scan is broken", len(declared), dir)
	}
	for name := range declared {
		if _, ok := gojqClasses[name]; !ok {
			t.Errorf("gojq declares error type %s, which has no class in gojqClasses", name)
		}
	}
	for name := range gojqClasses {
		if !declared[name] {
			t.Errorf("gojqClasses names %s, which gojq no longer declares", name)
		}
	}
}

func TestRedactKeepsNoValue(t *testing.T) {
	const value = "Sup3rS3cretV4lue-that-is-long-enough"
	for _, tc := range []struct{ expr, want string }{
		{`.v | tonumber`, "jq tonumber: failed on the value"},
		{`.v | error`, "jq error() raised a value"},
		{`.v | .[]`, "jq cannot iterate over this value"},
		{`.v | ltrimstr(.) | keys`, "jq keys: cannot be applied to a value of this type"},
		// A regexp that does not compile is a plain error quoting the
		// pattern (here the value): the generic class.
		{`.v | test(. + "(")`, "jq runtime error (errors.errorString)"},
		{`.v | [.] | implode`, "jq implode: cannot be applied to a value of this type"},
	} {
		code, err := compile(tc.expr)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Run(code, map[string]any{"v": value}, 0, func(any) bool { return true })
		if err == nil {
			t.Fatalf("%s did not fail", tc.expr)
		}
		red := Redact(err, tc.expr)
		if red.Error() != tc.want {
			t.Errorf("%s: Redact = %q, want %q (gojq said %q)", tc.expr, red.Error(), tc.want, err)
		}
		if strings.Contains(red.Error(), value[:6]) || !errors.Is(red, err) {
			t.Errorf("%s: %q quotes the value or loses the original", tc.expr, red)
		}
	}
	if Redact(nil, "x") != nil {
		t.Error("Redact(nil) != nil")
	}
	to := fmt.Errorf("%w (1s)", ErrTimeout)
	if Redact(to, "x") != to { //nolint:errorlint // the very error, not rewritten
		t.Error("a timeout, our own text, was rewritten")
	}
	if got := Class(errors.New("x")); got != "runtime error (errors.errorString)" || !IsClass(got) {
		t.Errorf("generic class = %q", got)
	}
	if name := builtinName(fmt.Errorf("tonumber cannot be applied")); name != "" {
		t.Errorf("a non-gojq error gave the builtin name %q", name)
	}
}
