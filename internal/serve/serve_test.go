package serve

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/kubectl-drift/kubectl-drift/internal/fight"
	"github.com/kubectl-drift/kubectl-drift/internal/flux"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/scan"
)

var (
	cmKind = scan.Kind{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"},
		GVK: schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, Namespaced: true}
	t0 = time.Date(2026, 12, 3, 7, 0, 0, 0, time.UTC)
)

// configMap is a Flux-owned ConfigMap whose data.level is owned by manager
// (kustomize-controller, or another manager that wrote it after the
// engine's apply of the labels and data.other).
func configMap(name, uid, level, manager string, at time.Time) *unstructured.Unstructured {
	return ownedConfigMap(map[string]any{"name": name, "namespace": "shop", "uid": uid, "resourceVersion": "1",
		"labels": map[string]any{"kustomize.toolkit.fluxcd.io/name": "apps", "kustomize.toolkit.fluxcd.io/namespace": "shop"}},
		`{"f:labels":{"f:kustomize.toolkit.fluxcd.io/name":{},"f:kustomize.toolkit.fluxcd.io/namespace":{}}}`,
		"kustomize-controller", manager, level, at)
}

// ownedConfigMap is a ConfigMap with metadata meta that engineManager
// applied at time at (the owner marks, whose fields are markFields, and
// data.other) and whose data.level manager owns: engineManager itself, or
// another manager that wrote it after the engine's apply (it drifts).
func ownedConfigMap(meta map[string]any, markFields, engineManager, manager, level string, at time.Time) *unstructured.Unstructured {
	engineFields := `{"f:metadata":` + markFields + `,"f:data":{"f:other":{}}}`
	entries := []metav1.ManagedFieldsEntry{}
	if manager == engineManager {
		engineFields = `{"f:metadata":` + markFields + `,"f:data":{"f:other":{},"f:level":{}}}`
	} else {
		entries = append(entries, metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1",
			Time: &metav1.Time{Time: at}, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:data":{"f:level":{}}}`)})
	}
	entries = append(entries, metav1.ManagedFieldsEntry{Manager: engineManager, Operation: metav1.ManagedFieldsOperationApply, APIVersion: "v1",
		Time: &metav1.Time{Time: at}, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(engineFields)})
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": meta,
		"data":     map[string]any{"level": level, "other": "x"},
	}}
	u.SetManagedFields(entries)
	return u
}

func unowned(name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": "shop", "uid": "u-" + name,
			"annotations": map[string]any{"big": strings.Repeat("x", 1000)}},
		"data": map[string]any{"blob": strings.Repeat("y", 1000)},
	}}
}

type fixture struct {
	srv    *Server
	client *dynamicfake.FakeDynamicClient
	addr   string
	clock  *time.Time
}

func newFixture(t testing.TB, objs ...k8sruntime.Object) *fixture {
	t.Helper()
	return newFixtureWith(t, func(r model.Reader) (model.Adapter, error) { return flux.New(flux.Options{Reader: r}) }, objs...)
}

// newFixtureWith is newFixture with the engine adapter of newAdapter,
// reading through serve's owner cache as `serve` does.
func newFixtureWith(t testing.TB, newAdapter func(model.Reader) (model.Adapter, error), objs ...k8sruntime.Object) *fixture {
	t.Helper()
	return newFixtureOwners(t, nil, newAdapter, objs...)
}

// newFixtureOwners is newFixtureWith with the owner kinds the owner cache
// watches, whose changes reach the adapter (Pipeline.Follow).
func newFixtureOwners(t testing.TB, ownerKinds []scan.Kind, newAdapter func(model.Reader) (model.Adapter, error), objs ...k8sruntime.Object) *fixture {
	t.Helper()
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(k8sruntime.NewScheme(),
		map[schema.GroupVersionResource]string{
			cmKind.GVR: "ConfigMapList",
			{Group: "kustomize.toolkit.fluxcd.io", Version: "v1", Resource: "kustomizations"}: "KustomizationList",
			{Group: "argoproj.io", Version: "v1alpha1", Resource: "applications"}:             "ApplicationList",
		},
		objs...)
	owners := NewOwnerCache(client, ownerKinds)
	// As the CLI: the pipeline over the engine's adapter, rebuilt when
	// the settings it read change.
	pipeline := func() (Pipeline, error) {
		a, err := newAdapter(owners)
		if err != nil {
			return Pipeline{}, err
		}
		in := &scan.Inspector{Adapters: []model.Adapter{a}}
		return Pipeline{
			Explain: in.ExplainObject,
			Owned: func(k scan.Kind, obj *unstructured.Unstructured) bool {
				_, owned := in.PrecheckObject(k, obj)
				return owned
			},
			Culprit: in.Culprit,
			Precheck: func(k scan.Kind, raw []byte) (bool, error) {
				cand, _, err := in.Precheck(k, raw)
				return cand != nil, err
			},
			Follow:  in.UpdateOwner,
			Touches: in.Touches,
		}, nil
	}
	p, err := pipeline()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	clock := t0
	srv, err := New(Options{
		Client: client, Kinds: []scan.Kind{cmKind}, Owners: owners, Namespace: "shop",
		Explain:  p.Explain,
		Owned:    p.Owned,
		Culprit:  p.Culprit,
		Precheck: p.Precheck,
		Follow:   p.Follow,
		Touches:  p.Touches,
		Reload:   func(context.Context) (Pipeline, error) { return pipeline() },
		Fight:    fight.Config{},
		Listener: ln,
		Now:      func() time.Time { return clock },
	})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{srv: srv, client: client, addr: ln.Addr().String(), clock: &clock}
}

// TestObserveFight feeds the pipeline the writes of a fight and of a
// one-off edit reverted once, as the informer would deliver them.
func TestObserveFight(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	step := func(obj *unstructured.Unstructured) {
		*f.clock = f.clock.Add(30 * time.Second)
		f.srv.Observe(ctx, cmKind, obj)
	}
	// One-off: engine, kubectl-edit, engine.
	step(configMap("oneoff", "u1", "info", "kustomize-controller", *f.clock))
	step(configMap("oneoff", "u1", "debug", "kubectl-edit", *f.clock))
	step(configMap("oneoff", "u1", "info", "kustomize-controller", *f.clock))
	// Fight: engine, script, engine, script.
	step(configMap("fight", "u2", "info", "kustomize-controller", *f.clock))
	step(configMap("fight", "u2", "5", "hpa-script", *f.clock))
	step(configMap("fight", "u2", "info", "kustomize-controller", *f.clock))
	step(configMap("fight", "u2", "6", "hpa-script", *f.clock))
	// Resyncs of the same state change nothing.
	step(configMap("fight", "u2", "6", "hpa-script", *f.clock))

	fs := f.srv.Detector().Fights(*f.clock)
	if len(fs) != 1 {
		t.Fatalf("fights: %+v, want one (on u2)", fs)
	}
	got := fmt.Sprintf("%s %s %s=%s %s=%s flips=%d", fs[0].Object.Name, fs[0].Field, fs[0].EngineManager, fs[0].EngineValue, fs[0].Manager, fs[0].Value, fs[0].Flips)
	if want := `fight /data/level kustomize-controller="info" hpa-script="6" flips=3`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	fams, err := f.srv.gather()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, fam := range fams {
		names = append(names, fam.GetName())
		if fam.GetName() == MetricFights {
			if len(fam.Metric) != 1 {
				t.Errorf("fight series: %v", fam.Metric)
			}
			for _, l := range fam.Metric[0].Label {
				if l.GetName() == "name" {
					t.Error("name label without FightNames")
				}
			}
		}
	}
	for _, want := range []string{MetricFights, MetricFightFlips, scan.MetricFields, scan.MetricObjects, scan.MetricScanKinds} {
		if !strings.Contains(strings.Join(names, " "), want) {
			t.Errorf("family %s missing from %v", want, names)
		}
	}
}

// TestServeHTTPAndTransform runs the informers over a fake API: /readyz
// turns ready, /metrics carries scan's and serve's families, the cache
// keeps only metadata of an unowned object and drops status of owned ones,
// and a deleted object leaves the metrics.
func TestServeHTTPAndTransform(t *testing.T) {
	owned := configMap("drifted", "u1", "debug", "kubectl-edit", t0)
	owned.Object["status"] = map[string]any{"x": "y"}
	f := newFixture(t, owned, unowned("plain"))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.srv.Run(ctx) }()
	get := func(path string) (int, string) {
		resp, err := http.Get("http://" + f.addr + path)
		if err != nil {
			return 0, err.Error()
		}
		defer func() { _ = resp.Body.Close() }()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, _ := get("/readyz")
		_, m := get("/metrics")
		if code == 200 && strings.Contains(m, `kubectl_drift_objects{engine="flux",kind="ConfigMap",namespace="shop"} 1`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not ready with drift within 10s:\n%s", m)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if code, _ := get("/healthz"); code != 200 {
		t.Errorf("/healthz %d", code)
	}
	if code, _ := get("/debug/pprof/"); code != 404 {
		t.Errorf("/debug/pprof/ served without Pprof: %d", code)
	}
	// GET and HEAD only, as exporters answer (issue 29).
	for _, path := range []string{"/metrics", "/healthz", "/readyz"} {
		for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch} {
			req, _ := http.NewRequest(method, "http://"+f.addr+path, strings.NewReader("x"))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "GET, HEAD" {
				t.Errorf("%s %s: %d, Allow %q; want 405, GET, HEAD", method, path, resp.StatusCode, resp.Header.Get("Allow"))
			}
		}
		resp, err := http.Head("http://" + f.addr + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK || len(b) != 0 {
			t.Errorf("HEAD %s: %d with %d bytes of body", path, resp.StatusCode, len(b))
		}
	}
	store := f.srv.informer[0].GetStore()
	plain, ok, _ := store.GetByKey("shop/plain")
	if !ok {
		t.Fatal("unowned object not cached")
	}
	if u := decoded(t, plain); u.Object["data"] != nil || len(u.GetAnnotations()) != 0 || u.GetName() != "plain" {
		t.Errorf("unowned object kept more than metadata: %v", u.Object)
	}
	dr, _, _ := store.GetByKey("shop/drifted")
	if u := decoded(t, dr); u.Object["status"] != nil || u.Object["data"] == nil || len(u.GetManagedFields()) == 0 {
		t.Errorf("owned object: status kept or data/managedFields lost: %v", u.Object)
	}
	if _, m := get("/metrics"); !strings.Contains(m, "kubectl_drift_owned_objects 1") || !strings.Contains(m, "kubectl_drift_scan_objects 2") {
		t.Errorf("object counts wrong:\n%s", m)
	}
	if err := f.client.Resource(cmKind.GVR).Namespace("shop").Delete(ctx, "drifted", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(10 * time.Second)
	for {
		_, m := get("/metrics")
		if !strings.Contains(m, "kubectl_drift_objects{") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("deleted object still drifted:\n%s", m)
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	if code, _ := get("/healthz"); code != 0 {
		t.Errorf("metrics still served after shutdown")
	}
}

// BenchmarkObserve measures objects re-explained per second by the full
// pipeline (ownership, managedFields inference, Flux judging, fight
// detector), one event per iteration alternating the writer of a field over
// N objects.
func BenchmarkObserve(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			f := newFixture(b)
			objs := make([][2]*unstructured.Unstructured, n)
			for i := range objs {
				name, uid := fmt.Sprint("cm", i), fmt.Sprint("u", i)
				objs[i] = [2]*unstructured.Unstructured{configMap(name, uid, "info", "kustomize-controller", t0), configMap(name, uid, "debug", "kubectl-edit", t0)}
			}
			ctx := context.Background()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				o := objs[i%n][(i/n)%2]
				f.srv.Observe(ctx, cmKind, o)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// BenchmarkCacheMemory measures the heap the informer cache and serve's
// state hold for N owned objects (one drifted field each) plus N unowned
// ones, after the transform: runtime.MemStats.HeapAlloc after GC, minus
// the same before the informers started. Process RSS is this plus the Go
// runtime and binary (measured separately; see the report).
func BenchmarkCacheMemory(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				objs := make([]k8sruntime.Object, 0, 2*n)
				for j := 0; j < n; j++ {
					objs = append(objs, configMap(fmt.Sprint("cm", j), fmt.Sprint("u", j), "debug", "kubectl-edit", t0), unowned(fmt.Sprint("plain", j)))
				}
				f := newFixture(b, objs...)
				runtime.GC()
				var before runtime.MemStats
				runtime.ReadMemStats(&before)
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan error, 1)
				go func() { done <- f.srv.Run(ctx) }()
				for f.srv.queue.Len() > 0 || !f.srv.Ready() {
					time.Sleep(10 * time.Millisecond)
				}
				runtime.GC()
				var after runtime.MemStats
				runtime.ReadMemStats(&after)
				b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "MB-heap")
				cancel()
				if err := <-done; err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

var ksGVR = schema.GroupVersionResource{Group: "kustomize.toolkit.fluxcd.io", Version: "v1", Resource: "kustomizations"}

func kustomization(handled time.Time) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
		"metadata": map[string]any{"name": "apps", "namespace": "shop", "uid": "ks"},
		"spec":     map[string]any{"interval": "10m", "path": "./app", "prune": true, "sourceRef": map[string]any{"kind": "GitRepository", "name": "repo"}},
		"status":   map[string]any{"lastHandledReconcileAt": handled.Format(time.RFC3339Nano)},
	}}
}

// TestPersistedReconciles counts the owner's reconciles that a drift
// survived: none before the write, one per new reconcile time after it,
// and a new write by the culprit starts over.
func TestPersistedReconciles(t *testing.T) {
	f := newFixture(t, kustomization(t0.Add(-time.Hour)))
	ctx := context.Background()
	write := t0
	setReconciled := func(at time.Time) {
		if _, err := f.client.Resource(ksGVR).Namespace("shop").Update(ctx, kustomization(at), metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	persisted := func() int {
		t.Helper()
		*f.clock = f.clock.Add(time.Minute)
		f.srv.Observe(ctx, cmKind, configMap("cm", "u1", "debug", "kubectl-edit", write))
		f.srv.mu.Lock()
		defer f.srv.mu.Unlock()
		rep := f.srv.reports["u1"]
		if rep == nil || len(rep.Drifts) != 1 {
			t.Fatalf("report: %+v", rep)
		}
		return rep.Drifts[0].PersistedReconciles
	}
	steps := []struct {
		reconciled time.Time
		newWrite   bool
		want       int
	}{
		{reconciled: t0.Add(-time.Hour), want: 0},
		{reconciled: t0.Add(300 * time.Millisecond), want: 0}, // same second as the write
		{reconciled: t0.Add(5 * time.Minute), want: 1},
		{reconciled: t0.Add(5 * time.Minute), want: 1}, // the same reconcile seen again
		{reconciled: t0.Add(10 * time.Minute), want: 2},
		{reconciled: t0.Add(10 * time.Minute), newWrite: true, want: 0},
		{reconciled: t0.Add(20 * time.Minute), want: 1},
	}
	for i, st := range steps {
		setReconciled(st.reconciled)
		if st.newWrite {
			write = t0.Add(15 * time.Minute)
		}
		if got := persisted(); got != st.want {
			t.Errorf("step %d: persisted reconciles %d, want %d", i, got, st.want)
		}
	}
	fams, err := f.srv.gather()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, fam := range fams {
		if fam.GetName() == MetricPersisted {
			found = len(fam.Metric) == 1 && fam.Metric[0].GetGauge().GetValue() == 1
		}
	}
	if !found {
		t.Errorf("%s not exposed with one field", MetricPersisted)
	}
}

// BenchmarkTransform measures the informers' transform on one object as
// a LIST or WATCH hands it over: unowned (kept as metadata only, most of
// a cluster) and owned (kept without status, interned). Run with
// -benchmem: allocs/op is what the informer pays per object and event.
func BenchmarkTransform(b *testing.B) {
	f := newFixture(b)
	tf := f.srv.transform(cmKind)
	for _, c := range []struct {
		name string
		obj  *unstructured.Unstructured
	}{
		{"unowned", unowned("plain")},
		{"owned", configMap("drifted", "u1", "debug", "kubectl-edit", t0)},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := tf(c.obj); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestTransformReadsOnly: the transform leaves the object it is given as
// it was (others may hold it: client-go's fake tracker does), with or
// without apiVersion and kind, and returns the kind's GVK, metadata only
// for an unowned object and everything but status for an owned one.
func TestTransformReadsOnly(t *testing.T) {
	tf := newFixture(t).srv.transform(cmKind)
	noKind := configMap("nokind", "u2", "debug", "kubectl-edit", t0)
	delete(noKind.Object, "apiVersion")
	delete(noKind.Object, "kind")
	owned := configMap("drifted", "u1", "debug", "kubectl-edit", t0)
	owned.Object["status"] = map[string]any{"x": "y"}
	for _, c := range []struct {
		in    *unstructured.Unstructured
		owned bool
	}{{unowned("plain"), false}, {owned, true}, {noKind, true}} {
		before := c.in.DeepCopy()
		got, err := tf(c.in)
		if err != nil {
			t.Fatal(err)
		}
		if !equality.Semantic.DeepEqual(before.Object, c.in.Object) {
			t.Errorf("%s: input written:\n%v\nwas\n%v", before.GetName(), c.in.Object, before.Object)
		}
		if again, _ := tf(got); again != got {
			t.Errorf("%s: transform not idempotent", before.GetName())
		}
		u := decoded(t, got)
		if u.GroupVersionKind() != cmKind.GVK || u.GetName() != before.GetName() || u.GetUID() != before.GetUID() {
			t.Errorf("%s: kept %v", before.GetName(), u.Object)
		}
		if owned := u.Object["data"] != nil && len(u.GetManagedFields()) > 0; owned != c.owned || u.Object["status"] != nil {
			t.Errorf("%s: owned %v, kept %v", before.GetName(), c.owned, u.Object)
		}
		if !c.owned && len(u.Object["metadata"].(map[string]any)) != 4-1 { // no resourceVersion in unowned()
			t.Errorf("%s: metadata kept %v", before.GetName(), u.Object["metadata"])
		}
	}
}

// TestDropManagedFieldsReadsOnly: the owner informers' transform drops
// managedFields and keeps status, from a copy: the input stays whole.
func TestDropManagedFieldsReadsOnly(t *testing.T) {
	in := kustomization(t0)
	in.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "kustomize-controller", Operation: metav1.ManagedFieldsOperationApply}})
	before := in.DeepCopy()
	got, err := dropManagedFields(in)
	if err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(before.Object, in.Object) {
		t.Errorf("input written:\n%v\nwas\n%v", in.Object, before.Object)
	}
	u := got.(*unstructured.Unstructured)
	if len(u.GetManagedFields()) != 0 || u.Object["status"] == nil || u.GetName() != "apps" {
		t.Errorf("kept %v", u.Object)
	}
}

// decoded is the object a cached entry decodes to for the configmaps kind.
func decoded(t testing.TB, obj any) *unstructured.Unstructured {
	t.Helper()
	e, ok := obj.(*entry)
	if !ok {
		t.Fatalf("cached %T, want *entry", obj)
	}
	u, err := e.object(cmKind)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// BenchmarkGather measures one scrape's state-derived families (gather)
// with N drifted objects held, 13.5% of a 100k-object cluster in
// hack/bench-serve.sh's load: what every Prometheus scrape costs serve,
// and what the bench's 1 s polls cost during a sync.
func BenchmarkGather(b *testing.B) {
	for _, n := range []int{1350, 13500} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			f := newFixture(b)
			ctx := context.Background()
			for i := range n {
				f.srv.Observe(ctx, cmKind, configMap(fmt.Sprint("cm", i), fmt.Sprint("u", i), "debug", "kubectl-edit", t0))
			}
			if len(f.srv.reports) != n {
				b.Fatalf("%d reports held, want %d", len(f.srv.reports), n)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := f.srv.gather(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
