package cli

import (
	"errors"
	"strings"
	"testing"

	"github.com/kubectl-drift/kubectl-drift/internal/drift"
	"github.com/kubectl-drift/kubectl-drift/internal/scan"
)

// TestNormalizeSourceSameAsFile: normalize --diff --source diffs live with
// the rendered object exactly as --diff -f with the hand-rendered file.
func TestNormalizeSourceSameAsFile(t *testing.T) {
	live := "testdata/render/service-web-live.yaml"
	rendered, stderr, code, _ := run(t, KubectlFrontend, "normalize", "-f", live, "--engine", "flux", "--diff", "--source", renderRepo)
	if code != ExitDrift {
		t.Fatalf("--source: exit %d, want 1: %s", code, stderr)
	}
	file, stderr, code, _ := run(t, KubectlFrontend, "normalize", "-f", live, "--engine", "flux", "--diff", "-f", "testdata/render/service-web-hand-rendered.yaml")
	if code != ExitDrift {
		t.Fatalf("-f: exit %d, want 1: %s", code, stderr)
	}
	if rendered != file {
		t.Errorf("--source diff:\n%s\n-f diff:\n%s", rendered, file)
	}
	if !strings.Contains(rendered, "port") {
		t.Errorf("the port drift is missing:\n%s", rendered)
	}
}

func TestNormalizeSourceErrors(t *testing.T) {
	live := "testdata/render/service-web-live.yaml"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-f", live, "--source", renderRepo}, "--source gives the desired state: it needs --diff"},
		{[]string{"-f", live, "--diff", "--source", renderRepo, "-f", live}, "--diff --source needs the live object alone"},
		{[]string{"-f", live, "--diff", "--source", renderRepo, "--kustomization", "a/b", "--helmrelease", "c/d"}, "normalize renders one owner"},
		{[]string{"-f", live, "--diff", "--source", renderRepo, "--kustomization", "flux-system/nope"}, "Kustomization/flux-system/nope: not found"},
	} {
		_, stderr, code, _ := run(t, KubectlFrontend, append([]string{"normalize", "--engine", "flux"}, c.args...)...)
		if code != ExitFailure || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, code, stderr, c.want)
		}
	}
}

// TestScanSourceOutcome: scan --source fails (exit 2) only when owners
// failed to render and no object was compared or inferred; objects
// without a rendered owner are one warning.
func TestScanSourceOutcome(t *testing.T) {
	for _, c := range []struct {
		compared, failed, unowned int
		code                      int
		warn                      string
	}{
		{compared: 0, failed: 2, code: ExitFailure},
		{compared: 1, failed: 2},
		{failed: 2, unowned: 1, warn: "1 objects another manager wrote have no owner that --source renders"},
		{},
	} {
		var errOut strings.Builder
		o := &ScanOptions{GlobalOptions: &GlobalOptions{}}
		o.ErrOut = &errOut
		res := &scan.Result{}
		err := o.renderOutcome(drift.RenderCounts{Compared: c.compared, Failed: c.failed, Unowned: c.unowned}, res)
		var ee *ExitError
		switch {
		case c.code != 0 && (!errors.As(err, &ee) || ee.Code != c.code):
			t.Errorf("%+v: got %v, want exit %d", c, err, c.code)
		case c.code == 0 && err != nil:
			t.Errorf("%+v: got %v, want no error", c, err)
		}
		if c.warn != "" && (!strings.Contains(errOut.String(), c.warn) || len(res.Warnings) != 1) {
			t.Errorf("%+v: stderr %q, warnings %v; want %q", c, errOut.String(), res.Warnings, c.warn)
		}
		if c.warn == "" && errOut.Len() > 0 {
			t.Errorf("%+v: unexpected stderr %q", c, errOut.String())
		}
	}
}
