package cli

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// demoDir holds make demo's objects as hack/record-demo.sh recorded them
// from the live cluster: the Deployment with the managedFields the real
// kubectl writes left, the Kustomization its labels name, the manifest.
var demoDir = filepath.Join("testdata", "demo")

// whenCell is a WHEN value ("13s ago", "2d ago", "just now") and the
// padding after it. The recording's age differs from the live run's, so
// the comparison sets every WHEN aside; the column keeps its width (at
// least that of "unknown", which the /scale write prints), so nothing else
// moves.
var whenCell = regexp.MustCompile(`(\d+[a-z]+ ago|just now) *`)

// TestRecordedDemo is make demo-offline's promise: explaining the recorded
// objects with no cluster gives the answers README pastes from a live
// `make demo` (summary, rows, verdicts and reasons at 100 columns; only
// the WHEN values differ, as the recording ages).
func TestRecordedDemo(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	recordedAt := recordedTime(t)
	for _, tc := range []struct {
		name, readmeCommand string
		filenames           []string
	}{
		{"inferred", "$ kubectl drift explain deploy/web -n demo-drift\n", nil},
		{"file", "$ kubectl drift explain deploy/web -n demo-drift -f web.yaml\n", []string{filepath.Join(demoDir, "web.yaml")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, out, _ := testOptions(t)
			o.now = func() time.Time { return recordedAt.Add(15 * time.Second) }
			o.getenv = func(k string) string {
				if k == "COLUMNS" {
					return "100"
				}
				return ""
			}
			o.LiveFile = filepath.Join(demoDir, "live.yaml")
			o.Rules = []string{filepath.Join(demoDir, "kustomization.yaml")}
			o.Filenames = tc.filenames
			if err := o.Complete(nil, []string{"deploy/web"}); err != nil {
				t.Fatal(err)
			}
			if err := o.Validate(); err != nil {
				t.Fatal(err)
			}
			err := o.Run(context.Background())
			var ee *ExitError
			if !errors.As(err, &ee) || ee.Code != ExitDrift {
				t.Fatalf("Run() = %v, want exit %d (drift)", err, ExitDrift)
			}
			want := consoleBlock(t, string(readme), tc.readmeCommand)
			got := whenCell.ReplaceAllString(out.String(), "<when> ")
			if d := cmp.Diff(whenCell.ReplaceAllString(want, "<when> "), got); d != "" {
				t.Errorf("the recorded demo's answer is not README's (-README +recorded):\n%s", d)
			}
		})
	}
}

// recordedTime is when hack/record-demo.sh recorded the objects.
func recordedTime(t *testing.T) time.Time {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(demoDir, "recorded.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^recorded: (\S+)$`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("recorded.yaml says not when it was recorded:\n%s", b)
	}
	at, err := time.Parse(time.RFC3339, string(m[1]))
	if err != nil {
		t.Fatal(err)
	}
	return at
}

// consoleBlock is the output README pastes after the command line cmd, up
// to the end of its ```console block.
func consoleBlock(t *testing.T, readme, cmd string) string {
	t.Helper()
	_, after, ok := strings.Cut(readme, "```console\n"+cmd)
	if !ok {
		t.Fatalf("README has no console block starting with %q", cmd)
	}
	block, _, ok := strings.Cut(after, "```\n")
	if !ok {
		t.Fatalf("README's block of %q does not end", cmd)
	}
	return block
}
