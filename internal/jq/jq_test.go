package jq

import (
	"errors"
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
