//go:build e2e

package e2e

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-drift/kubectl-drift/e2e/differential"
)

// The HelmRelease backend of the Flux differential (issue 31): the object
// of a seed's scenario (differential.DrawHelm) packaged into a chart,
// published as source-controller publishes a HelmChart artifact, released
// by a real helm-controller v1.6.0 with the scenario's driftDetection,
// drifted by the same live writers, explained by the tool in three modes
// (-f is the release manifest, as `helm get manifest` prints it),
// reconciled twice, and scored like the Kustomization scenarios. The
// truth is the live object after the reconciles and, in warn mode, the
// HelmRelease's Drifted condition.
//
// Run by `make differential ENGINE=flux-helm SEED=N COUNT=M`.

var gvrSecrets = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}

func TestDifferentialFluxHelm(t *testing.T) {
	if os.Getenv("DRIFT_DIFFERENTIAL_SEED") == "" {
		t.Skip("set DRIFT_DIFFERENTIAL_SEED (make differential ENGINE=flux-helm SEED=N COUNT=M)")
	}
	seed := envUint(t, "DRIFT_DIFFERENTIAL_SEED", 0)
	count := envUint(t, "DRIFT_DIFFERENTIAL_COUNT", 20)
	l := lab(t)
	l.diffSetup(t)
	l.helm(t)
	g := newGenerated(t, "flux-helm", func(t *testing.T, sc differential.Scenario) diffResult { return runHelmCase(t, l, sc) })
	start := time.Now()
	t.Run("cases", func(t *testing.T) {
		for _, n := range diffSeeds(t, seed, count) {
			g.Case(t, differential.DrawHelm(n))
		}
	})
	summarizeDiff(t, "flux-helm", seed, g.Results(), time.Since(start))
}

// TestDifferentialUntouched (issue 31): an object of every corpus entry,
// applied by the real kustomize-controller and by the real helm-controller
// (driftDetection enabled) and written by nobody, gives "No drift." and
// exit 0 in every mode. Run by `make differential ENGINE=untouched` (66
// cases); DRIFT_DIFFERENTIAL_UNTOUCHED=1 runs every entry, a list of entry
// IDs (KINDS=secret,pvc) those only.
func TestDifferentialUntouched(t *testing.T) {
	if os.Getenv("DRIFT_DIFFERENTIAL_UNTOUCHED") == "" {
		t.Skip("set DRIFT_DIFFERENTIAL_UNTOUCHED=1 (make differential ENGINE=untouched)")
	}
	l := lab(t)
	l.diffSetup(t)
	l.helm(t)
	var (
		mu      sync.Mutex
		results []diffResult
	)
	start := time.Now()
	t.Run("cases", func(t *testing.T) {
		only := os.Getenv("DRIFT_DIFFERENTIAL_UNTOUCHED")
		for i, o := range differential.Corpus {
			if only != "1" && !slices.Contains(strings.Split(only, ","), o.ID) {
				continue
			}
			for _, owner := range []string{"kustomization", "helmrelease"} {
				// Seeds of their own (namespaces are named after them);
				// no settings, no changes.
				sc := differential.Scenario{Seed: uint64(990000 + 2*i), Object: o}
				if owner == "helmrelease" {
					sc.Seed++
					sc.Helm, sc.DriftMode = true, "enabled"
				}
				t.Run(o.ID+"/"+owner, func(t *testing.T) {
					t.Parallel()
					res := runUntouched(t, l, sc)
					mu.Lock()
					results = append(results, res)
					mu.Unlock()
				})
			}
		}
	})
	summarizeDiff(t, "untouched", 990000, results, time.Since(start))
}

// runUntouched runs one untouched case and fails unless every mode said
// nothing and exited 0.
func runUntouched(t *testing.T, l *fluxLab, sc differential.Scenario) diffResult {
	t.Helper()
	var res diffResult
	if sc.Helm {
		res = runHelmCase(t, l, sc)
	} else {
		res = runDiffCase(t, l, sc)
	}
	if res.skipped != "" {
		t.Errorf("%s: %s", sc, res.skipped)
		return res
	}
	for _, m := range fxModes {
		x, ok := res.tool[m]
		if !ok {
			continue // an exit above 1: in failing() below
		}
		if len(x.fields) > 0 || x.code != 0 {
			t.Errorf("%s: %s: want no drift and exit 0, got exit %d and %v", sc, m, x.code, x.fields)
		}
	}
	for _, f := range res.failing() {
		t.Errorf("%s: %s", sc, f)
	}
	return res
}

// runHelmCase runs one HelmRelease scenario in a fresh namespace of the
// lab.
func runHelmCase(t *testing.T, l *fluxLab, sc differential.Scenario) diffResult {
	t.Helper()
	l.helm(t)
	res := diffResult{sc: sc, findings: map[string][]differential.Finding{}}
	ns := l.namespace(t, fmt.Sprintf("dh-%d", sc.Seed))
	files, err := sc.HelmChart(ns)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := sc.HelmReleaseSpec()
	if err != nil {
		t.Fatal(err)
	}
	first, _, err := sc.GitManifests(ns)
	if err != nil {
		t.Fatal(err)
	}
	o := sc.Object
	gvr := schema.GroupVersionResource{Group: o.Group, Version: o.Version, Resource: o.Resource}
	name, objNS := o.Name(ns), ns
	if o.ClusterScoped {
		objNS = ""
	}
	l.helmChartFiles(t, ns, "app", files)
	l.create(t, gvrHR, labHelmRelease(ns, "app", spec))
	l.waitHelmAttempted(t, ns, "app")
	get := func() (map[string]any, bool) {
		obj, err := l.dyn.Resource(gvr).Namespace(objNS).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return nil, false
		}
		return obj.Object, true
	}
	if _, ok := get(); !ok {
		res.skipped = "object not created by the install"
		hr := &unstructured.Unstructured{Object: l.getJSON(t, gvrHR, ns, "app")}
		_, reason, msg := condition(hr, "Ready")
		t.Logf("%s: %s (%s: %s)", sc, res.skipped, reason, firstLine(msg))
		return res
	}
	created, _ := get()
	touched := l.writeLive(t, sc, ns, first)
	gitFile := fluxWrite(t, t.TempDir(), "release.yaml", l.releaseManifest(t, ns, "app"))
	before, _ := get()
	// What the writers changed beside the paths they aim at: a client-side
	// apply whose manifest drops a map deletes the whole map, other
	// managers' keys with it (make differential ENGINE=flux-helm seed
	// 48839: helm-controller's ownership labels).
	touched = append(touched, changedLeaves(created, before)...)
	touched = append(touched, newlyOwned(created, before)...)
	tool := l.explainModes(t, sc, ns, gitFile, &res)

	l.reconcile(t, gvrHR, ns, "app")
	l.reconcile(t, gvrHR, ns, "app")
	truth := differential.Truth{}
	hr := &unstructured.Unstructured{Object: l.getJSON(t, gvrHR, ns, "app")}
	if st, reason, msg := condition(hr, "Ready"); st == "False" {
		truth.ApplyFailed = true
		t.Logf("%s: HelmRelease Ready=False %s: %s", sc, reason, firstLine(msg))
	}
	if sc.DriftMode == "warn" {
		if st, reason, _ := condition(hr, "Drifted"); st != "" {
			drifted := st == "True"
			truth.Reported = &drifted
			t.Logf("%s: HelmRelease Drifted=%s %s", sc, st, reason)
		}
	}
	after, ok := get()
	if !ok {
		after = map[string]any{}
	}
	if os.Getenv("DRIFT_DIFFERENTIAL_SHOW") != "" {
		b, _ := json.Marshal(hr.Object["status"])
		t.Logf("%s: before the reconciles: %v\nafter: %v\nHelmRelease status: %s", sc, before, after, b)
	}
	for _, p := range changedLeaves(before, after) {
		if p != "/metadata/annotations/deprecated.daemonset.template.generation" {
			truth.Changed = append(truth.Changed, p)
		}
	}
	for m, x := range tool {
		res.findings[m] = append(res.findings[m], differential.Score(x.fields, truth, touched, x.code)...)
	}
	res.tool = tool
	return res
}

// labHelmRelease is the manifest of HelmRelease ns/name on HelmChart
// ns/name (no waits: nothing becomes ready without
// kube-controller-manager; interval 1h, so that only the test triggers
// reconciles).
func labHelmRelease(ns, name, extraSpec string) string {
	return fmt.Sprintf(`apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: %s, namespace: %s}
spec:
  interval: 1h
  chartRef: {kind: HelmChart, name: %s}
  install: {disableWait: true}
  upgrade: {disableWait: true}
%s`, name, ns, name, indent(extraSpec, "  "))
}

// waitHelmAttempted waits until HelmRelease ns/name observed its
// generation and is Ready True or False (a failed install is a verdict
// to judge, not a harness error).
func (l *fluxLab) waitHelmAttempted(t testing.TB, ns, name string) {
	t.Helper()
	l.waitFor(t, "install attempt", gvrHR, ns, name, func(o *unstructured.Unstructured) bool {
		s, _, _ := condition(o, "Ready")
		g, _, _ := unstructured.NestedInt64(o.Object, "status", "observedGeneration")
		return g == o.GetGeneration() && (s == "True" || s == "False")
	})
}

// releaseManifest is the manifest of release ns/name's deployed version,
// as `helm get manifest` prints it: the "release" entry of its
// sh.helm.release.v1 Secret is base64 of gzip of the release JSON.
func (l *fluxLab) releaseManifest(t testing.TB, ns, name string) string {
	t.Helper()
	list, err := l.dyn.Resource(gvrSecrets).Namespace(ns).List(context.Background(),
		metav1.ListOptions{LabelSelector: "owner=helm,status=deployed,name=" + name})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("release %s/%s: want one deployed release Secret, got %d (%v)", ns, name, len(list.Items), err)
	}
	enc, _, _ := unstructured.NestedString(list.Items[0].Object, "data", "release")
	// The API returns data base64-encoded; Helm's payload is base64 too.
	outer, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		t.Fatalf("release secret of %s/%s: %v", ns, name, err)
	}
	gz, err := base64.StdEncoding.DecodeString(string(outer))
	if err != nil {
		t.Fatalf("release secret of %s/%s: %v", ns, name, err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatalf("release secret of %s/%s: %v", ns, name, err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("release secret of %s/%s: %v", ns, name, err)
	}
	var rel struct {
		Manifest string `json:"manifest"`
	}
	if err := json.Unmarshal(raw, &rel); err != nil {
		t.Fatalf("release of %s/%s: %v", ns, name, err)
	}
	return strings.TrimRight(rel.Manifest, "\n") + "\n"
}
