package argocd

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-drift/kubectl-drift/internal/drift"
	"github.com/kubectl-drift/kubectl-drift/internal/engine"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

func TestPlaceLocal(t *testing.T) {
	const self = "https://hub.example.com"
	for _, tt := range []struct {
		name, dest, self string
		want             placement
	}{
		{"in-cluster URL", InClusterServer, self, deploysHere},
		{"in-cluster URL, trailing slash", InClusterServer + "/", self, deploysHere},
		{"the kubeconfig's URL", self, self, deploysHere},
		{"trailing slash", self + "/", self, deploysHere},
		{"https port default", "https://hub.example.com:443", self, deploysHere},
		{"case and trailing dot", "HTTPS://Hub.Example.COM.:443/", self, deploysHere},
		{"rest.Config host without scheme", "https://hub.example.com:6443", "hub.example.com:6443", deploysHere},
		{"the kubernetes Service's full name", "https://kubernetes.default.svc.cluster.local:443", self, deploysHere},
		{"another port", "https://hub.example.com:6443", self, deploysElsewhere},
		{"another host", "https://spoke.example.com", self, deploysElsewhere},
		{"another path (a proxy's clusters)", "https://rancher.example.com/k8s/clusters/c-2", "https://rancher.example.com/k8s/clusters/c-1", deploysElsewhere},
		{"http and https", "http://hub.example.com:443", self, deploysElsewhere},
		{"loopback, another port", "https://127.0.0.1:16473", "https://127.0.0.1:16463", deploysElsewhere},
		{"loopback by name and address", "https://localhost:16463", "https://127.0.0.1:16463", deploysHere},
		{"IPv6 loopback", "https://[::1]:6443", "https://127.0.0.1:6443", deploysHere},
		// One cluster may hide behind both: never "elsewhere".
		{"tunnel: loopback kubeconfig, a host name in Argo CD", "https://hub.example.com:6443", "https://127.0.0.1:6443", unresolved},
		{"node-local address in Argo CD", "https://127.0.0.1:6443", self, unresolved},
		{"IP address against a host name", "https://10.0.0.5:6443", "https://hub.example.com:6443", unresolved},
		{"short host name", "https://hub:443", self, unresolved},
		{"unreadable URL", "https://[bad", self, unresolved},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, why := placeLocal(tt.dest, tt.self)
			if got != tt.want {
				t.Errorf("placeLocal(%q, %q) = %v (%s), want %v", tt.dest, tt.self, got, why, tt.want)
			}
			if got != deploysElsewhere && why == "" {
				t.Errorf("placeLocal(%q, %q): no reason", tt.dest, tt.self)
			}
		})
	}
}

// noSecrets refuses to list Secrets (get/list RBAC on Applications only).
type noSecrets struct{ *testutil.Reader }

func (r noSecrets) List(ctx context.Context, gvk schema.GroupVersionKind, ns, sel string) ([]unstructured.Unstructured, error) {
	if gvk.Kind == "Secret" {
		return (&testutil.Reader{Forbidden: true}).List(ctx, gvk, ns, sel)
	}
	return r.Reader.List(ctx, gvk, ns, sel)
}

// localHub is Argo CD running on the cluster the kubeconfig reaches at
// https://hub.example.com, with the hub registered by name under its
// own URL and a spoke, and Applications of every kind of destination.
func localHub(t *testing.T, secrets bool) *Adapter {
	t.Helper()
	objs := []*unstructured.Unstructured{
		clusterSecretObj("cluster-hub", "hub", "https://hub.example.com:443/"),
		clusterSecretObj("cluster-spoke", "spoke", "https://spoke.example.com:6443"),
		clusterSecretObj("cluster-twin-1", "twin", "https://twin-1:6443"),
		clusterSecretObj("cluster-twin-2", "twin", "https://twin-2:6443"),
		hubApp("in-cluster-name", map[string]any{"name": InClusterName, "namespace": "shop"}),
		hubApp("in-cluster-server", map[string]any{"server": InClusterServer + "/", "namespace": "shop"}),
		hubApp("own-url", map[string]any{"server": "https://HUB.example.com:443/", "namespace": "shop"}),
		hubApp("hub-by-name", map[string]any{"name": "hub", "namespace": "shop"}),
		hubApp("spoke-by-name", map[string]any{"name": "spoke", "namespace": "shop"}),
		hubApp("spoke-by-server", map[string]any{"server": "https://spoke.example.com:6443", "namespace": "shop"}),
		hubApp("unknown-name", map[string]any{"name": "nope", "namespace": "shop"}),
		hubApp("twin-name", map[string]any{"name": "twin", "namespace": "shop"}),
		hubApp("both", map[string]any{"name": "spoke", "server": "https://spoke.example.com:6443", "namespace": "shop"}),
		hubApp("tunnel", map[string]any{"server": "https://127.0.0.1:6443", "namespace": "shop"}),
	}
	var r model.Reader = &testutil.Reader{Allowed: map[string]bool{"argocd": true}, Objects: objs}
	if !secrets {
		r = noSecrets{r.(*testutil.Reader)}
	}
	a, err := New(Options{Reader: r})
	if err != nil {
		t.Fatal(err)
	}
	a.Load(context.Background())
	a.setLocal(context.Background(), "https://hub.example.com")
	return a
}

// TestLocalDestination: without --engine-context, an Application owns the
// objects of this cluster that carry its tracking id only when it deploys
// here; one that deploys elsewhere is a destination-mismatch note about
// the object; one whose destination cannot be matched keeps its verdicts
// with a note. Matching by name needs the cluster Secrets: Forbidden, only
// the in-cluster name and servers are matched.
func TestLocalDestination(t *testing.T) {
	for _, tt := range []struct {
		app            string
		secrets        bool
		wantReason     string // "" for no note
		wantIn, server string
		owned          bool
	}{
		{app: "in-cluster-name", secrets: true, server: InClusterServer, owned: true},
		{app: "in-cluster-server", secrets: true, server: InClusterServer, owned: true},
		{app: "own-url", secrets: true, server: "https://HUB.example.com:443", owned: true},
		{app: "hub-by-name", secrets: true, server: "https://hub.example.com:443", owned: true},
		{app: "spoke-by-name", secrets: true, wantReason: "destination-mismatch", wantIn: `deploys to https://spoke.example.com:6443 (destination.name "spoke" (cluster Secret argocd/cluster-spoke)), not to this cluster (https://hub.example.com): Argo CD compares and heals only its destination's objects, so nothing reverts`},
		{app: "spoke-by-server", secrets: true, wantReason: "destination-mismatch", wantIn: "deploys to https://spoke.example.com:6443 (destination.server)"},
		{app: "unknown-name", secrets: true, wantReason: "destination-unresolved", wantIn: `destination.name "nope" matches no cluster Secret on this cluster`, owned: true},
		{app: "twin-name", secrets: true, wantReason: "destination-unresolved", wantIn: "2 cluster Secrets", owned: true},
		{app: "both", secrets: true, wantReason: "destination-unresolved", wantIn: "both name", owned: true},
		{app: "tunnel", secrets: true, wantReason: "destination-unresolved", wantIn: "its destination https://127.0.0.1:6443 (destination.server) could not be matched with this cluster: the kubeconfig reaches this cluster at https://hub.example.com, and one of the two is a loopback address", owned: true},
		// Forbidden on Secrets: a name other than in-cluster is not
		// looked up, and keeps today's verdicts with the note.
		{app: "spoke-by-name", wantReason: "destination-unresolved", wantIn: `destination.name "spoke" cannot be looked up: Argo CD's cluster Secrets could not be listed (secrets is forbidden`, owned: true},
		{app: "hub-by-name", wantReason: "destination-unresolved", wantIn: "could not be listed", owned: true},
		{app: "in-cluster-name", server: InClusterServer, owned: true},
		{app: "spoke-by-server", wantReason: "destination-mismatch", wantIn: "https://spoke.example.com:6443"},
	} {
		name := tt.app
		if !tt.secrets {
			name += "/forbidden"
		}
		t.Run(name, func(t *testing.T) {
			checkPlacement(t, localHub(t, tt.secrets), spokeObject("cm", tt.app), tt.app, tt.server, tt.wantReason, tt.wantIn, tt.owned)
		})
	}
}

// TestLocalScanWarnings: what scan, scan --watch and serve see (their
// adapter is built with the scanned cluster's URL): objects of an
// Application deploying elsewhere are not its, one warning line per
// Application after the scan; unmatched ones are judged as its, with a
// line.
func TestLocalScanWarnings(t *testing.T) {
	objs := []*unstructured.Unstructured{
		clusterSecretObj("cluster-spoke", "spoke", "https://spoke.example.com:6443"),
		hubApp("here", map[string]any{"server": InClusterServer, "namespace": "shop"}),
		hubApp("there", map[string]any{"name": "spoke", "namespace": "shop"}),
		hubApp("unknown", map[string]any{"name": "nope", "namespace": "shop"}),
	}
	r := &testutil.Reader{Allowed: map[string]bool{"argocd": true}, Objects: objs}
	ad, notes, err := Descriptor().New(context.Background(), engine.Config{Purpose: engine.ForScan, Reader: r, Server: "https://hub.example.com"})
	if err != nil || len(notes) != 0 {
		t.Fatalf("New: %v, notes %+v", err, notes)
	}
	a := ad.(*Adapter)
	for name, app := range map[string]string{"a": "here", "b": "there", "c": "there", "d": "unknown"} {
		if o := a.Owner(spokeObject(name, app)); (o != nil) != (app != "there") {
			t.Errorf("%s (Application %s): owner %+v", name, app, o)
		}
	}
	want := []string{
		`Application argocd/there deploys to https://spoke.example.com:6443 (destination.name "spoke" (cluster Secret argocd/cluster-spoke)), not to this cluster (https://hub.example.com): 2 object(s) here carry its tracking id; Argo CD reconciles only its destination's objects, so they are not counted as its`,
		`Application argocd/unknown: destination.name "nope" matches no cluster Secret on this cluster: its destination could not be matched with this cluster (https://hub.example.com); its 1 object(s) here are judged as its`,
	}
	if got := a.OwnerWarnings(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Without the cluster's URL (offline, or an older caller) nothing is
	// matched: every tracking id is its Application's.
	ad, _, _ = Descriptor().New(context.Background(), engine.Config{Purpose: engine.ForScan, Reader: r})
	if o := ad.Owner(spokeObject("b", "there")); o == nil {
		t.Error("without Config.Server the spoke's Application owns nothing here")
	}
}

// TestLocalExplainVerdict: the pipeline explain and scan share, on an
// object a real Argo CD v3.2.11 synced and kubectl then edited
// (testdata/inferred/ssa-edit-sidecar: self-heal put the sidecar image
// back), with its Application read from the cluster. Deploying here, the
// image is reverted by self-heal; the same Application deploying to a
// spoke reverts nothing here: no owner, no verdict of Argo CD, and the
// destination-mismatch note says why. Offline (--live-file) the cluster's
// URL is unknown and today's verdict stays.
func TestLocalExplainVerdict(t *testing.T) {
	dir := filepath.Join("testdata", "inferred", "ssa-edit-sidecar")
	for _, tt := range []struct {
		name     string
		dest     map[string]any
		offline  bool
		reverted bool
		note     string
	}{
		{name: "in-cluster", dest: map[string]any{"server": InClusterServer}, reverted: true},
		{name: "own URL", dest: map[string]any{"server": "https://hub.example.com:443"}, reverted: true},
		{name: "spoke", dest: map[string]any{"server": "https://spoke.example.com:6443"}, note: "destination-mismatch"},
		{name: "spoke, offline", dest: map[string]any{"server": "https://spoke.example.com:6443"}, offline: true, reverted: true},
		{name: "tunnel", dest: map[string]any{"server": "https://127.0.0.1:6443"}, reverted: true, note: "destination-unresolved"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			app := readTestObject(t, filepath.Join(dir, "application.json"))
			selfHeal(app)
			ns, _, _ := unstructured.NestedString(app.Object, "spec", "destination", "namespace")
			tt.dest["namespace"] = ns
			_ = unstructured.SetNestedMap(app.Object, tt.dest, "spec", "destination")
			live := readTestObject(t, filepath.Join(dir, "live.json"))
			r := &testutil.Reader{Objects: []*unstructured.Unstructured{app}}
			ad, notes, err := Descriptor().New(context.Background(), engine.Config{Purpose: engine.ForExplain, Reader: r, Live: live,
				Server: "https://hub.example.com", Offline: tt.offline})
			if err != nil {
				t.Fatal(err)
			}
			rep, err := drift.Explain(context.Background(), drift.Request{Live: live, Engine: string(Engine), Adapters: []model.Adapter{ad}, Notes: notes})
			if err != nil {
				t.Fatal(err)
			}
			var image *model.Verdict
			for _, d := range rep.Drifts {
				if d.Path == "/spec/template/spec/containers/1/image" {
					for i := range d.Verdicts {
						if d.Verdicts[i].Engine == Engine {
							image = &d.Verdicts[i]
						}
					}
				}
			}
			reverted := image != nil && image.Kind == model.Reverted && strings.Contains(image.Reason, "selfHeal")
			if reverted != tt.reverted {
				t.Errorf("sidecar image verdict %+v, reverted by self-heal want %v", image, tt.reverted)
			}
			if !tt.reverted && image != nil {
				t.Errorf("deploying elsewhere, Argo CD still judges the field: %+v", image)
			}
			if owned := len(rep.Owners) > 0; owned != tt.reverted {
				t.Errorf("owners %+v, want owned %v", rep.Owners, tt.reverted)
			}
			got := ""
			for _, n := range rep.Notes {
				if strings.HasPrefix(n.Reason, "destination-") {
					got = n.Reason
				}
				if n.Reason == "tracking-mismatch" {
					t.Errorf("tracking-mismatch note on a tracking id that names its object: %s", n.Message)
				}
			}
			if got != tt.note {
				t.Errorf("destination note %q, want %q: %+v", got, tt.note, rep.Notes)
			}
		})
	}
}
