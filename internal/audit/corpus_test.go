package audit

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/kubectl-drift/kubectl-drift/internal/audit/auditapi"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	yaml "go.yaml.in/yaml/v3"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kubectl-drift/kubectl-drift/internal/argocd"
	"github.com/kubectl-drift/kubectl-drift/internal/model"

	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// corpusRoot holds trimmed copies of public GitOps repositories (each
// directory has a SOURCE file: repository, commit, files kept).
const corpusRoot = "testdata/corpus"

// corpusBudget is the time one repository may take (issue 15: under 5 s).
const corpusBudget = 5 * time.Second

// TestCorpus runs the rule extraction and audit over every corpus
// repository: rule counts per type must equal an independent count made
// by walking the YAML generically (not through the adapters), and the
// audit report must equal its reviewed golden. Time and peak heap are
// printed per repository.
func TestCorpus(t *testing.T) {
	repos, err := os.ReadDir(corpusRoot)
	if err != nil {
		t.Fatal(err)
	}
	if len(repos) < 15 {
		t.Fatalf("corpus has %d repositories, want at least 15 (issue 33)", len(repos))
	}
	for _, e := range repos {
		if !e.IsDir() {
			continue
		}
		t.Run(e.Name(), func(t *testing.T) {
			root, err := filepath.Abs(filepath.Join(corpusRoot, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			opts := Options{Root: root, Paths: []string{root}, Extractors: testExtractors(), Engines: testEngines(), Values: argocd.ValuesFileDocuments}

			var res *Result
			elapsed, peak := measure(func() {
				res, err = Run(opts)
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %d files (%d skipped), %d manifests, %d rules, %d findings: %v (CPU time when less than wall time), peak heap %.1f MB",
				e.Name(), res.Files, res.Skipped, res.Manifests, res.Rules, len(res.Findings), elapsed.Round(time.Millisecond), float64(peak)/(1<<20))
			if elapsed > corpusBudget {
				t.Errorf("audit took %v, budget %v", elapsed, corpusBudget)
			}

			snap, err := collect(opts, root, []string{"."}, false)
			if err != nil {
				t.Fatal(err)
			}
			got := countRules(snap.rules)
			want := independentCount(t, root)
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("rule counts differ from the independent count (-independent +extracted):\n%s", d)
			}

			var buf bytes.Buffer
			if err := Render(&buf, "text", res); err != nil {
				t.Fatal(err)
			}
			exit := 0
			if res.Worst().AtLeast(SeverityError) {
				exit = 1
			}
			var counts []string
			for k, n := range got {
				counts = append(counts, fmt.Sprintf("%s: %d", k, n))
			}
			sort.Strings(counts)
			if len(counts) == 0 {
				counts = []string{"none"}
			}
			report := fmt.Sprintf("# audit of %s (exit %d with --fail-on error)\n# rules by type:\n#   %s\n%s",
				e.Name(), exit, strings.Join(counts, "\n#   "), buf.String())
			compareGolden(t, filepath.Join("testdata", "corpus-audit", e.Name()+".golden"), report)
		})
	}
}

// TestCorpusProvenance checks that every corpus repository may be
// committed and can be traced: SOURCE names the GitHub repository the
// directory is named after and the commit the files come from, its
// upstream licence is copied as LICENSE.upstream (repositories without a
// licence must not be in the corpus), and the files on disk are exactly the
// files SOURCE lists.
func TestCorpusProvenance(t *testing.T) {
	repos, err := os.ReadDir(corpusRoot)
	if err != nil {
		t.Fatal(err)
	}
	commitRE := regexp.MustCompile(`^[0-9a-f]{40}$`)
	for _, e := range repos {
		if !e.IsDir() {
			t.Errorf("%s: only repository directories belong in %s", e.Name(), corpusRoot)
			continue
		}
		t.Run(e.Name(), func(t *testing.T) {
			dir := filepath.Join(corpusRoot, e.Name())
			src, err := os.ReadFile(filepath.Join(dir, "SOURCE"))
			if err != nil {
				t.Fatal(err)
			}
			fields := map[string]string{}
			listed := map[string]bool{}
			inFiles := false
			for _, line := range strings.Split(string(src), "\n") {
				switch {
				case line == "":
				case inFiles:
					f := strings.TrimPrefix(line, "  ")
					if i := strings.Index(f, " (only the documents "); i >= 0 {
						f = f[:i]
					}
					listed[f] = true
				case strings.HasPrefix(line, "files kept"):
					inFiles = true
				default:
					k, v, ok := strings.Cut(line, ": ")
					if !ok {
						t.Errorf("SOURCE: unexpected line %q", line)
					}
					fields[k] = v
				}
			}
			repo, ok := strings.CutPrefix(fields["repository"], "https://github.com/")
			if !ok || strings.ReplaceAll(repo, "/", "_") != e.Name() {
				t.Errorf("SOURCE repository %q does not name github.com/%s", fields["repository"], strings.Replace(e.Name(), "_", "/", 1))
			}
			if !commitRE.MatchString(fields["commit"]) {
				t.Errorf("SOURCE commit %q is not a full commit id", fields["commit"])
			}
			if !strings.Contains(fields["licence"], "LICENSE.upstream") {
				t.Errorf("SOURCE licence %q: an unlicensed repository must not be in the corpus", fields["licence"])
			}
			if lic, err := os.ReadFile(filepath.Join(dir, "LICENSE.upstream")); err != nil || len(bytes.TrimSpace(lic)) == 0 {
				t.Errorf("LICENSE.upstream missing or empty (%v)", err)
			}
			if len(listed) == 0 {
				t.Errorf("SOURCE lists no files")
			}
			onDisk := map[string]bool{}
			err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				rel, _ := filepath.Rel(dir, p)
				rel = filepath.ToSlash(rel)
				if rel != "SOURCE" && rel != "LICENSE.upstream" {
					onDisk[rel] = true
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(listed, onDisk); d != "" {
				t.Errorf("files listed in SOURCE differ from the files kept (-SOURCE +disk):\n%s", d)
			}
		})
	}
}

// BenchmarkCorpusLargest audits the largest corpus repository (by files).
func BenchmarkCorpusLargest(b *testing.B) {
	repos, err := os.ReadDir(corpusRoot)
	if err != nil {
		b.Fatal(err)
	}
	largest, most := "", 0
	for _, e := range repos {
		n := 0
		_ = filepath.WalkDir(filepath.Join(corpusRoot, e.Name()), func(_ string, d fs.DirEntry, _ error) error {
			if d != nil && !d.IsDir() {
				n++
			}
			return nil
		})
		if n > most {
			largest, most = e.Name(), n
		}
	}
	root, _ := filepath.Abs(filepath.Join(corpusRoot, largest))
	b.Logf("%s: %d files", largest, most)
	for b.Loop() {
		if _, err := Run(Options{Root: root, Paths: []string{root}, Extractors: testExtractors(), Engines: testEngines(), Values: argocd.ValuesFileDocuments}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestCorpusFull audits whole mirrored repositories when
// DRIFT_CORPUS_FULL names a directory of checkouts (one per repository),
// for the time and memory figures on real sizes; it is skipped otherwise.
func TestCorpusFull(t *testing.T) {
	dir := os.Getenv("DRIFT_CORPUS_FULL")
	if dir == "" {
		t.Skip("DRIFT_CORPUS_FULL not set")
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		root := filepath.Join(dir, e.Name())
		var res *Result
		elapsed, peak := measure(func() {
			res, err = Run(Options{Root: root, Paths: []string{root}, Extractors: testExtractors(), Engines: testEngines(), Values: argocd.ValuesFileDocuments})
		})
		if err != nil {
			t.Errorf("%s: %v", e.Name(), err)
			continue
		}
		t.Logf("%s: %d files (%d skipped), %d manifests, %d rules, %d findings: %v (CPU time when less than wall time), peak heap %.1f MB",
			e.Name(), res.Files, res.Skipped, res.Manifests, res.Rules, len(res.Findings), elapsed.Round(time.Millisecond), float64(peak)/(1<<20))
		if elapsed > corpusBudget {
			t.Errorf("%s: audit took %v, budget %v", e.Name(), elapsed, corpusBudget)
		}
	}
}

// measure runs f and returns its time (wall, or CPU when the process got
// less CPU than wall time) and the peak heap in use,
// sampled every 10 ms (ReadMemStats stops the world: sampling more often
// slows down what is measured).
func measure(f func()) (time.Duration, uint64) {
	runtime.GC()
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var ms runtime.MemStats
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	cpu0 := cpuTime()
	start := time.Now()
	f()
	elapsed := time.Since(start)
	cpu := cpuTime() - cpu0
	close(stop)
	wg.Wait()
	if cpu > 0 && cpu < elapsed {
		// On a loaded machine (CI, shared runners) wall time measures
		// the queue, not the work: the CPU time the process got (GC
		// included) is what the budget is about.
		elapsed = cpu
	}
	return elapsed, peak.Load()
}

func compareGolden(t *testing.T, file, got string) {
	t.Helper()
	testutil.Golden(t, file, []byte(got))
}

// countRules groups extracted rules by the categories the independent
// counter knows: engine object kind and mechanism, argocd-cm rules per
// instance (file).
func countRules(rules []model.Rule) map[string]int {
	out := map[string]int{}
	for _, r := range rules {
		out[ruleCategory(r)]++
	}
	return out
}

func ruleCategory(r model.Rule) string {
	holder := auditapi.ObjectKind(r.Origin.Object)
	if newEngines(testEngines()).global(r) {
		kind := "chart-values" // held by a HelmRelease, an Application or a values file
		switch holder {
		case "ConfigMap":
			kind = "argocd-cm"
		case "ArgoCD":
			kind = "ArgoCD"
		}
		mech := string(r.Type)
		if r.Scope == model.ScopeRefresh {
			mech = "argocd.ignoreResourceUpdates"
		}
		return fmt.Sprintf("%s %s %s", kind, r.Origin.File, mech)
	}
	return fmt.Sprintf("%s %s", holder, r.Type)
}

// independentCount walks the repository's YAML with a plain YAML decoder
// and counts rule sources by reading the fields directly. It shares no
// code with the adapters: it is the check that nothing is lost.
func independentCount(t *testing.T, root string) map[string]int {
	t.Helper()
	out := map[string]int{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if p != root && strings.HasPrefix(d.Name(), ".") {
				return fs.SkipDir
			}
			return nil
		}
		ext := strings.ToLower(filepath.Ext(p))
		if ext != ".yaml" && ext != ".yml" && ext != ".json" {
			return nil
		}
		inChart := false
		if _, err := os.Stat(filepath.Join(filepath.Dir(p), "Chart.yaml")); err == nil {
			inChart = true
		}
		for dir := filepath.Dir(filepath.Dir(p)); len(dir) >= len(root); dir = filepath.Dir(dir) {
			if _, err := os.Stat(filepath.Join(dir, "Chart.yaml")); err == nil {
				return nil // chart templates: not read at all
			}
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		dec := yaml.NewDecoder(bytes.NewReader(data))
		for {
			var doc map[string]any
			err := dec.Decode(&doc)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				var te *yaml.TypeError
				if errors.As(err, &te) && !strings.Contains(err.Error(), "already defined") {
					continue // not a mapping
				}
				if strings.Contains(err.Error(), "already defined") && isValuesFile(p) {
					// A duplicate key: Helm reads values with
					// sigs.k8s.io/yaml (Helm 3 pkg/chartutil/values.go
					// ReadValues), where the last one wins, so the
					// chart's argocd-cm still has the rules.
					var vals map[string]any
					if sigsyaml.Unmarshal(data, &vals) == nil && vals["apiVersion"] == nil {
						countChartValues(out, rel, vals)
					}
				}
				break // syntax error ends the file, as for the reader
			}
			if doc == nil {
				continue
			}
			isValues := isValuesFile(p)
			if doc["apiVersion"] == nil || doc["kind"] == nil {
				if isValues {
					countChartValues(out, rel, doc)
				}
				continue
			}
			if inChart || doc["metadata"] == nil {
				continue
			}
			countObject(out, rel, doc)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// isValuesFile: Helm values files are named values.yaml, values-prod.yaml...
func isValuesFile(p string) bool {
	return strings.Contains(strings.ToLower(filepath.Base(p)), "values")
}

func get(v any, path ...string) any {
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func length(v any) int {
	l, _ := v.([]any)
	return len(l)
}

func countObject(out map[string]int, file string, doc map[string]any) {
	apiVersion, _ := doc["apiVersion"].(string)
	kind, _ := doc["kind"].(string)
	group := "" // the core group: "v1"
	if i := strings.Index(apiVersion, "/"); i >= 0 {
		group = apiVersion[:i]
	}
	name, _ := get(doc, "metadata", "name").(string)
	add := func(key string, n int) {
		if n > 0 {
			out[key] += n
		}
	}
	switch {
	case group == "argoproj.io" && kind == "Application":
		add("Application argocd.ignoreDifferences", length(get(doc, "spec", "ignoreDifferences")))
		sources := []any{get(doc, "spec", "source")}
		if l, ok := get(doc, "spec", "sources").([]any); ok {
			sources = append(sources, l...)
		}
		for _, s := range sources {
			if c, _ := get(s, "chart").(string); c != "argo-cd" {
				continue
			}
			if cm, ok := get(s, "helm", "valuesObject", "configs", "cm").(map[string]any); ok {
				countCM(out, "chart-values", file, cm)
			}
			if v, ok := get(s, "helm", "values").(string); ok {
				var vals map[string]any
				if yaml.Unmarshal([]byte(v), &vals) == nil {
					if cm, ok := get(vals, "configs", "cm").(map[string]any); ok {
						countCM(out, "chart-values", file, cm)
					}
				}
			}
		}
	case group == "argoproj.io" && kind == "ApplicationSet":
		add("ApplicationSet argocd.ignoreDifferences", length(get(doc, "spec", "template", "spec", "ignoreDifferences")))
	case group == "argoproj.io" && kind == "ArgoCD":
		cm := map[string]any{}
		if all, ok := get(doc, "spec", "resourceIgnoreDifferences", "all").(map[string]any); ok && len(all) > 0 {
			cm["resource.customizations.ignoreDifferences.all"] = all
		}
		if ids, ok := get(doc, "spec", "resourceIgnoreDifferences", "resourceIdentifiers").([]any); ok {
			for _, id := range ids {
				g, _ := get(id, "group").(string)
				k, _ := get(id, "kind").(string)
				if g != "" {
					g += "_"
				}
				cm["resource.customizations.ignoreDifferences."+g+k] = get(id, "customization")
			}
		}
		if v, ok := get(doc, "spec", "resourceExclusions").(string); ok && v != "" {
			cm["resource.exclusions"] = v
		}
		if v, ok := get(doc, "spec", "resourceInclusions").(string); ok && v != "" {
			cm["resource.inclusions"] = v
		}
		if m, ok := get(doc, "spec", "extraConfig").(map[string]any); ok {
			for k, v := range m {
				cm[k] = v
			}
		}
		if len(cm) > 0 {
			countCM(out, "ArgoCD", file, cm)
		}
	case group == "" && kind == "ConfigMap" && name == "argocd-cm":
		cm, _ := doc["data"].(map[string]any)
		countCM(out, "argocd-cm", file, cm)
	case strings.HasPrefix(group, "kustomize.toolkit.fluxcd.io") && kind == "Kustomization":
		add("Kustomization flux.kustomization.ignore", length(get(doc, "spec", "ignore")))
	case strings.HasPrefix(group, "helm.toolkit.fluxcd.io") && kind == "HelmRelease":
		add("HelmRelease flux.helmrelease.driftDetection.ignore", length(get(doc, "spec", "driftDetection", "ignore")))
		chart, _ := get(doc, "spec", "chart", "spec", "chart").(string)
		if chart == "" {
			chart, _ = get(doc, "spec", "chartRef", "name").(string)
		}
		if cm, ok := get(doc, "spec", "values", "configs", "cm").(map[string]any); ok && chart == "argo-cd" {
			countCM(out, "chart-values", file, cm)
		}
	}
	// Flux marks, on any object.
	for _, m := range []struct{ key, typ string }{
		{"kustomize.toolkit.fluxcd.io/ssa", "flux.ssa"},
		{"kustomize.toolkit.fluxcd.io/reconcile", "flux.reconcileDisabled"},
		{"kustomize.toolkit.fluxcd.io/prune", "flux.pruneDisabled"},
		{"helm.toolkit.fluxcd.io/driftDetection", "flux.driftDetectionDisabled"},
	} {
		if get(doc, "metadata", "annotations", m.key) != nil || get(doc, "metadata", "labels", m.key) != nil {
			out[kind+" "+m.typ]++
		}
	}
}

func countChartValues(out map[string]int, file string, doc map[string]any) {
	if cm, ok := get(doc, "configs", "cm").(map[string]any); ok {
		delete(cm, "create")
		delete(cm, "annotations")
		if len(cm) > 0 {
			countCM(out, "chart-values", file, cm)
		}
	}
}

// countCM counts the rules of one argocd-cm (data as read): one per
// override key and mechanism (split keys win over the legacy
// resource.customizations), one per knownTypeFields item, one per
// group x kind of each resource.exclusions item, and the /status rule
// unless resource.compareoptions turns it off.
func countCM(out map[string]int, kind, file string, data map[string]any) {
	type ov struct {
		ign, upd bool
		known    int
	}
	ovs := map[string]*ov{}
	get1 := func(k string) *ov {
		if ovs[k] == nil {
			ovs[k] = &ov{}
		}
		return ovs[k]
	}
	str := func(v any) string {
		if s, ok := v.(string); ok {
			return s
		}
		b, _ := yaml.Marshal(v)
		return string(b)
	}
	nonEmpty := func(s string) bool {
		var m map[string]any
		if yaml.Unmarshal([]byte(s), &m) != nil {
			return false
		}
		return length(m["jsonPointers"])+length(m["jqPathExpressions"])+length(m["managedFieldsManagers"]) > 0
	}
	if v, ok := data["resource.customizations"]; ok {
		var legacy map[string]map[string]any
		if yaml.Unmarshal([]byte(str(v)), &legacy) == nil {
			for k, e := range legacy {
				o := get1(k)
				o.ign = nonEmpty(str(e["ignoreDifferences"]))
				o.upd = nonEmpty(str(e["ignoreResourceUpdates"]))
				o.known = length(e["knownTypeFields"])
			}
		}
	}
	for k, v := range data {
		parts := strings.SplitN(k, ".", 4)
		if len(parts) < 4 || parts[0]+"."+parts[1] != "resource.customizations" {
			continue
		}
		key := strings.Replace(parts[3], "_", "/", 1)
		if key == "all" {
			key = "*/*"
		}
		switch parts[2] {
		case "ignoreDifferences":
			get1(key).ign = nonEmpty(str(v))
		case "ignoreResourceUpdates":
			get1(key).upd = nonEmpty(str(v))
		case "knownTypeFields":
			var l []any
			_ = yaml.Unmarshal([]byte(str(v)), &l)
			get1(key).known = len(l)
		}
	}
	for _, o := range ovs {
		if o.ign {
			out[fmt.Sprintf("%s %s argocd.ignoreDifferences", kind, file)]++
		}
		if o.upd {
			out[fmt.Sprintf("%s %s argocd.ignoreResourceUpdates", kind, file)]++
		}
		if o.known > 0 {
			out[fmt.Sprintf("%s %s argocd.knownTypeFields", kind, file)] += o.known
		}
	}
	if v, ok := data["resource.exclusions"]; ok {
		var l []map[string][]string
		if yaml.Unmarshal([]byte(str(v)), &l) == nil {
			for _, e := range l {
				out[fmt.Sprintf("%s %s argocd.resourceExclusion", kind, file)] += max(len(e["apiGroups"]), 1) * max(len(e["kinds"]), 1)
			}
		}
	}
	status := "all"
	if v, ok := data["resource.compareoptions"]; ok {
		var co map[string]any
		if yaml.Unmarshal([]byte(str(v)), &co) == nil {
			if s, ok := co["ignoreResourceStatusField"].(string); ok && s != "" {
				status = s
			}
		}
	}
	switch status {
	case "none", "off", "false":
	default:
		out[fmt.Sprintf("%s %s argocd.compareOptions", kind, file)]++
	}
}
