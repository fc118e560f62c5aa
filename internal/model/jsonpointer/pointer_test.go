package jsonpointer

import (
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		err  string
	}{
		{in: "", want: nil},
		{in: "/", want: []string{""}},
		{in: "/a/b", want: []string{"a", "b"}},
		{in: "/a~1b/c~0d", want: []string{"a/b", "c~d"}},
		{in: "/~01", want: []string{"~1"}}, // ~1 is unescaped before ~0 (RFC 6901 section 4)
		{in: "/a//b", want: []string{"a", "", "b"}},
		{in: "/list/-", want: []string{"list", "-"}},
		{in: "a/b", err: `invalid JSON pointer "a/b": must start with '/'`},
		{in: "/a~2b", err: `invalid JSON pointer "/a~2b": unescaped '~' in "a~2b" (write ~0 for '~', ~1 for '/')`},
		{in: "/a~", err: `unescaped '~' in "a~"`},
		{in: "/~/x", err: `unescaped '~' in "~"`},
	} {
		got, err := Parse(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Parse(%q) error = %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Parse(%q) = %q, %v, want %q", tc.in, got, err, tc.want)
		}
		if back := Join(got...); back != tc.in {
			t.Errorf("Join(Parse(%q)) = %q", tc.in, back)
		}
	}
}

func TestEscape(t *testing.T) {
	if got := Join("a/b", "c~d", "plain"); got != "/a~1b/c~0d/plain" {
		t.Errorf("Join = %q", got)
	}
	if got := Escape("~/"); got != "~0~1" {
		t.Errorf("Escape = %q", got)
	}
}

func TestIndex(t *testing.T) {
	for tok, want := range map[string]int{"0": 0, "1": 1, "12": 12} {
		if got, ok := Index(tok, 13); !ok || got != want {
			t.Errorf("Index(%q) = %d, %v", tok, got, ok)
		}
	}
	for _, tok := range []string{"", "-", "01", "00", "+1", "-1", "1a", "13", "99999999999999999999999"} {
		if got, ok := Index(tok, 13); ok {
			t.Errorf("Index(%q) = %d, want no index", tok, got)
		}
	}
}

func TestGetAndWalk(t *testing.T) {
	doc := map[string]any{
		"metadata": map[string]any{"annotations": map[string]any{"a/b": "x", "c~d": "y", "": "empty"}},
		"list":     []any{"zero", map[string]any{"k": int64(1)}},
	}
	for p, want := range map[string]any{
		"/metadata/annotations/a~1b": "x",
		"/metadata/annotations/c~0d": "y",
		"/metadata/annotations/":     "empty",
		"/list/0":                    "zero",
		"/list/1/k":                  int64(1),
	} {
		if got, ok := Get(doc, p); !ok || got != want {
			t.Errorf("Get(%q) = %v, %v, want %v", p, got, ok, want)
		}
	}
	if got, ok := Get(doc, ""); !ok || !reflect.DeepEqual(got, doc) {
		t.Errorf(`Get("") = %v, %v, want the document`, got, ok)
	}
	for p, resolved := range map[string]int{
		"/list/2": 1, "/list/-": 1, "/list/01": 1, "/list/x": 1, "/nope": 0, "/list/0/deeper": 2, "/metadata/labels/x": 1,
	} {
		tokens, err := Parse(p)
		if err != nil {
			t.Fatal(err)
		}
		if v, n := Walk(doc, tokens); n != resolved || v != nil {
			t.Errorf("Walk(%q) = %v, %d, want nil, %d", p, v, n, resolved)
		}
		if _, ok := Get(doc, p); ok {
			t.Errorf("Get(%q) found something", p)
		}
	}
	if _, ok := Get(doc, "no-slash"); ok {
		t.Error("Get of an invalid pointer found something")
	}
}

// FuzzParse checks the RFC 6901 round trip: every pointer Parse accepts
// joins back to itself, every token list joins to a pointer that parses
// back to it, and Parse never panics.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "/", "/a~1b", "/~01", "~", "/a~", "/a~2", "a/b", "/list/-", "//"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tokens, err := Parse(s)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "invalid JSON pointer ") {
				t.Fatalf("Parse(%q) error %q lacks the common prefix", s, err)
			}
			return
		}
		if back := Join(tokens...); back != s {
			t.Fatalf("Join(Parse(%q)) = %q", s, back)
		}
		// s as one token: escaping must make it a single token again.
		again, err := Parse(Join(s))
		if err != nil || len(again) != 1 || again[0] != s {
			t.Fatalf("Parse(Join(%q)) = %q, %v", s, again, err)
		}
	})
}

func TestRemove(t *testing.T) {
	doc := map[string]any{
		"spec": map[string]any{"a": 1, "ports": []any{map[string]any{"port": 80, "nodePort": 30080}}},
		"list": []any{"x", "y"},
	}
	Remove(doc, "/spec/a")
	Remove(doc, "/spec/ports/0/nodePort")
	Remove(doc, "/list/0")    // a list item: left alone
	Remove(doc, "/spec/gone") // nothing there
	Remove(doc, "/nope/x")    // no parent
	Remove(doc, "bad")        // not a pointer
	want := map[string]any{
		"spec": map[string]any{"ports": []any{map[string]any{"port": 80}}},
		"list": []any{"x", "y"},
	}
	if !reflect.DeepEqual(doc, want) {
		t.Errorf("got %v, want %v", doc, want)
	}
}
