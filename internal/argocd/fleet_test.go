package argocd

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/engine"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
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

// spokeObject is a ConfigMap on the spoke whose tracking id names app.
func spokeObject(name, app string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": "shop",
			"annotations": map[string]any{AnnotationTrackingID: app + ":/ConfigMap:shop/" + name}},
	}}
}

// hubFixture is a hub with cluster Secrets and Applications of every kind
// of destination, seen from spoke-a.
func hubFixture(t *testing.T) (*Adapter, *engine.Remote) {
	t.Helper()
	rm := &engine.Remote{
		EngineContext: "hub", EngineServer: "https://hub:6443",
		LiveContext: "spoke-a", LiveServer: "https://spoke-a:6443",
		Contexts: map[string][]string{"https://hub:6443": {"hub"}, "https://spoke-a:6443": {"spoke-a", "spoke-a-admin"}, "https://spoke-b:6443": {"spoke-b"}},
	}
	objs := []*unstructured.Unstructured{
		clusterSecretObj("cluster-spoke-a", "spoke-a", "https://spoke-a:6443"),
		clusterSecretObj("cluster-spoke-b", "spoke-b", "https://spoke-b:6443"),
		clusterSecretObj("cluster-spoke-b-again", "spoke-b-2", "https://spoke-b:6443/"),
		clusterSecretObj("cluster-old", "old", "https://gone:6443"),
		clusterSecretObj("cluster-twin-1", "twin", "https://twin-1:6443"),
		clusterSecretObj("cluster-twin-2", "twin", "https://twin-2:6443"),
		hubApp("by-server", map[string]any{"server": "https://spoke-a:6443/", "namespace": "shop"}),
		hubApp("by-name", map[string]any{"name": "spoke-a", "namespace": "shop"}),
		hubApp("other-spoke", map[string]any{"name": "spoke-b", "namespace": "shop"}),
		hubApp("elsewhere", map[string]any{"name": "old", "namespace": "shop"}),
		hubApp("in-hub", map[string]any{"server": InClusterServer, "namespace": "shop"}),
		hubApp("in-hub-by-name", map[string]any{"name": InClusterName, "namespace": "shop"}),
		hubApp("unknown-name", map[string]any{"name": "nope", "namespace": "shop"}),
		hubApp("twin-name", map[string]any{"name": "twin", "namespace": "shop"}),
		hubApp("both", map[string]any{"name": "spoke-a", "server": "https://spoke-a:6443", "namespace": "shop"}),
	}
	r := &testutil.Reader{Allowed: map[string]bool{"argocd": true}, Objects: objs}
	a, err := New(Options{Reader: r})
	if err != nil {
		t.Fatal(err)
	}
	a.Load(context.Background())
	return a, rm
}

func noteReasons(t *testing.T, notes []model.Note) map[string]int {
	t.Helper()
	reasons := map[string]int{}
	for _, n := range notes {
		reasons[n.Reason]++
		if strings.Contains(n.Message, "s3cr3t") || strings.Contains(n.Message, "\n") {
			t.Errorf("note %q: one line, no Secret value", n.Message)
		}
	}
	return reasons
}

func TestRemoteFleetNotes(t *testing.T) {
	a, rm := hubFixture(t)
	notes := a.setRemote(context.Background(), rm)
	reasons := noteReasons(t, notes)
	// One line each: cluster-old and the twins register servers no context
	// points at; spoke-b is registered twice; two contexts for spoke-a.
	want := map[string]int{"cluster-secret-no-context": 3, "duplicate-cluster-secrets": 1, "same-server-contexts": 1}
	for r, n := range want {
		if reasons[r] != n {
			t.Errorf("%d %s notes, want %d: %+v", reasons[r], r, n, notes)
		}
	}
	for _, n := range notes {
		if n.Reason == "duplicate-cluster-secrets" && !(strings.Contains(n.Message, "argocd/cluster-spoke-b, argocd/cluster-spoke-b-again") && strings.Contains(n.Message, "https://spoke-b:6443")) {
			t.Errorf("duplicate line does not name both Secrets and the server: %s", n.Message)
		}
	}
}

func TestRemoteNotesMatchDestination(t *testing.T) {
	for _, tt := range []struct {
		app, wantReason, wantServer, wantIn string
		owned                               bool
	}{
		{"by-server", "hub-application", "https://spoke-a:6443", "destination.server", true},
		{"by-name", "hub-application", "https://spoke-a:6443", "cluster Secret argocd/cluster-spoke-a", true},
		{"other-spoke", "destination-mismatch", "", "https://spoke-b:6443", false},
		{"elsewhere", "destination-mismatch", "", "https://gone:6443", false},
		{"in-hub", "destination-mismatch", "", InClusterServer, false},
		{"in-hub-by-name", "destination-mismatch", "", InClusterServer, false},
		{"unknown-name", "destination-unresolved", "", `"nope" matches no cluster Secret on hub`, true},
		{"twin-name", "destination-unresolved", "", "2 cluster Secrets (argocd/cluster-twin-1, argocd/cluster-twin-2)", true},
		{"both", "destination-unresolved", "", "both name", true},
	} {
		t.Run(tt.app, func(t *testing.T) {
			a, rm := hubFixture(t)
			a.setRemote(context.Background(), rm)
			obj := spokeObject("cm", tt.app)
			checkPlacement(t, a, obj, tt.app, tt.wantServer, tt.wantReason, tt.wantIn, tt.owned)
		})
	}
}

// checkPlacement checks what explain says of obj, whose tracking id names
// Application argocd/app: the destination server as Argo CD knows it, one
// note of reason saying wantIn ("" for no note), and whether the
// Application owns obj.
func checkPlacement(t *testing.T, a *Adapter, obj *unstructured.Unstructured, app, wantServer, reason, wantIn string, owned bool) {
	t.Helper()
	server, notes := remoteNotes(context.Background(), a, obj)
	if server != wantServer {
		t.Errorf("server = %q, want %q", server, wantServer)
	}
	reasons := noteReasons(t, notes)
	switch {
	case reason == "" && len(notes) != 0:
		t.Errorf("notes %+v, want none (deploys here)", notes)
	case reason == "":
	case reasons[reason] != 1 || len(notes) != 1:
		t.Fatalf("notes = %+v, want one %s", notes, reason)
	case !strings.Contains(notes[0].Message, wantIn) || !strings.Contains(notes[0].Message, "argocd/"+app):
		t.Errorf("note %q does not say %q of argocd/%s", notes[0].Message, wantIn, app)
	case notes[0].AboutObject != (reason == "destination-mismatch"):
		// Only the mismatch is about the object itself (kept under
		// --engine auto, where the Application is no owner).
		t.Errorf("%s: AboutObject = %v", reason, notes[0].AboutObject)
	}
	if o := a.Owner(obj); (o != nil) != owned {
		t.Errorf("Owner = %+v, owned want %v", o, owned)
	}
}

// TestRemoteOwnerPerObject: what scan sees. Each object is owned by its
// Application only when the Application deploys to the scanned cluster;
// the others are one warning line per Application after the scan.
func TestRemoteOwnerPerObject(t *testing.T) {
	a, rm := hubFixture(t)
	// Without --engine-context every tracking id is its Application's.
	if o := a.Owner(spokeObject("a", "in-hub")); o == nil || !o.Found {
		t.Fatalf("same-cluster Owner = %+v, want in-hub", o)
	}
	a.setRemote(context.Background(), rm)
	objs := map[string]string{
		"a": "by-server", "b": "by-name", "c": "in-hub", "d": "in-hub", "e": "other-spoke",
		"f": "unknown-name", "g": "not-an-app",
	}
	owned := map[string]bool{}
	// Each object asked twice (the scan's first pass, then Judge): counted once.
	for name, app := range objs {
		a.Owner(spokeObject(name, app))
	}
	for name, app := range objs {
		if o := a.Owner(spokeObject(name, app)); o != nil {
			owned[name] = true
			if o.Name != app {
				t.Errorf("%s: owner %s, want %s", name, o.Name, app)
			}
		}
	}
	want := map[string]bool{"a": true, "b": true, "f": true, "g": true}
	if len(owned) != len(want) {
		t.Errorf("owned %v, want %v", owned, want)
	}
	for n := range want {
		if !owned[n] {
			t.Errorf("%s (Application %s) not owned", n, objs[n])
		}
	}
	warnings := a.OwnerWarnings()
	wantLines := []string{
		"Application argocd/in-hub on hub deploys to " + InClusterServer + " (destination.server, the hub https://hub:6443), not to spoke-a: 2 object(s) there carry its tracking id and are not owned by it",
		`Application argocd/other-spoke on hub deploys to https://spoke-b:6443 (destination.name "spoke-b" (cluster Secret argocd/cluster-spoke-b)), not to spoke-a: 1 object(s)`,
		`Application argocd/unknown-name on hub: destination.name "nope" matches no cluster Secret on hub: whether it deploys to spoke-a is unknown; its 1 object(s) there are judged with its rules`,
	}
	if len(warnings) != len(wantLines) {
		t.Fatalf("warnings:\n%s\nwant %d lines", strings.Join(warnings, "\n"), len(wantLines))
	}
	for i, w := range wantLines {
		if !strings.HasPrefix(warnings[i], w) {
			t.Errorf("warning %d:\n%s\nwant prefix\n%s", i, warnings[i], w)
		}
	}
}

// TestRemoteHubScanned: scanning the hub itself with --engine-context
// hub: the in-cluster Applications are its own, the spokes' are not.
func TestRemoteHubScanned(t *testing.T) {
	a, rm := hubFixture(t)
	rm.LiveContext, rm.LiveServer = "hub", "https://hub:6443"
	a.setRemote(context.Background(), rm)
	if o := a.Owner(spokeObject("a", "in-hub")); o == nil {
		t.Error("on the hub the in-cluster Application owns nothing")
	}
	if o := a.Owner(spokeObject("b", "by-name")); o != nil {
		t.Errorf("on the hub spoke-a's Application owns %+v", o)
	}
}
