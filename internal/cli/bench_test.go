package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// longListObjects writes a Deployment whose one container has n env
// items, desired and live (one value changed, managedFields naming every
// item as server-side apply records them), as JSON files.
func longListObjects(tb testing.TB, n int) (live, desired string) {
	tb.Helper()
	mk := func(isLive bool) map[string]any {
		env := make([]any, n)
		fields := map[string]any{".": map[string]any{}}
		for i := range env {
			v := fmt.Sprintf("v%d", i)
			if isLive && i == n/2 {
				v = "changed"
			}
			env[i] = map[string]any{"name": fmt.Sprintf("E%d", i), "value": v}
			fields[fmt.Sprintf(`k:{"name":"E%d"}`, i)] = map[string]any{".": map[string]any{}, "f:name": map[string]any{}, "f:value": map[string]any{}}
		}
		md := map[string]any{"name": "big", "namespace": "shop"}
		if isLive {
			md["managedFields"] = []any{map[string]any{
				"apiVersion": "apps/v1", "fieldsType": "FieldsV1", "manager": "kustomize-controller", "operation": "Apply", "time": "2026-01-01T00:00:00Z",
				"fieldsV1": map[string]any{"f:spec": map[string]any{"f:template": map[string]any{"f:spec": map[string]any{"f:containers": map[string]any{
					`k:{"name":"app"}`: map[string]any{".": map[string]any{}, "f:env": fields}}}}}},
			}}
		}
		return map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": md,
			"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
				"containers": []any{map[string]any{"name": "app", "image": "nginx", "env": env}}}}}}
	}
	dir := tb.TempDir()
	write := func(name string, v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			tb.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			tb.Fatal(err)
		}
		return p
	}
	return write("live.json", mk(true)), write("desired.json", mk(false))
}

// BenchmarkExplainLongList runs explain -f --live-file on one object with
// 1k, 10k, 30k and 100k list items (100k is ~4 MB desired, ~10 MB live
// with managedFields). Time per item must stay flat: the diff matches list
// items by key through a map, managedFields children reach fieldpath in
// its own order (map order made Set.FromJSON insert quadratically), and
// the inputs are decoded and compared without node trees or deep copies.
//
// Measured with the binary (/usr/bin/time, 2 shared cores, load ~15):
//
//	100k items, live with managedFields (10 MB): before 83 s / 714 MB RSS,
//	  after 2.5 s CPU / 420 MB
//	100k items, live without managedFields (4 MB): before 2.1 s / 366 MB,
//	  after 0.5 s CPU / 222 MB
//	1k / 10k items with managedFields: 0.03 s / 0.15 s CPU, 59 / 92 MB
func BenchmarkExplainLongList(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 30_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			live, desired := longListObjects(b, n)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				code, _, errOut := runCommandTo(b, io.Discard, "explain", "--live-file", live, "-f", desired, "-o", "json")
				if code != ExitDrift {
					b.Fatalf("exit %d: %s", code, errOut)
				}
			}
		})
	}
}

// BenchmarkExplainLongListNoManagedFields is the 4 MB case of the issue:
// desired and live of 100k env items, live without managedFields.
func BenchmarkExplainLongListNoManagedFields(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			live, desired := longListObjects(b, n)
			stripManagedFields(b, live)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				code, _, errOut := runCommandTo(b, io.Discard, "explain", "--live-file", live, "-f", desired, "-o", "json")
				if code != ExitDrift {
					b.Fatalf("exit %d: %s", code, errOut)
				}
			}
		})
	}
}

func stripManagedFields(tb testing.TB, path string) {
	tb.Helper()
	editJSON(tb, path, func(m map[string]any) { delete(m["metadata"].(map[string]any), "managedFields") })
}

// fluxLongList is longListObjects with the objects owned by a Flux
// Kustomization (its labels), so the Flux adapter judges every field:
// ownership per leaf, the cleanup prediction, keyed lookups into the
// manifest.
func fluxLongList(tb testing.TB, n int) (live, desired string) {
	tb.Helper()
	live, desired = longListObjects(tb, n)
	for _, p := range []string{live, desired} {
		editJSON(tb, p, func(m map[string]any) {
			m["metadata"].(map[string]any)["labels"] = map[string]any{
				"kustomize.toolkit.fluxcd.io/name": "shop", "kustomize.toolkit.fluxcd.io/namespace": "flux-system"}
		})
	}
	return live, desired
}

func editJSON(tb testing.TB, path string, edit func(map[string]any)) {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		tb.Fatal(err)
	}
	edit(m)
	if b, err = json.Marshal(m); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		tb.Fatal(err)
	}
}

// longListRuns are the offline commands over one Flux-owned object with
// a long list: explain (drift inferred from managedFields), explain -f and
// normalize -f, with the exit code each gives.
func longListRuns(live, desired string) map[string]struct {
	args []string
	code int
} {
	return map[string]struct {
		args []string
		code int
	}{
		"explain":   {[]string{"explain", "deploy/big", "-n", "shop", "--live-file", live, "-o", "json"}, ExitNoDrift},
		"explain-f": {[]string{"explain", "deploy/big", "-n", "shop", "--live-file", live, "-f", desired, "-o", "json"}, ExitDrift},
		"normalize": {[]string{"normalize", "-f", live}, ExitNoDrift},
	}
}

// BenchmarkLongListFlux runs explain, explain -f and normalize -f on a
// Flux-owned object with 10k and 100k env items (100k: ~10 MB live with
// managedFields). Time per item must stay flat: managedFields list types
// are learnt once per list and the Flux judgment's keyed lookups index
// each list once (issue 29; before, explain -f on 100k items ran over
// 150 s, see TestLongListLinear for the check that does not depend on
// the machine).
func BenchmarkLongListFlux(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		live, desired := fluxLongList(b, n)
		runs := longListRuns(live, desired)
		for _, name := range slices.Sorted(maps.Keys(runs)) {
			r := runs[name]
			b.Run(fmt.Sprintf("%s/%d", name, n), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					if code, _, errOut := runCommandTo(b, io.Discard, r.args...); code != r.code {
						b.Fatalf("exit %d: %s", code, errOut)
					}
				}
			})
		}
	}
}

// TestLongListLinear: eight times the list items cost at most about eight
// times the allocations for explain, explain -f and normalize -f (a
// per-item rescan of the list, as the keyed lookup into the manifest did,
// makes it ~60 times). Allocations, not time: they do not depend on the
// machine's load.
func TestLongListLinear(t *testing.T) {
	if testing.Short() {
		t.Skip("runs commands over 4k-item lists")
	}
	const small, factor = 500, 8
	ls, ds := fluxLongList(t, small)
	lb, db := fluxLongList(t, small*factor)
	smallRuns, bigRuns := longListRuns(ls, ds), longListRuns(lb, db)
	for _, name := range slices.Sorted(maps.Keys(smallRuns)) {
		r := smallRuns[name]
		allocs := func(args []string, code int) float64 {
			return testing.AllocsPerRun(1, func() {
				if got, _, errOut := runCommandTo(t, io.Discard, args...); got != code {
					t.Fatalf("%s: exit %d: %s", name, got, errOut)
				}
			})
		}
		a, b := allocs(r.args, r.code), allocs(bigRuns[name].args, bigRuns[name].code)
		if ratio := b / a; ratio > factor*1.5 {
			t.Errorf("%s: %d items %.0f allocs, %d items %.0f allocs: ratio %.1f, want about %d (linear)", name, small, a, small*factor, b, ratio, factor)
		} else {
			t.Logf("%s: allocation ratio %.1f for %dx items", name, ratio, factor)
		}
	}
}

// BenchmarkNormalizeArgoCDLongList runs normalize --engine argocd -f on
// an object with 10k and 100k env items (100k: ~10 MB with
// managedFields; issue 29 measured 1.5 GB for it). Bytes and allocations
// per op must grow with the items, no faster.
func BenchmarkNormalizeArgoCDLongList(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			live, _ := longListObjects(b, n)
			b.ReportAllocs()
			for b.Loop() {
				if code, _, errOut := runCommandTo(b, io.Discard, "normalize", "--engine", "argocd", "-f", live); code != ExitNoDrift {
					b.Fatalf("exit %d: %s", code, errOut)
				}
			}
		})
	}
}

// argoLongList is longListObjects as Argo CD applied it client-side:
// tracked by an Application (its file returned too), last-applied-
// configuration holding the desired object, so explain -f runs Argo CD's
// three-way diff over the long list.
func argoLongList(tb testing.TB, n int) (live, desired, app string) {
	tb.Helper()
	live, desired = longListObjects(tb, n)
	d, err := os.ReadFile(desired)
	if err != nil {
		tb.Fatal(err)
	}
	editJSON(tb, live, func(m map[string]any) {
		m["metadata"].(map[string]any)["annotations"] = map[string]any{
			"argocd.argoproj.io/tracking-id":                   "shop:apps/Deployment:shop/big",
			"kubectl.kubernetes.io/last-applied-configuration": string(d),
		}
	})
	app = filepath.Join(filepath.Dir(live), "app.yaml")
	if err := os.WriteFile(app, []byte("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: shop, namespace: argocd}\n"+
		"spec: {project: default, destination: {namespace: shop, server: https://kubernetes.default.svc}, source: {repoURL: https://example.com/x.git, path: shop}}\n"), 0o644); err != nil {
		tb.Fatal(err)
	}
	return live, desired, app
}

// BenchmarkExplainArgoCDLongList runs explain -f on an object Argo CD
// applied client-side with 10k and 100k env items: the three-way diff
// (argocd/smpatch), normalization and attribution. Time and bytes per
// item must stay flat.
func BenchmarkExplainArgoCDLongList(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			live, desired, app := argoLongList(b, n)
			b.ReportAllocs()
			for b.Loop() {
				if code, _, errOut := runCommandTo(b, io.Discard, "explain", "--engine", "argocd", "--live-file", live, "-f", desired, "-f", app, "-o", "json"); code != ExitDrift {
					b.Fatalf("exit %d: %s", code, errOut)
				}
			}
		})
	}
}
