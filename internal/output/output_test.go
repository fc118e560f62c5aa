package output

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/redact"

	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// now is the injected clock of every golden: relative times are stable.
var now = time.Date(2026, 12, 2, 15, 0, 0, 0, time.UTC)

func at(s string) *time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return &t
}

func fluxOwner() model.Owner {
	return model.Owner{Engine: model.Engine("flux"), Kind: "Kustomization", Namespace: "flux-system", Name: "apps",
		Via: "labels kustomize.toolkit.fluxcd.io/name,namespace", Found: true, Interval: "10m"}
}

// inferredDeployment is the report of the acceptance scenario:
// applied by kustomize-controller, then scaled, image-set, patched and
// labelled by hand, desired state inferred from managedFields.
func inferredDeployment() *model.Report {
	r := model.NewReport(model.ResourceID{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "shop", Name: "web"}, model.SourceManagedFields)
	r.Owners = []model.Owner{fluxOwner()}
	left := model.Verdict{Engine: model.Engine("flux"), Kind: model.LeftAlone, Reason: "kustomize-controller does not apply this field"}
	r.Drifts = []model.FieldDrift{
		{Path: "/metadata/annotations/oncall", FieldPath: ".metadata.annotations.oncall", Change: model.Added, Live: "paged",
			Managers: []model.ManagerRef{{Manager: "kubectl-patch", Operation: "Update", Time: at("2026-12-02T14:55:00Z"), Class: model.CauseManual}},
			Cause:    model.CauseManual, Verdicts: []model.Verdict{left}},
		{Path: "/metadata/labels/hotfix", FieldPath: ".metadata.labels.hotfix", Change: model.Added, Live: "true",
			Managers: []model.ManagerRef{{Manager: "kubectl-label", Operation: "Update", Time: at("2026-12-01T09:00:00Z"), Class: model.CauseManual}},
			Cause:    model.CauseManual, Verdicts: []model.Verdict{left}},
		{Path: "/spec/replicas", FieldPath: ".spec.replicas", Change: model.Changed, Live: int64(5),
			Managers: []model.ManagerRef{{Manager: "kubectl", Operation: "Update", Subresource: "scale", Class: model.CauseManual}},
			Cause:    model.CauseManual},
		{Path: "/spec/template/spec/containers/0/image", FieldPath: ".spec.template.spec.containers[name=app].image", Change: model.Changed, Live: "nginx:1.28",
			Managers: []model.ManagerRef{{Manager: "kubectl-set", Operation: "Update", Time: at("2026-12-02T14:59:30Z"), Class: model.CauseManual}},
			Cause:    model.CauseManual,
			Verdicts: []model.Verdict{{Engine: model.Engine("flux"), Kind: model.Reverted, Reason: "kustomize-controller takes the field back on the next apply"}}},
	}
	r.Notes = []model.Note{{Level: model.NoteInfo, Message: "desired values are unknown when inferred from managedFields; pass -f or -k to compare values"}}
	return r
}

func fileBothEngines() *model.Report {
	r := model.NewReport(model.ResourceID{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "shop", Name: "api"}, model.SourceFile)
	r.Owners = []model.Owner{
		fluxOwner(),
		{Engine: model.Engine("argocd"), Kind: "Application", Namespace: "argocd", Name: "shop", Via: "annotation argocd.argoproj.io/tracking-id",
			Found: true, AutoSync: true, SelfHeal: true},
	}
	rule := &model.Origin{Object: "Application argocd/shop", Field: ".spec.ignoreDifferences[0]"}
	r.Drifts = []model.FieldDrift{
		{Path: "/spec/replicas", FieldPath: ".spec.replicas", Change: model.Changed, Desired: int64(2), Live: int64(7),
			Managers: []model.ManagerRef{{Manager: "kube-controller-manager", Operation: "Update", Subresource: "scale", Time: at("2026-11-30T12:00:00Z"), Class: model.CauseAutoscaler}},
			Cause:    model.CauseAutoscaler,
			Verdicts: []model.Verdict{
				{Engine: model.Engine("flux"), Kind: model.Reverted, Reason: "kustomize-controller owns .spec.replicas"},
				{Engine: model.Engine("argocd"), Kind: model.Ignored, Reason: "jsonPointers /spec/replicas", Rule: rule},
			}},
		{Path: "/spec/template/spec/containers/0/env", FieldPath: ".spec.template.spec.containers[name=api].env", Change: model.Removed,
			Desired: []any{map[string]any{"name": "LOG_LEVEL", "value": "debug"}, map[string]any{"name": "A_VERY_LONG_VARIABLE_NAME", "value": "with a long value that gets cut"}},
			Cause:   model.CauseUnknown,
			Verdicts: []model.Verdict{
				{Engine: model.Engine("argocd"), Kind: model.Reverted, Reason: "OutOfSync; self-heal syncs it back"},
				{Engine: model.Engine("flux"), Kind: model.Reverted},
			}},
	}
	r.Notes = []model.Note{
		{Engine: model.Engine("argocd"), Level: model.NoteWarning, Reason: "pointer-absent", Rule: &model.Origin{File: "apps/shop.yaml", Line: 31, Column: 7},
			Message: "ignoreDifferences jsonPointer /spec/template/metadata/annotations/x matches no field of this object"},
	}
	return r
}

func noDrift() *model.Report {
	r := model.NewReport(model.ResourceID{Version: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "settings"}, model.SourceKustomize)
	return r
}

// unmaskedSecret carries values as a buggy producer might: the printers
// must mask them anyway.
func unmaskedSecret() *model.Report {
	r := model.NewReport(model.ResourceID{Version: "v1", Kind: "Secret", Namespace: "shop", Name: "db"}, model.SourceManagedFields)
	r.Drifts = []model.FieldDrift{
		{Path: "/data/password", FieldPath: ".data.password", Change: model.Changed, Desired: "aHVudGVyMg==", Live: "c3VwZXJzZWNyZXQ=",
			Managers: []model.ManagerRef{{Manager: "kubectl-edit", Operation: "Update", Time: at("2026-12-02T14:00:00Z"), Class: model.CauseManual}},
			Cause:    model.CauseManual},
		{Path: "/stringData", FieldPath: ".stringData", Change: model.Added, Live: map[string]any{"token": "plain-text-token"}, Cause: model.CauseUnknown},
		{Path: "/metadata/labels/rotated", FieldPath: ".metadata.labels.rotated", Change: model.Added, Live: "yes", Cause: model.CauseManual},
	}
	return r
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	testutil.Golden(t, filepath.Join("testdata", name+".golden"), got)
}

func TestGoldens(t *testing.T) {
	cases := []struct {
		name   string
		report func() *model.Report
		format Format
	}{
		{"inferred-deployment-text", inferredDeployment, Text},
		{"inferred-deployment-json", inferredDeployment, JSON},
		{"inferred-deployment-yaml", inferredDeployment, YAML},
		{"file-both-engines-text", fileBothEngines, Text},
		{"no-drift-text", noDrift, Text},
		{"secret-masked-text", unmaskedSecret, Text},
		{"secret-masked-json", unmaskedSecret, JSON},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			r := tc.report()
			r.Sort()
			if err := PrintReport(&buf, r, Options{Format: tc.format, Now: func() time.Time { return now }}); err != nil {
				t.Fatal(err)
			}
			golden(t, tc.name, buf.Bytes())
		})
	}
}

func TestSecretValuesNeverPrinted(t *testing.T) {
	for _, f := range []Format{Text, JSON, YAML} {
		var buf bytes.Buffer
		if err := PrintReport(&buf, unmaskedSecret(), Options{Format: f, Now: func() time.Time { return now }}); err != nil {
			t.Fatal(err)
		}
		for _, secret := range []string{"aHVudGVyMg==", "c3VwZXJzZWNyZXQ=", "plain-text-token"} {
			if strings.Contains(buf.String(), secret) {
				t.Errorf("-o %s printed secret value %q:\n%s", f, secret, buf.String())
			}
		}
		if !strings.Contains(buf.String(), Masked) {
			t.Errorf("-o %s shows no mask:\n%s", f, buf.String())
		}
		// Labels of a Secret are not secret.
		if !strings.Contains(buf.String(), "yes") {
			t.Errorf("-o %s masked a label value too:\n%s", f, buf.String())
		}
	}
}

func TestJSONIsTheModel(t *testing.T) {
	var buf bytes.Buffer
	if err := PrintReport(&buf, inferredDeployment(), Options{Format: JSON}); err != nil {
		t.Fatal(err)
	}
	var back model.Report
	dec := json.NewDecoder(&buf)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&back); err != nil {
		t.Fatal(err)
	}
	if back.APIVersion != model.APIVersion || back.Kind != "DriftReport" || len(back.Drifts) != 4 || back.Drifts[3].Managers[0].Manager != "kubectl-set" {
		t.Fatalf("round trip lost data: %+v", back)
	}
}

func TestColor(t *testing.T) {
	var plain, colored bytes.Buffer
	clock := func() time.Time { return now }
	if err := PrintReport(&plain, inferredDeployment(), Options{Format: Text, Now: clock}); err != nil {
		t.Fatal(err)
	}
	if err := PrintReport(&colored, inferredDeployment(), Options{Format: Text, Color: true, Now: clock}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.String(), "\x1b[") {
		t.Error("escape codes without Color")
	}
	if !strings.Contains(colored.String(), ansiYellow+"changed") {
		t.Error("no colour with Color")
	}
	// Colour must not move columns: stripped of escapes it is the plain output.
	stripped := colored.String()
	for _, code := range []string{ansiReset, ansiBold, ansiRed, ansiGreen, ansiYellow, ansiCyan, ansiDim} {
		stripped = strings.ReplaceAll(stripped, code, "")
	}
	if diff := cmp.Diff(plain.String(), stripped); diff != "" {
		t.Errorf("colour changes layout (-plain +stripped):\n%s", diff)
	}
}

func TestColorEnabled(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	var buf bytes.Buffer
	if ColorEnabled(&buf, env(nil)) {
		t.Error("colour on a buffer (not a terminal)")
	}
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = devnull.Close() }() // read only: a Close error loses nothing
	if ColorEnabled(devnull, env(nil)) {
		t.Error("colour on /dev/null (not a terminal)")
	}
	// NO_COLOR wins even on a terminal; we cannot open a terminal in CI,
	// so check the precedence directly on the env lookups.
	if _, set := lookup(env(map[string]string{"NO_COLOR": "1"}), "NO_COLOR"); !set {
		t.Error("NO_COLOR=1 not seen")
	}
	if _, set := lookup(env(map[string]string{"NO_COLOR": ""}), "NO_COLOR"); set {
		t.Error("empty NO_COLOR treated as set (no-color.org: only a non-empty value counts)")
	}
}

func TestParseFormat(t *testing.T) {
	for in, want := range map[string]Format{"": Text, "text": Text, "wide": Text, "json": JSON, "yaml": YAML} {
		if got, err := ParseFormat(in); err != nil || got != want {
			t.Errorf("ParseFormat(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseFormat("xml"); err == nil || !strings.Contains(err.Error(), "text, json, yaml") {
		t.Errorf("ParseFormat(xml) error = %v", err)
	}
}

func TestRelative(t *testing.T) {
	tests := map[time.Duration]string{
		0:                       "just now",
		90 * time.Second:        "90s ago",
		5 * time.Minute:         "5m ago",
		26 * time.Hour:          "26h ago",
		50 * time.Hour:          "2d2h ago",
		-3 * time.Minute:        "in 3m",
		-500 * time.Millisecond: "just now",
	}
	for d, want := range tests {
		if got := Relative(now, now.Add(-d)); got != want {
			t.Errorf("Relative(-%s) = %q, want %q", d, got, want)
		}
	}
}

func TestPrintListText(t *testing.T) {
	var buf bytes.Buffer
	if err := PrintList(&buf, NewList(nil), Options{Format: Text}); err != nil {
		t.Fatal(err)
	}
	if buf.String() != "No drifted resources found.\n" {
		t.Errorf("empty list text = %q", buf.String())
	}
	buf.Reset()
	if err := PrintList(&buf, NewList(nil), Options{Format: JSON}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"items": []`) || !strings.Contains(buf.String(), `"kind": "DriftReportList"`) {
		t.Errorf("empty list JSON = %s", buf.String())
	}
}

// The commands print through a redact.Writer; colour and terminal checks
// must still see the file under it.
func TestTerminalLooksThroughWrappers(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }() // nothing is written to it
	got, ok := Terminal(redact.NewWriter(f, redact.NewScrubber()))
	if !ok || got != f {
		t.Errorf("Terminal(wrapped file) = %v, %v; want the file", got, ok)
	}
	if _, ok := Terminal(&bytes.Buffer{}); ok {
		t.Error("a buffer reported as a file")
	}
}

func TestWrap(t *testing.T) {
	long := strings.Repeat("word ", 30) // 150 columns
	lines := Wrap(strings.TrimSpace(long), 40)
	if len(lines) < 4 {
		t.Fatalf("wrapped into %d lines: %q", len(lines), lines)
	}
	for _, l := range lines {
		if len(l) > 40 {
			t.Errorf("line %q is %d columns, want <= 40", l, len(l))
		}
	}
	if strings.Join(lines, " ") != strings.TrimSpace(long) {
		t.Errorf("words lost or reordered: %q", lines)
	}
	if got := Wrap(long, 0); len(got) != 1 {
		t.Errorf("width 0 (-o wide) wrapped: %q", got)
	}
	if got := TextWidth("wide", &strings.Builder{}, func(string) string { return "80" }); got != 0 {
		t.Errorf("wide width %d, want 0", got)
	}
	if got := TextWidth("text", &strings.Builder{}, func(string) string { return "80" }); got != 80 {
		t.Errorf("COLUMNS=80 width %d", got)
	}
	// Not a terminal and no COLUMNS: nothing is cut, as kubectl get.
	if got := TextWidth("text", &strings.Builder{}, func(string) string { return "" }); got != 0 {
		t.Errorf("default width %d, want 0", got)
	}
}

// PrintObject and PrintStreamItem are every command's -o json|yaml: their
// bytes are the ones the commands printed before they shared them.
func TestPrintObjectBytes(t *testing.T) {
	v := map[string]any{"kind": "List", "items": []any{}}
	for _, tc := range []struct {
		print  func(*bytes.Buffer, Format) error
		format Format
		want   string
	}{
		{func(b *bytes.Buffer, f Format) error { return PrintObject(b, f, v) }, JSON, "{\n  \"items\": [],\n  \"kind\": \"List\"\n}\n"},
		{func(b *bytes.Buffer, f Format) error { return PrintObject(b, f, v) }, YAML, "items: []\nkind: List\n"},
		{func(b *bytes.Buffer, f Format) error { return PrintStreamItem(b, f, v) }, JSON, "{\"items\":[],\"kind\":\"List\"}\n"},
		{func(b *bytes.Buffer, f Format) error { return PrintStreamItem(b, f, v) }, YAML, "---\nitems: []\nkind: List\n"},
	} {
		var b bytes.Buffer
		if err := tc.print(&b, tc.format); err != nil || b.String() != tc.want {
			t.Errorf("%s: %q, %v; want %q", tc.format, b.String(), err, tc.want)
		}
	}
	if err := PrintObject(&bytes.Buffer{}, Text, v); err == nil {
		t.Error("PrintObject printed the text format")
	}
}
