package audit

import (
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// The scale the issue asks for: 5,000 manifests and 1,000 rules must audit
// in well under a second per thousand manifests.
const (
	benchManifests = 5000
	benchApps      = 100
	benchRulesPer  = 10 // 100 Applications x 10 rules = 1,000 rules
)

var benchKinds = []struct{ apiVersion, kind string }{
	{"apps/v1", "Deployment"}, {"v1", "Service"}, {"v1", "ConfigMap"}, {"apps/v1", "StatefulSet"}, {"batch/v1", "CronJob"},
}

// benchManifestYAML renders manifest i.
func benchManifestYAML(i int) string {
	k := benchKinds[i%len(benchKinds)]
	return fmt.Sprintf(`apiVersion: %s
kind: %s
metadata:
  name: app-%d
  namespace: ns-%d
  labels: {app: app-%d, tier: web}
  annotations: {team: shop}
spec:
  replicas: 2
  template:
    spec:
      containers:
        - name: main
          image: registry.example.com/app-%d:1.0.%d
          env:
            - {name: MODE, value: prod}
            - {name: LEVEL, value: info}
          resources: {requests: {cpu: 100m, memory: 128Mi}}
`, k.apiVersion, k.kind, i, i%50, i, i, i)
}

// benchAppYAML renders Application a with benchRulesPer commented rules,
// each targeting a different manifest with a mix of pointers, jq and
// managers (some deliberately misspelt so matches-nothing has work).
func benchAppYAML(a int) string {
	var b strings.Builder
	fmt.Fprintf(&b, `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: app-%d
  namespace: argocd
spec:
  syncPolicy: {automated: {selfHeal: true}}
  ignoreDifferences:
`, a)
	for r := 0; r < benchRulesPer; r++ {
		i := (a*benchRulesPer+r)*(benchManifests/(benchApps*benchRulesPer)) + r%len(benchKinds) // spread over kinds
		k := benchKinds[i%len(benchKinds)]
		group := strings.TrimSuffix(k.apiVersion, "v1")
		group = strings.TrimSuffix(group, "/")
		fmt.Fprintf(&b, "    # rule %d of app %d: owned by an operator\n", r, a)
		fmt.Fprintf(&b, "    - group: %q\n      kind: %s\n      name: app-%d\n", group, k.kind, i)
		switch r % 4 {
		case 0:
			b.WriteString("      jsonPointers: [/spec/replicas]\n")
		case 1:
			b.WriteString("      jqPathExpressions: ['.spec.template.spec.containers[] | select(.name == \"main\") | .env']\n")
		case 2:
			b.WriteString("      managedFieldsManagers: [kube-controller-manager]\n")
		default:
			b.WriteString("      jsonPointers: [/spec/tempalte/spec/containers/0/resources]\n")
		}
	}
	return b.String()
}

// BenchmarkAuditRepo audits a generated repository end to end: walking,
// YAML parsing, the adapters' rule extraction and every check.
func BenchmarkAuditRepo(b *testing.B) {
	root := b.TempDir()
	const perFile = 10
	for f := 0; f < benchManifests/perFile; f++ {
		var docs []string
		for i := f * perFile; i < (f+1)*perFile; i++ {
			docs = append(docs, benchManifestYAML(i))
		}
		writeFileB(b, root, fmt.Sprintf("manifests/m%04d.yaml", f), strings.Join(docs, "---\n"))
	}
	for a := 0; a < benchApps; a++ {
		writeFileB(b, root, fmt.Sprintf("argocd/app-%03d.yaml", a), benchAppYAML(a))
	}
	opts := Options{Root: root, Paths: []string{root}, Config: &Config{}, Extractors: testExtractors()}
	res, err := Run(opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%d files, %d manifests, %d rules, %d findings", res.Files, res.Manifests, res.Rules, len(res.Findings))
	b.ResetTimer()
	cpu := cpuTime()
	for b.Loop() {
		if _, err := Run(opts); err != nil {
			b.Fatal(err)
		}
	}
	reportPerThousand(b, cpuTime()-cpu)
}

// BenchmarkAuditChecks runs only the checks over 5,000 manifests and 1,000
// rules held in memory: the part whose cost depends on rules x manifests.
func BenchmarkAuditChecks(b *testing.B) {
	var docs []Document
	for i := 0; i < benchManifests; i++ {
		k := benchKinds[i%len(benchKinds)]
		docs = append(docs, manifest(k.apiVersion, k.kind, fmt.Sprintf("ns-%d", i%50), fmt.Sprintf("app-%d", i)).
			set(int64(2), "spec", "replicas").
			set([]any{map[string]any{"name": "main", "image": "x", "env": []any{map[string]any{"name": "A", "value": "b"}}}},
				"spec", "template", "spec", "containers").doc())
	}
	var rules []model.Rule
	for a := 0; a < benchApps; a++ {
		for r := 0; r < benchRulesPer; r++ {
			i := (a*benchRulesPer+r)*(benchManifests/(benchApps*benchRulesPer)) + r%len(benchKinds) // spread over kinds
			k := benchKinds[i%len(benchKinds)]
			group := strings.TrimSuffix(strings.TrimSuffix(k.apiVersion, "v1"), "/")
			rb := argoApp(fmt.Sprintf("app-%d", a)).gk(group, k.kind).name(fmt.Sprintf("app-%d", i)).
				at(fmt.Sprintf("argocd/app-%03d.yaml", a), 10+r*4).field(fmt.Sprintf(".spec.ignoreDifferences[%d]", r))
			switch r % 4 {
			case 0:
				rb.ptr("/spec/replicas")
			case 1:
				rb.jq(`.spec.template.spec.containers[] | select(.name == "main") | .env`)
			case 2:
				rb.managers("kube-controller-manager")
			default:
				rb.ptr("/spec/tempalte/spec/containers/0/resources")
			}
			rules = append(rules, rb.rule())
		}
	}
	// Wildcard rules (argocd-cm .all, Flux without target) walk every manifest.
	rules = append(rules, argoCM("all").gk("*", "*").ptr("/metadata/annotations/x").rule(),
		fluxKs("k").gk("apps", "Deployment|StatefulSet").ptr("/spec/replicas").rule())
	cfg := &Config{Budget: Budget{PerApp: 5}}
	s := &snapshot{root: b.TempDir(), docs: docs, rules: rules}
	b.ResetTimer()
	cpu := cpuTime()
	for b.Loop() {
		applyConfig(analyze(s, cfg, 0), cfg, s.root)
	}
	reportPerThousand(b, cpuTime()-cpu)
}

func writeFileB(b *testing.B, root, rel, content string) {
	b.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := mkdirWrite(p, content); err != nil {
		b.Fatal(err)
	}
}

// cpuTime is the CPU time (user+system) the process has used. On a shared
// machine wall time measures the neighbours too; CPU time is the work.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportPerThousand adds wall and CPU milliseconds per 1,000 manifests.
func reportPerThousand(b *testing.B, cpu time.Duration) {
	per := func(d time.Duration) float64 {
		return float64(d.Microseconds()) / 1000 / float64(b.N) / float64(benchManifests) * 1000
	}
	b.ReportMetric(per(b.Elapsed()), "wall-ms/1k-manifests")
	b.ReportMetric(per(cpu), "cpu-ms/1k-manifests")
}
