package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	helmrelease "helm.sh/helm/v4/pkg/release/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-drift/kubectl-drift/internal/model/jsonpointer"
	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

const deployDir = "../../deploy"

func promtool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not installed (hack/install-deps.sh installs Debian's prometheus package)")
	}
	return p
}

// TestAlertRules runs promtool on the shipped rules and their unit tests.
func TestAlertRules(t *testing.T) {
	pt := promtool(t)
	dir := filepath.Join(deployDir, "prometheus")
	for _, args := range [][]string{{"check", "rules", "alerts.yaml"}, {"test", "rules", "alerts_test.yaml"}} {
		cmd := exec.Command(pt, args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// DashboardQueries returns the PromQL of every panel of the shipped
// Grafana dashboard (the e2e test runs them against a real Prometheus).
func dashboardQueries(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(deployDir, "grafana", "kubectl-drift.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Title  string `json:"title"`
		UID    string `json:"uid"`
		Panels []struct {
			ID      int    `json:"id"`
			Title   string `json:"title"`
			Type    string `json:"type"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("dashboard: %v", err)
	}
	if d.Title == "" || d.UID == "" || len(d.Panels) == 0 {
		t.Fatalf("dashboard without title, uid or panels")
	}
	out := map[string]string{}
	for _, p := range d.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %d %q has no query", p.ID, p.Title)
		}
		for i, tg := range p.Targets {
			if strings.TrimSpace(tg.Expr) == "" {
				t.Errorf("panel %d %q: empty query", p.ID, p.Title)
			}
			out[fmt.Sprintf("panel%d_%d", p.ID, i)] = tg.Expr
		}
	}
	return out
}

// TestDashboard loads the dashboard and has promtool parse every panel's
// PromQL (as recording rules: promtool checks their expressions).
func TestDashboard(t *testing.T) {
	qs := dashboardQueries(t)
	pt := promtool(t)
	var rules []map[string]string
	for name, q := range qs {
		rules = append(rules, map[string]string{"record": "dashboard:" + name, "expr": q})
	}
	b, err := yaml.Marshal(map[string]any{"groups": []any{map[string]any{"name": "dashboard", "rules": rules}}})
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "dashboard-rules.yaml")
	if err := os.WriteFile(f, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(pt, "check", "rules", f).CombinedOutput(); err != nil {
		t.Fatalf("a dashboard query does not parse: %v\n%s", err, out)
	}
}

// TestManifests checks the read-only promises of the shipped manifests:
// the ClusterRole only gets, lists and watches, and the container runs
// with a read-only root filesystem and no privilege escalation.
func TestManifests(t *testing.T) {
	for _, f := range []string{filepath.Join(deployDir, "manifests", "kubectl-drift.yaml"), filepath.Join(deployDir, "chart", "templates", "rbac.yaml")} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		roles := 0
		for _, doc := range strings.Split(string(b), "\n---\n") {
			var cr struct {
				Kind  string `json:"kind"`
				Rules []struct {
					Verbs []string `json:"verbs"`
				} `json:"rules"`
			}
			// The chart's templates hold {{ }} only in names.
			if err := yaml.Unmarshal([]byte(strings.ReplaceAll(strings.ReplaceAll(doc, "{{", "x"), "}}", "x")), &cr); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if cr.Kind != "ClusterRole" {
				continue
			}
			roles++
			if len(cr.Rules) == 0 {
				t.Errorf("%s: ClusterRole without rules", f)
			}
			for _, r := range cr.Rules {
				for _, v := range r.Verbs {
					if v != "get" && v != "list" && v != "watch" {
						t.Errorf("%s: ClusterRole grants %q", f, v)
					}
				}
			}
		}
		if roles != 1 {
			t.Errorf("%s: %d ClusterRoles, want 1", f, roles)
		}
	}
	for _, f := range []string{filepath.Join(deployDir, "manifests", "kubectl-drift.yaml"), filepath.Join(deployDir, "chart", "templates", "deployment.yaml")} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"readOnlyRootFilesystem: true", "allowPrivilegeEscalation: false", "runAsNonRoot: true", "/readyz", "/healthz", "resources:"} {
			if !bytes.Contains(b, []byte(want)) {
				t.Errorf("%s lacks %q", f, want)
			}
		}
	}
}

// TestChartRendersManifests renders the chart with Helm's own library (what
// `helm template kubectl-drift deploy/chart -n kubectl-drift` does: an
// install with client-side dry-run) and compares it, object by object and
// field by field, with deploy/manifests: the differences are the reviewed
// list testdata/chart-vs-manifests.txt (the chart adds the release's
// instance label; the plain manifests create their namespace). A change to
// one that is not made to the other shows up here.
func TestChartRendersManifests(t *testing.T) {
	chrt, err := loader.LoadDir(filepath.Join(deployDir, "chart"))
	if err != nil {
		t.Fatal(err)
	}
	install := action.NewInstall(action.NewConfiguration())
	install.DryRunStrategy = action.DryRunClient
	install.Replace = true
	install.ReleaseName = "kubectl-drift"
	install.Namespace = "kubectl-drift"
	rel, err := install.RunWithContext(context.Background(), chrt, map[string]any{})
	if err != nil {
		t.Fatalf("rendering the chart: %v", err)
	}
	r, ok := rel.(*helmrelease.Release)
	if !ok {
		t.Fatalf("release of type %T", rel)
	}
	rendered := decodeObjects(t, "chart", []byte(r.Manifest))
	b, err := os.ReadFile(filepath.Join(deployDir, "manifests", "kubectl-drift.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	plain := decodeObjects(t, "manifests", b)
	if len(rendered) < 5 {
		t.Fatalf("chart rendered %d objects: %v", len(rendered), rendered)
	}
	keys := map[string]bool{}
	for k := range rendered {
		keys[k] = true
	}
	for k := range plain {
		keys[k] = true
	}
	var diffs []string
	for k := range keys {
		c, inChart := rendered[k]
		m, inManifests := plain[k]
		switch {
		case !inChart:
			diffs = append(diffs, k+": only in manifests")
		case !inManifests:
			diffs = append(diffs, k+": only in the chart")
		default:
			for _, d := range treeDiff(c, m, "") {
				diffs = append(diffs, k+" "+d)
			}
		}
	}
	sort.Strings(diffs)
	testutil.Golden(t, filepath.Join("testdata", "chart-vs-manifests.txt"), []byte(strings.Join(diffs, "\n")+"\n"))
}

// decodeObjects reads a multi-document YAML stream into objects by
// "Kind namespace/name".
func decodeObjects(t *testing.T, what string, b []byte) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, doc := range strings.Split("\n"+string(b), "\n---") {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatalf("%s: %v\n%s", what, err, doc)
		}
		if len(obj) == 0 {
			continue
		}
		md, _ := obj["metadata"].(map[string]any)
		key := fmt.Sprintf("%v %v", obj["kind"], md["name"])
		if ns, ok := md["namespace"]; ok {
			key = fmt.Sprintf("%v %v/%v", obj["kind"], ns, md["name"])
		}
		if _, dup := out[key]; dup {
			t.Fatalf("%s: %s twice", what, key)
		}
		out[key] = obj
	}
	return out
}

// treeDiff lists the JSON pointers where chart and manifests differ.
func treeDiff(chart, manifests any, at string) []string {
	switch c := chart.(type) {
	case map[string]any:
		m, ok := manifests.(map[string]any)
		if !ok {
			break
		}
		var out []string
		for k, cv := range c {
			p := at + "/" + jsonpointer.Escape(k)
			if mv, ok := m[k]; ok {
				out = append(out, treeDiff(cv, mv, p)...)
			} else {
				out = append(out, p+": only in the chart")
			}
		}
		for k := range m {
			if _, ok := c[k]; !ok {
				out = append(out, at+"/"+jsonpointer.Escape(k)+": only in manifests")
			}
		}
		return out
	case []any:
		m, ok := manifests.([]any)
		if !ok || len(m) != len(c) {
			break
		}
		var out []string
		for i := range c {
			out = append(out, treeDiff(c[i], m[i], fmt.Sprintf("%s/%d", at, i))...)
		}
		return out
	default:
		if reflect.DeepEqual(chart, manifests) {
			return nil
		}
	}
	return []string{fmt.Sprintf("%s: chart %s, manifests %s", at, compact(chart), compact(manifests))}
}

func compact(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
