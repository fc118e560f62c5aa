package testutil

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Git returns a runner of git commands in dir for a test that builds a
// real repository: the user's and the system's git configuration are not
// read (a signing or hook setting on the developer's machine would change
// the commits), an identity is given, and a failing command fails the
// test. The runner returns the command's output, trimmed. A machine
// without git skips the test.
func Git(t testing.TB, dir string) func(args ...string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	return func(args ...string) string {
		t.Helper()
		base := []string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false", "-c", "tag.gpgsign=false"}
		cmd := exec.Command("git", append(base, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
}
