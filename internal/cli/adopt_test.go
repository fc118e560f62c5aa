package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// runAdopt runs adopt offline: the live object from --live-file, the
// Argo CD Application from --rules, the real adapters.
func runAdopt(t *testing.T, file string, extra func(*AdoptOptions)) (string, error) {
	t.Helper()
	out := &bytes.Buffer{}
	g := &GlobalOptions{Frontend: KubectlFrontend, Engine: "auto", IOStreams: genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: out, ErrOut: &bytes.Buffer{}}}
	o := NewAdoptOptions(g)
	o.Filenames = []string{file}
	o.LiveFile = filepath.Join("testdata", "explain", "deployment-argocd-client-side-live.yaml")
	o.Rules = []string{filepath.Join("testdata", "explain", "application-shop.yaml")}
	if extra != nil {
		extra(o)
	}
	if err := o.Complete(nil, []string{"deploy/api"}); err != nil {
		return "", err
	}
	if err := o.Validate(); err != nil {
		return "", err
	}
	err := o.Run(context.Background())
	return out.String(), err
}

func desiredCopy(t *testing.T) (string, []byte) {
	t.Helper()
	orig, err := os.ReadFile(filepath.Join("testdata", "explain", "deployment-argocd-client-side-desired.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "api.yaml")
	if err := os.WriteFile(p, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	return p, orig
}

// Argo CD would revert the image (kubectl set image) and ignores replicas
// (ignoreDifferences): by default only the image is adopted.
func TestAdoptDefaultTakesWhatTheEngineReverts(t *testing.T) {
	p, orig := desiredCopy(t)
	out, err := runAdopt(t, p, func(o *AdoptOptions) { o.DryRun = true })
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "-        image: nginx:1.27\n+        image: nginx:1.29\n") || strings.Contains(out, "replicas") {
		t.Fatalf("dry-run diff:\n%s", out)
	}
	if b, _ := os.ReadFile(p); !bytes.Equal(b, orig) {
		t.Fatal("--dry-run wrote the file")
	}
	out, err = runAdopt(t, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	want := strings.Replace(string(orig), "image: nginx:1.27", "image: nginx:1.29", 1)
	if string(b) != want {
		t.Fatalf("written:\n%s\nwant:\n%s\n(out %s)", b, want, out)
	}
	// Nothing left to adopt.
	out, err = runAdopt(t, p, nil)
	if err != nil || !strings.Contains(out, "Nothing to adopt") {
		t.Fatalf("second run: %v %s", err, out)
	}
}

func TestAdoptField(t *testing.T) {
	p, orig := desiredCopy(t)
	if _, err := runAdopt(t, p, func(o *AdoptOptions) { o.Fields = []string{".spec.replicas"} }); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	if want := strings.Replace(string(orig), "replicas: 2", "replicas: 4", 1); string(b) != want {
		t.Fatalf("written:\n%s", b)
	}
	_, err := runAdopt(t, p, func(o *AdoptOptions) { o.Fields = []string{".spec.nope"} })
	if code := exitCode(err, genericiooptions.IOStreams{ErrOut: &bytes.Buffer{}}); code != ExitFailure || !strings.Contains(err.Error(), "no drifted field") {
		t.Fatalf("got %v (exit %d)", err, code)
	}
}

func TestAdoptBadInput(t *testing.T) {
	p, _ := desiredCopy(t)
	if err := os.Chmod(p, 0o444); err != nil {
		t.Fatal(err)
	}
	_, err := runAdopt(t, p, nil)
	if err == nil || !strings.Contains(err.Error(), "read-only") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("read-only: %v", err)
	}
	_, err = runAdopt(t, filepath.Join(t.TempDir(), "gone.yaml"), nil)
	if err == nil || exitCode(err, genericiooptions.IOStreams{ErrOut: &bytes.Buffer{}}) != ExitFailure {
		t.Fatalf("missing file: %v", err)
	}
}
