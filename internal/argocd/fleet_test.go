package argocd

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/engine"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

func clusterSecretObj(name, clusterName, server string) *unstructured.Unstructured {
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": name, "namespace": "argocd", "labels": map[string]any{ClusterSecretLabel: ClusterSecretType}},
		"data":     map[string]any{"name": b64(clusterName), "server": b64(server), "config": b64(`{"bearerToken":"s3cr3t"}`)},
	}}
}

func hubApp(name string, dest map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
		"metadata": map[string]any{"name": name, "namespace": "argocd"},
		"spec":     map[string]any{"destination": dest},
	}}
}

func TestRemoteNotesMatchDestination(t *testing.T) {
	rm := &engine.Remote{
		EngineContext: "hub", EngineServer: "https://hub:6443",
		LiveContext: "spoke-a", LiveServer: "https://spoke-a:6443",
		Contexts: map[string][]string{"https://hub:6443": {"hub"}, "https://spoke-a:6443": {"spoke-a", "spoke-a-admin"}},
	}
	objs := []*unstructured.Unstructured{
		clusterSecretObj("cluster-spoke-a", "spoke-a", "https://spoke-a:6443"),
		clusterSecretObj("cluster-old", "old", "https://gone:6443"),
		hubApp("by-server", map[string]any{"server": "https://spoke-a:6443/", "namespace": "shop"}),
		hubApp("by-name", map[string]any{"name": "spoke-a", "namespace": "shop"}),
		hubApp("elsewhere", map[string]any{"name": "old", "namespace": "shop"}),
		hubApp("in-hub", map[string]any{"server": InClusterServer, "namespace": "shop"}),
		hubApp("unknown-name", map[string]any{"name": "nope", "namespace": "shop"}),
	}
	for _, tt := range []struct {
		app, wantReason, wantServer string
	}{
		{"by-server", "hub-application", "https://spoke-a:6443"},
		{"by-name", "hub-application", "https://spoke-a:6443"},
		{"elsewhere", "destination-mismatch", "https://gone:6443"},
		{"in-hub", "destination-mismatch", InClusterServer},
		{"unknown-name", "destination-unresolved", ""},
	} {
		t.Run(tt.app, func(t *testing.T) {
			r := &namespacedReader{allowed: map[string]bool{"argocd": true}, objects: objs}
			a, err := New(Options{Reader: r})
			if err != nil {
				t.Fatal(err)
			}
			a.Load(context.Background())
			owner := &model.Owner{Engine: model.EngineArgoCD, Kind: "Application", Namespace: "argocd", Name: tt.app}
			server, notes := remoteNotes(context.Background(), a, owner, rm)
			if server != tt.wantServer {
				t.Errorf("server = %q, want %q", server, tt.wantServer)
			}
			reasons := map[string]int{}
			for _, n := range notes {
				reasons[n.Reason]++
				if strings.Contains(n.Message, "s3cr3t") || strings.Contains(n.Message, "\n") {
					t.Errorf("note %q: one line, no Secret value", n.Message)
				}
			}
			if reasons[tt.wantReason] != 1 {
				t.Errorf("notes = %+v, want one %s", notes, tt.wantReason)
			}
			// The same problems of the fleet, one line each, whatever the app.
			if reasons["cluster-secret-no-context"] != 1 || reasons["same-server-contexts"] != 1 {
				t.Errorf("notes = %+v, want one cluster-secret-no-context (cluster-old) and one same-server-contexts (spoke-a)", notes)
			}
		})
	}
}
