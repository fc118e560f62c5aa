package serve

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/kubectl-drift/kubectl-drift/internal/argocd"
	"github.com/kubectl-drift/kubectl-drift/internal/fight"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
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
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(k8sruntime.NewScheme(),
		map[schema.GroupVersionResource]string{cmKind.GVR: "ConfigMapList", appKind.GVR: "ApplicationList"},
		appWithStatus("Synced"), argoConfigMap("cm0", "info", "argocd-controller"), argoConfigMap("cm1", "info", "argocd-controller"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	owners := NewOwnerCache(client, []scan.Kind{appKind})
	a, err := argocd.New(argocd.Options{Reader: owners, Inventory: true})
	if err != nil {
		t.Fatal(err)
	}
	a.Load(ctx) // before Run, as the CLI's adapters: a direct LIST
	in := &scan.Inspector{Adapters: []model.Adapter{a}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Options{
		Client: client, Kinds: []scan.Kind{cmKind}, Owners: owners, Namespace: "shop",
		Explain: in.ExplainObject,
		Owned: func(k scan.Kind, obj *unstructured.Unstructured) bool {
			_, owned := in.PrecheckObject(k, obj)
			return owned
		},
		Culprit:  in.Culprit,
		Follow:   in.UpdateOwner,
		Touches:  in.Touches,
		Fight:    fight.Config{},
		Listener: ln,
	})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	addr := ln.Addr().String()
	const drifted = `kubectl_drift_objects{engine="argocd",kind="ConfigMap",namespace="shop"} 1`
	waitFor := func(what string, ok func(string) bool) {
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
