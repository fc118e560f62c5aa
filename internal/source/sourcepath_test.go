package source_test

import (
	"path/filepath"
	"testing"

	"github.com/kubectl-drift/kubectl-drift/internal/source"
)

// TestUnderSourcePath: a source path is taken below each directory that
// holds the Application's file (the repository root is one of them), and
// holds the files below it; another tree's directory of the same name
// does not match.
func TestUnderSourcePath(t *testing.T) {
	root := t.TempDir()
	app := filepath.Join(root, "repo", "argocd", "apps.yaml")
	for _, c := range []struct {
		dir  string
		want bool
	}{
		{filepath.Join(root, "repo", "apps", "web"), true},
		{filepath.Join(root, "repo", "apps", "web", "overlays", "prod"), true},
		{filepath.Join(root, "repo", "apps", "api"), false},
		{filepath.Join(root, "other", "apps", "webhook"), false},
		{filepath.Join(root, "repo", "argocd", "apps", "web"), true}, // the path below the Application's own directory
	} {
		if _, got := source.UnderSourcePath(filepath.Join(c.dir, "deployment.yaml"), app, []string{"apps/web"}); got != c.want {
			t.Errorf("%s: got %v, want %v", c.dir, got, c.want)
		}
	}
}
