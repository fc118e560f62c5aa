package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

func runSuggest(t *testing.T, live, desired, rules, format string) string {
	t.Helper()
	out := &bytes.Buffer{}
	g := &GlobalOptions{Frontend: KubectlFrontend, Engine: "auto", IOStreams: genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: out, ErrOut: &bytes.Buffer{}}}
	o := NewSuggestOptions(g)
	dir := filepath.Join("testdata", "suggest")
	o.LiveFile = filepath.Join(dir, live)
	o.Filenames = []string{filepath.Join(dir, desired)}
	o.Rules = []string{filepath.Join(dir, rules)}
	o.Output = format
	if err := o.Complete(nil, []string{"deploy/web"}); err != nil {
		t.Fatal(err)
	}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := o.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// The text output, reviewed in testdata/suggest/*.golden: both engines'
// syntax for each controller-owned field, and the check of each rule
// against the engine object that reconciles the Deployment.
func TestSuggestGoldens(t *testing.T) {
	for _, c := range []struct{ name, live, desired, rules string }{
		{"flux", "flux-live.yaml", "desired.yaml", "kustomization.yaml"},
		{"argocd", "argo-live.yaml", "argo-desired.yaml", "application.yaml"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := runSuggest(t, c.live, c.desired, c.rules, "text")
			testutil.Golden(t, filepath.Join("testdata", "suggest", c.name+".golden"), []byte(got))
		})
	}
}

func TestSuggestJSONChecksEveryRule(t *testing.T) {
	var list suggestionList
	if err := json.Unmarshal([]byte(runSuggest(t, "flux-live.yaml", "desired.yaml", "kustomization.yaml", "json")), &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 2 {
		t.Fatalf("items: %+v", list.Items)
	}
	for _, it := range list.Items {
		if len(it.Checks) != 1 || !it.Checks[0].OK {
			t.Errorf("%s: checks %+v, not checked %v", it.Pointer, it.Checks, it.NotChecked)
		}
	}
}
