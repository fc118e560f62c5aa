package serve

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-drift/kubectl-drift/internal/argocd"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/scan"
)

// argoConfigMap is a ConfigMap Argo CD's Application shop-app tracks
// (annotation tracking, the Argo CD 3 default), applied by argocd-controller,
// with data.level written by manager (another manager than the engine
// makes it drift).
func argoConfigMap(name, level, manager string) *unstructured.Unstructured {
	return ownedConfigMap(map[string]any{"name": name, "namespace": "shop", "uid": "uid-" + name,
		"annotations": map[string]any{"argocd.argoproj.io/tracking-id": "shop-app:/ConfigMap:shop/" + name}},
		`{"f:annotations":{"f:argocd.argoproj.io/tracking-id":{}}}`,
		"argocd-controller", manager, level, t0)
}

func argoApplication() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
		"metadata": map[string]any{"name": "shop-app", "namespace": "argocd", "uid": "uid-app"},
		"spec": map[string]any{
			"destination": map[string]any{"server": "https://kubernetes.default.svc", "namespace": "shop"},
			"source":      map[string]any{"repoURL": "https://example.com/shop.git", "path": "shop"},
			"syncPolicy":  map[string]any{"automated": map[string]any{"selfHeal": true}},
		},
	}}
}

func argoCM(name string, data map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": "argocd", "uid": "uid-" + name},
		"data":     data,
	}}
}

// newArgoFixture is newFixtureWith the Argo CD adapter, loaded when built
// as the CLI's adapters are (argocd-cm is then a settings object serve
// watches), running until the test ends.
func newArgoFixture(t *testing.T, ctx context.Context, objs ...k8sruntime.Object) (*fixture, chan error) {
	t.Helper()
	return newArgoFixtureOwners(t, ctx, nil, objs...)
}

// newArgoFixtureOwners is newArgoFixture with the owner kinds serve's
// owner cache watches.
func newArgoFixtureOwners(t *testing.T, ctx context.Context, ownerKinds []scan.Kind, objs ...k8sruntime.Object) (*fixture, chan error) {
	t.Helper()
	f := newFixtureOwners(t, ownerKinds, func(r model.Reader) (model.Adapter, error) {
		a, err := argocd.New(argocd.Options{Reader: r})
		if err == nil {
			a.Load(ctx)
		}
		return a, err
	}, objs...)
	done := make(chan error, 1)
	go func() { done <- f.srv.Run(ctx) }()
	return f, done
}

// get returns the body of GET http://addr/path, "" on error.
func get(addr, path string) string {
	resp, err := http.Get("http://" + addr + path)
	if err != nil {
		return ""
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// waitMetrics waits up to 10s until serve's /metrics at addr satisfies
// ok, and fails saying what was awaited.
func waitMetrics(t *testing.T, addr, what string, ok func(string) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		m := get(addr, "/metrics")
		if ok(m) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10s:\n%s", what, m)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestScrapeWhileJudgingArgo scrapes /metrics (which asks every adapter's
// Owner of every cached object) over and over while the worker judges Argo
// CD-tracked objects that keep changing, while their Application's recorded
// status changes (the adapter follows it) and while argocd-cm changes (the
// pipeline is rebuilt and swapped): under -race, as the unit tier runs, any
// unsynchronised state between them fails the test. It also checks that
// the drift was judged, so a worker that never ran cannot pass.
func TestScrapeWhileJudgingArgo(t *testing.T) {
	const n = 20
	objs := []k8sruntime.Object{argoApplication(),
		argoCM("argocd-cm", map[string]any{"application.resourceTrackingMethod": "annotation"}),
		argoCM("argocd-cmd-params-cm", map[string]any{"ignore.normalizer.jq.timeout": "2s"})}
	for i := 0; i < n; i++ {
		objs = append(objs, argoConfigMap(fmt.Sprint("cm", i), "info", "argocd-controller"))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The Application is followed too: its status changes each round
	// while scrapes ask the adapter about its objects.
	f, done := newArgoFixtureOwners(t, ctx, []scan.Kind{appKind}, objs...)
	for deadline := time.Now().Add(20 * time.Second); !f.srv.Ready(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("informers not synced within 20s")
		}
	}
	stop := make(chan struct{})
	var scrapes sync.WaitGroup
	for range 2 {
		scrapes.Add(1)
		go func() {
			defer scrapes.Done()
			for {
				select {
				case <-stop:
					return
				default:
					_ = get(f.addr, "/metrics")
				}
			}
		}()
	}
	for round := range 4 {
		// A settings change each round: the pipeline is rebuilt and
		// swapped while scrapes use it.
		if _, err := f.client.Resource(cmKind.GVR).Namespace("argocd").Update(ctx,
			argoCM("argocd-cm", map[string]any{"application.resourceTrackingMethod": "annotation", "round": fmt.Sprint(round)}), metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		status := "OutOfSync"
		if round%2 == 1 {
			status = "Synced"
		}
		if _, err := f.client.Resource(appKind.GVR).Namespace("argocd").Update(ctx, appWithStatus(status), metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < n; i++ {
			o := argoConfigMap(fmt.Sprint("cm", i), "info", "argocd-controller")
			if round%2 == 0 {
				o = argoConfigMap(fmt.Sprint("cm", i), fmt.Sprint("debug", round), "kubectl-edit")
			}
			o.SetResourceVersion("")
			if _, err := f.client.Resource(cmKind.GVR).Namespace("shop").Update(ctx, o, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The last round left every object drifted by kubectl-edit.
	for i := 0; i < n; i++ {
		o := argoConfigMap(fmt.Sprint("cm", i), "trace", "kubectl-edit")
		if _, err := f.client.Resource(cmKind.GVR).Namespace("shop").Update(ctx, o, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	want := fmt.Sprintf(`kubectl_drift_objects{engine="argocd",kind="ConfigMap",namespace="shop"} %d`, n)
	// The settings informer's events race the objects' events through the
	// one queue: the drift can be counted before the first reload is, so
	// both are awaited. The fake client's watch also drops what changes
	// between its list and its watch (the API server would replay it from
	// the resourceVersion), so argocd-cm changes again while no reload is
	// seen: a serve that never reloads still fails.
	reloaded := func(m string) bool {
		return strings.Contains(m, MetricReloads+" ") && !strings.Contains(m, MetricReloads+" 0\n")
	}
	deadline := time.Now().Add(20 * time.Second)
	var m string
	for i := 0; ; i++ {
		if m = get(f.addr, "/metrics"); strings.Contains(m, want) && reloaded(m) {
			break
		}
		if !reloaded(m) && i%25 == 24 {
			if _, err := f.client.Resource(cmKind.GVR).Namespace("argocd").Update(ctx,
				argoCM("argocd-cm", map[string]any{"application.resourceTrackingMethod": "annotation", "round": fmt.Sprint("again", i)}), metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		if time.Now().After(deadline) {
			close(stop)
			scrapes.Wait()
			if !strings.Contains(m, want) {
				t.Fatalf("no %s within 20s:\n%s", want, m)
			}
			t.Fatalf("argocd-cm changed 4 times, no reload within 20s:\n%s", m)
		}
		time.Sleep(20 * time.Millisecond)
	}
	close(stop)
	scrapes.Wait()
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
}

// TestSettingsChangeRejudges: serve reads argocd-cm once at start-up (the
// adapter's Load, before Run), then follows it with an informer; an
// ignoreDifferences rule added to it rebuilds the adapter and re-judges the
// cached objects without a restart: the drifted field is ignored, so the
// object leaves kubectl_drift_objects; removing the rule brings it back.
func TestSettingsChangeRejudges(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f, done := newArgoFixture(t, ctx, argoApplication(), argoCM("argocd-cm", map[string]any{"application.resourceTrackingMethod": "annotation"}),
		argoConfigMap("cm0", "debug", "kubectl-edit"))
	const drifted = `kubectl_drift_objects{engine="argocd",kind="ConfigMap",namespace="shop"} 1`
	waitFor := func(what string, ok func(string) bool) {
		t.Helper()
		waitMetrics(t, f.addr, what, ok)
	}
	waitFor("drift before the rule", func(m string) bool { return strings.Contains(m, drifted) })
	setCM := func(data map[string]any) {
		t.Helper()
		if _, err := f.client.Resource(cmKind.GVR).Namespace("argocd").Update(ctx, argoCM("argocd-cm", data), metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	setCM(map[string]any{"application.resourceTrackingMethod": "annotation",
		"resource.customizations.ignoreDifferences.all": "jsonPointers:\n- /data/level\n"})
	waitFor("the rule ignores the drift", func(m string) bool {
		return strings.Contains(m, MetricReloads+" 1") && !strings.Contains(m, "kubectl_drift_objects{")
	})
	setCM(map[string]any{"application.resourceTrackingMethod": "annotation"})
	waitFor("drift again without the rule", func(m string) bool {
		return strings.Contains(m, MetricReloads+" 2") && strings.Contains(m, drifted)
	})
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
}
