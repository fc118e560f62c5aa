package serve

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-drift/kubectl-drift/internal/scan"
)

var appKind = scan.Kind{GVR: schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "applications"},
	GVK: schema.GroupVersionKind{Group: "argoproj.io", Version: "v1alpha1", Kind: "Application"}, Namespaced: true}

// appWithStatus is shop-app recording cm0's sync status.
func appWithStatus(status string) *unstructured.Unstructured {
	app := argoApplication()
	app.Object["status"] = map[string]any{"resources": []any{map[string]any{
		"version": "v1", "kind": "ConfigMap", "namespace": "shop", "name": "cm0", "status": status}}}
	return app
}

// TestApplicationStatusFollowed: serve judges with the Applications its
// owner cache watches, as the CLI wires it (Follow, Touches). cm0 equals
// Argo CD's last sync (only argocd-controller wrote it), so only shop-app's
// recorded status can make it drift: a commit not synced yet makes it
// OutOfSync, a sync makes it Synced. The verdict follows each change of
// the Application without a restart or a resync.
func TestApplicationStatusFollowed(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f, done := newArgoFixtureOwners(t, ctx, []scan.Kind{appKind},
		appWithStatus("Synced"), argoConfigMap("cm0", "info", "argocd-controller"), argoConfigMap("cm1", "info", "argocd-controller"))
	srv, client, addr := f.srv, f.client, f.addr
	const drifted = `kubectl_drift_objects{engine="argocd",kind="ConfigMap",namespace="shop"} 1`
	waitFor := func(what string, ok func(string) bool) {
		t.Helper()
		waitMetrics(t, addr, what, ok)
	}
	for deadline := time.Now().Add(10 * time.Second); !srv.Ready(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("informers not synced within 10s")
		}
	}
	waitFor("both objects judged", func(m string) bool {
		return strings.Contains(m, "kubectl_drift_owned_objects 2") && strings.Contains(m, MetricEvents+`{kind="ConfigMap"} 2`)
	})
	if m := get(addr, "/metrics"); strings.Contains(m, "kubectl_drift_objects{") {
		t.Fatalf("drift while shop-app records cm0 Synced:\n%s", m)
	}
	setStatus := func(status string) {
		t.Helper()
		if _, err := client.Resource(appKind.GVR).Namespace("argocd").Update(ctx, appWithStatus(status), metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		setStatus("OutOfSync")
		waitFor("cm0 OutOfSync after the commit", func(m string) bool { return strings.Contains(m, drifted) })
		setStatus("Synced")
		waitFor("cm0 Synced after the sync", func(m string) bool {
			return !strings.Contains(m, "kubectl_drift_objects{") && strings.Contains(m, MetricEvents)
		})
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
}
