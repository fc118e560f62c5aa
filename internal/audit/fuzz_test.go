package audit

import (
	"testing"

	"github.com/kubectl-drift/kubectl-drift/internal/jq"
)

// FuzzParseConfig: any bytes give a config or an error, never a panic.
func FuzzParseConfig(f *testing.F) {
	for _, s := range []string{
		"budget: {total: 3}",
		"allow: [{check: DRIFT002, reason: x}]",
		"checks: {too-broad: {severity: error}}",
		"jq: {timeout: 1s}",
		"a: &a [*a, *a]",
		"{",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseConfig(data)
		if err == nil && c == nil {
			t.Fatal("nil config without error")
		}
	})
}

// FuzzPointerAndJQ: rule paths from any text are parsed or rejected.
func FuzzPointerAndJQ(f *testing.F) {
	for _, s := range []string{"/spec/replicas", "spec", "/a~2", "/metadata/annotations/a/b", ".spec.x[0]", `.a["b"][]`, "."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if tok, err := parsePointer(s); err == nil && s != "" && len(tok) == 0 {
			t.Fatalf("pointer %q parsed to no tokens", s)
		}
		jqTokens(s)
		_, _ = jq.CompileDelete(s)
	})
}
