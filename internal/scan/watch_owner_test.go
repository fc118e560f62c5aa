package scan

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubectl-drift/kubectl-drift/internal/argocd"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

var kindApplications = Kind{GVR: schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "applications"},
	GVK: schema.GroupVersionKind{Group: "argoproj.io", Version: "v1alpha1", Kind: "Application"}, Namespaced: true}

// memSource serves LISTs of in-memory objects by resource, counting them,
// and hands out one fake watch per resource, which the test drives.
type memSource struct {
	mu      sync.Mutex
	objs    map[string][]*unstructured.Unstructured
	lists   map[string]int
	watches map[string]*watch.FakeWatcher
	opened  chan string
}

func (s *memSource) List(_ context.Context, k Kind, _, _ string, fn func([]byte) error) (string, error) {
	s.mu.Lock()
	s.lists[k.GVR.Resource]++
	objs := s.objs[k.GVR.Resource]
	s.mu.Unlock()
	for _, o := range objs {
		b, err := o.MarshalJSON()
		if err != nil {
			return "", err
		}
		if err := fn(b); err != nil {
			return "", err
		}
	}
	return "1", nil
}

func (s *memSource) Watch(_ context.Context, k Kind, _, _, _ string) (watch.Interface, error) {
	fw := watch.NewFakeWithChanSize(8, false) // a test's Modify never blocks
	s.mu.Lock()
	s.watches[k.GVR.Resource] = fw
	s.mu.Unlock()
	s.opened <- k.GVR.Resource
	return fw, nil
}

func (s *memSource) listsOf(resource string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lists[resource]
}

// TestWatchFollowsApplicationStatus: scan --watch judges with the
// Applications it watches (Watcher.Owners). The Deployment equals Argo
// CD's last sync (only argocd-controller wrote it), so only its
// Application's recorded status can make it drift: a commit not synced
// yet records it OutOfSync, a sync Synced. Each change of the Application
// lists the Deployments again (one LIST) and the events follow: drifted
// with the status, then resolved, then drifted again.
func TestWatchFollowsApplicationStatus(t *testing.T) {
	live := syncedArgo(t)
	app := testutil.ReadObject(t, "..", "argocd", "testdata", "inferred", "csa-label-added", "application.json")
	gvk := live.GroupVersionKind()
	withStatus := func(status string, rv int) *unstructured.Unstructured {
		out := app.DeepCopy()
		_ = unstructured.SetNestedSlice(out.Object, []any{map[string]any{
			"group": gvk.Group, "version": gvk.Version, "kind": gvk.Kind,
			"namespace": live.GetNamespace(), "name": live.GetName(), "status": status}}, "status", "resources")
		out.SetResourceVersion(fmt.Sprint(rv))
		return out
	}
	first := withStatus("Synced", 1)
	a, err := argocd.New(argocd.Options{Reader: &testutil.Reader{Objects: []*unstructured.Unstructured{first}}, Inventory: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a.Load(ctx)
	src := &memSource{objs: map[string][]*unstructured.Unstructured{"deployments": {live}, "applications": {first}},
		lists: map[string]int{}, watches: map[string]*watch.FakeWatcher{}, opened: make(chan string, 8)}
	events := make(chan WatchEvent, 8)
	w := &Watcher{
		Source:    src,
		Inspector: &Inspector{Adapters: []model.Adapter{a}},
		Kinds:     []Kind{kindDeployments},
		Owners:    []Kind{kindApplications},
		Emit:      func(ev WatchEvent) error { events <- ev; return nil },
		Now:       func() time.Time { return time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC) },
	}
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	for range 2 {
		<-src.opened
	}
	src.mu.Lock()
	apps := src.watches["applications"]
	src.mu.Unlock()
	next := func(what string) WatchEvent {
		t.Helper()
		select {
		case ev := <-events:
			return ev
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no event within 10s", what)
		}
		return WatchEvent{}
	}
	rv := 1
	for round := range 2 {
		rv++
		apps.Modify(withStatus("OutOfSync", rv))
		ev := next("OutOfSync")
		if ev.Type != EventDrifted || ev.Resource.Name != live.GetName() || ev.Path != "" || ev.Status != "argocd: OutOfSync (Application status)" {
			t.Fatalf("round %d: %+v, want the Deployment drifted with its Application's status", round, ev)
		}
		<-src.opened // the Deployments' watch again, after their LIST
		rv++
		apps.Modify(withStatus("Synced", rv))
		// The sync wrote nothing after the drift began (the captured
		// object's times are older): resolved, not reverted.
		if ev := next("Synced"); ev.Type != EventResolved || ev.Resource.Name != live.GetName() || ev.Status == "" {
			t.Fatalf("round %d: %+v, want the status drift resolved", round, ev)
		}
		<-src.opened
	}
	// One LIST at start and one per change of the recorded status.
	if n := src.listsOf("deployments"); n != 5 {
		t.Errorf("%d LISTs of Deployments, want 5", n)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
	select {
	case ev := <-events:
		t.Errorf("unexpected event %+v", ev)
	default:
	}
}
