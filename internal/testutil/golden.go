// Package testutil holds helpers shared by the tests of kubectl-drift's
// packages. Only _test.go files import it.
package testutil

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// update is the -update flag of every test binary that compares with golden
// files (flux2 cmd/flux main_test.go does the same): `go test ./pkg -update`
// rewrites them, and the diff is then reviewed like code.
var update = flag.Bool("update", false, "rewrite the golden files under testdata/ (review the diff before committing)")

// Updating reports whether the test run rewrites golden files (-update).
func Updating() bool { return *update }

// Golden compares got with the file at path (the expected output,
// reviewed), printing the difference as -want +got. With -update it writes
// got to path instead, creating its directory.
func Golden(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it, then review it)", err)
	}
	if d := cmp.Diff(string(want), string(got)); d != "" {
		t.Errorf("%s differs (-want +got):\n%s", path, d)
	}
}
