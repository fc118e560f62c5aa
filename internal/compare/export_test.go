package compare

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// testEngines are the registered engines' compare semantics. The engines
// import this package, so this package's own tests cannot import them:
// engines_test.go (package compare_test, linked into the same test
// binary) hands them over from its init, before any test runs.
var testEngines Engines

// SetTestEngines is engines_test.go's door to testEngines.
func SetTestEngines(es Engines) { testEngines = es }

// translateT translates with the registered engines.
func translateT(t testing.TB, rules []model.Rule, to model.Engine, objs []*unstructured.Unstructured) []Translation {
	t.Helper()
	trs, err := Translate(rules, to, objs, testEngines)
	if err != nil {
		t.Fatal(err)
	}
	return trs
}
