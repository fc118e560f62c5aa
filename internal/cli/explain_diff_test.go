package cli

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runDiff(t *testing.T, o *ExplainOptions, args []string) (int, error) {
	t.Helper()
	o.Output = outputDiff
	if err := o.Complete(nil, args); err != nil {
		t.Fatal(err)
	}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	err := o.Run(context.Background())
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code, err
	}
	if err != nil {
		t.Fatal(err)
	}
	return ExitNoDrift, nil
}

// Inferred from managedFields there are no desired values to diff: one
// clear line and exit 2, nothing printed.
func TestExplainDiffInferredIsOneLine(t *testing.T) {
	o, out, _ := testOptions(t)
	o.newAdapters = noAdapters
	o.LiveFile = filepath.Join("testdata", "explain", "deployment-kubectl-edits-live.yaml")
	code, err := runDiff(t, o, []string{"deploy/web"})
	if code != ExitFailure || !errors.Is(err, errDiffInferred) || out.Len() != 0 {
		t.Errorf("exit %d, err %v, output %q; want exit 2 with %q", code, err, out.String(), errDiffInferred)
	}
}

const diffSecretLive = `apiVersion: v1
kind: Secret
metadata:
  name: db
  namespace: shop
  managedFields:
  - manager: kubectl-edit
    operation: Update
    apiVersion: v1
    time: "2026-12-02T14:00:00Z"
    fieldsType: FieldsV1
    fieldsV1: {f:data: {f:password: {}}}
data:
  password: c3VwZXJzZWNyZXQ=
  user: YWRtaW4=
`

const diffSecretDesired = `apiVersion: v1
kind: Secret
metadata: {name: db, namespace: shop}
data:
  password: aHVudGVyMg==
  user: YWRtaW4=
`

// A Secret's values never reach the diff: the changed value is masked
// before/after, the unchanged one masked on both sides (kubectl diff's way).
func TestExplainDiffMasksSecrets(t *testing.T) {
	dir := t.TempDir()
	live, desired := filepath.Join(dir, "live.yaml"), filepath.Join(dir, "desired.yaml")
	for p, s := range map[string]string{live: diffSecretLive, desired: diffSecretDesired} {
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	o, out, errOut := testOptions(t)
	o.newAdapters = noAdapters
	o.LiveFile, o.Filenames = live, []string{desired}
	code, _ := runDiff(t, o, nil)
	got := out.String() + errOut.String()
	for _, secret := range []string{"c3VwZXJzZWNyZXQ=", "aHVudGVyMg==", "YWRtaW4=", "supersecret", "hunter2", "admin"} {
		if strings.Contains(got, secret) {
			t.Errorf("the diff prints a Secret value %q:\n%s", secret, got)
		}
	}
	if code != ExitDrift || !strings.Contains(out.String(), "-  password: '*** (before)'") || !strings.Contains(out.String(), "@@ ") {
		t.Errorf("exit %d; want a masked password hunk:\n%s", code, got)
	}
}

// KUBECTL_EXTERNAL_DIFF gets LIVE and MERGED directories (kubectl diff's
// contract, the runner normalize --diff uses); its exit 1 is not an error.
func TestExplainDiffExternal(t *testing.T) {
	dir := t.TempDir()
	prog := filepath.Join(dir, "mydiff")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\necho \"LIVE $(basename \"$1\") MERGED $(basename \"$2\")\"\ncat \"$2\"/*\nexit 1\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	o, out, _ := testOptions(t)
	o.newAdapters = noAdapters
	o.getenv = func(k string) string {
		if k == "KUBECTL_EXTERNAL_DIFF" {
			return prog
		}
		return ""
	}
	o.LiveFile = filepath.Join("testdata", "explain", "deployment-kubectl-edits-live.yaml")
	o.Filenames = []string{filepath.Join("testdata", "explain", "deployment-kubectl-edits-desired.yaml")}
	code, err := runDiff(t, o, nil)
	got := out.String()
	if code != ExitDrift || !strings.HasPrefix(got, "LIVE LIVE MERGED MERGED") || !strings.Contains(got, "replicas: 2") || strings.Contains(got, "managedFields") {
		t.Errorf("exit %d (%v); want the program's output with MERGED holding the desired replicas and no managedFields:\n%s", code, err, got)
	}
}

// On a terminal (o.color, from output.ColorEnabled) removed lines are red,
// added ones green and hunk headers cyan; off, no escape code at all.
func TestExplainDiffColour(t *testing.T) {
	for _, colour := range []bool{true, false} {
		o, out, _ := testOptions(t)
		o.newAdapters = noAdapters
		o.Output = outputDiff
		o.LiveFile = filepath.Join("testdata", "explain", "deployment-kubectl-edits-live.yaml")
		o.Filenames = []string{filepath.Join("testdata", "explain", "deployment-kubectl-edits-desired.yaml")}
		if err := o.Complete(nil, nil); err != nil {
			t.Fatal(err)
		}
		if err := o.Validate(); err != nil {
			t.Fatal(err)
		}
		o.color = colour
		_ = o.Run(context.Background())
		got := out.String()
		coloured := strings.Contains(got, diffRed+"-  replicas: 5"+diffReset) && strings.Contains(got, diffGreen+"+  replicas: 2"+diffReset) &&
			strings.Contains(got, diffCyan+"@@ ")
		if colour != coloured || !colour && strings.Contains(got, "\x1b[") {
			t.Errorf("colour %v: output\n%q", colour, got)
		}
	}
}
