package testutil

import (
	"testing"

	"github.com/kubectl-drift/kubectl-drift/internal/source"
)

// Documents decodes the manifests of a YAML text as if read from file,
// with their positions (source.Decode); a decoding error fails the test.
func Documents(t testing.TB, file, yaml string) []source.Document {
	t.Helper()
	docs, err := source.Decode([]byte(yaml), file)
	if err != nil {
		t.Fatal(err)
	}
	return docs
}
