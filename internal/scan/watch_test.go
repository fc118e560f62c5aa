package scan

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/watch"
)

// watchSource lists the captured namespace and hands out one fake watch
// per kind, which the test drives.
type watchSource struct {
	*fileSource
	mu      sync.Mutex
	watches map[string]*watch.FakeWatcher
	opened  chan string
}

func (w *watchSource) Watch(_ context.Context, k Kind, _, _, rv string) (watch.Interface, error) {
	fw := watch.NewFake()
	w.mu.Lock()
	w.watches[k.GVR.Resource] = fw
	w.mu.Unlock()
	w.opened <- k.GVR.Resource
	return fw, nil
}

func readObject(t *testing.T, name string) *unstructured.Unstructured {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{}
	if err := utiljson.Unmarshal(b, &obj.Object); err != nil {
		t.Fatal(err)
	}
	return obj
}

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

// watching runs a Watcher over the captured shop namespace's Deployments
// with a test clock at t0, until the test cancels ctx; done gives Run's
// error.
type watching struct {
	src    *watchSource
	clk    *clock
	events chan WatchEvent
	ctx    context.Context
	cancel context.CancelFunc
	done   chan error
}

func startWatching(t *testing.T, t0 time.Time, defaultInterval time.Duration) *watching {
	t.Helper()
	wt := &watching{
		src:    &watchSource{fileSource: shopSource(), watches: map[string]*watch.FakeWatcher{}, opened: make(chan string, 4)},
		clk:    &clock{t: t0},
		events: make(chan WatchEvent, 32),
		done:   make(chan error, 1),
	}
	w := &Watcher{
		Source:          wt.src,
		Inspector:       bothEngines(t),
		Kinds:           []Kind{kindDeployments},
		DefaultInterval: defaultInterval,
		Emit:            func(ev WatchEvent) error { wt.events <- ev; return nil },
		Now:             wt.clk.Now,
	}
	wt.ctx, wt.cancel = context.WithCancel(context.Background())
	t.Cleanup(wt.cancel)
	go func() { wt.done <- w.Run(wt.ctx) }()
	<-wt.src.opened
	return wt
}

// stopQuiet ends the watch, which must end without error and without an
// event left unread.
func (w *watching) stopQuiet(t *testing.T) {
	t.Helper()
	w.cancel()
	if err := <-w.done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	select {
	case ev := <-w.events:
		t.Errorf("unexpected event %+v", ev)
	default:
	}
}

// listed is the captured Deployment name as the source lists it.
func (w *watching) listed(t *testing.T, name string) *unstructured.Unstructured {
	t.Helper()
	var found *unstructured.Unstructured
	if _, err := w.src.List(w.ctx, kindDeployments, "", "", func(raw []byte) error {
		obj, err := Decode(kindDeployments, raw)
		if err == nil && obj.GetName() == name {
			found = obj
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if found == nil {
		t.Fatalf("no Deployment %s listed", name)
	}
	return found
}

func TestWatcherReportsAppearAndRevert(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 16, 0, 0, 0, time.UTC)
	wt := startWatching(t, t0, time.Minute)
	src, clk, events := wt.src, wt.clk, wt.events

	// The list's drift comes first, one event per drifted field.
	got := map[string]WatchEvent{}
	for i := 0; i < 3; i++ {
		ev := <-events
		if ev.Type != EventDrifted {
			t.Fatalf("initial event %+v", ev)
		}
		got[ev.Resource.Name] = ev
	}
	for _, name := range []string{"web-scaled", "web-image", "web-hpa"} {
		if _, ok := got[name]; !ok {
			t.Errorf("no initial drift event for %s: %v", name, got)
		}
	}
	if ev := got["web-image"]; ev.Since.After(t0) || ev.Manager != "kubectl-set" {
		t.Errorf("web-image: since %v (want the managedFields time, before %v), manager %s", ev.Since, t0, ev.Manager)
	}
	if ev := got["web-scaled"]; !ev.Since.Equal(t0) {
		// The scale subresource entry carries no time: first seen is all we know.
		t.Errorf("web-scaled since %v, want %v", ev.Since, t0)
	}

	// Three and a half minutes later the engine takes replicas back.
	clk.Set(t0.Add(3*time.Minute + 30*time.Second))
	src.watches["deployments"].Modify(readObject(t, "web-scaled-reverted.json"))
	ev := <-events
	if ev.Type != EventReverted || ev.Resource.Name != "web-scaled" || ev.Path != "/spec/replicas" {
		t.Fatalf("want web-scaled reverted, got %+v", ev)
	}
	if ev.LivedSeconds == nil || *ev.LivedSeconds != 210 || ev.Intervals == nil || *ev.Intervals != 3 || ev.Interval != "1m0s" {
		t.Errorf("lifetime: lived %v, intervals %v of %q; want 210s, 3 of 1m0s", ev.LivedSeconds, ev.Intervals, ev.Interval)
	}

	// A drifted object deleted: its drift ends with it.
	hpa := wt.listed(t, "web-hpa")
	src.watches["deployments"].Delete(hpa)
	if ev := <-events; ev.Type != EventDeleted || ev.Resource.Name != "web-hpa" {
		t.Errorf("want web-hpa deleted, got %+v", ev)
	}
	// Unchanged drift re-sent (a resync, another field edited) is not news.
	src.watches["deployments"].Modify(readObject(t, "web-scaled-reverted.json"))
	wt.stopQuiet(t)
}

// A drift that ends without a GitOps write (a person ran kubectl label
// x-) is "resolved", not "reverted" (issue 12).
func TestGitOpsTookBack(t *testing.T) {
	since := time.Date(2026, 12, 2, 16, 0, 0, 0, time.UTC)
	obj := func(fluxTime time.Time, labels string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		raw := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","labels":{` + labels + `},"managedFields":[` +
			`{"manager":"kustomize-controller","operation":"Apply","apiVersion":"apps/v1","time":"` + fluxTime.Format(time.RFC3339) + `","fieldsType":"FieldsV1",` +
			`"fieldsV1":{"f:metadata":{"f:labels":{"f:app":{}}}}}]}}`
		if err := u.UnmarshalJSON([]byte(raw)); err != nil {
			t.Fatal(err)
		}
		return u
	}
	for _, c := range []struct {
		name    string
		obj     *unstructured.Unstructured
		pointer string
		want    bool
	}{
		{"label removed by a person", obj(since.Add(-time.Hour), `"app":"web"`), "/metadata/labels/hotfix", false},
		{"label removed by the engine's apply", obj(since.Add(time.Minute), `"app":"web"`), "/metadata/labels/hotfix", true},
		{"field owned by the engine again", obj(since.Add(-time.Hour), `"app":"web"`), "/metadata/labels/app", true},
	} {
		if got := gitOpsTookBack(c.obj, c.pointer, since); got != c.want {
			t.Errorf("%s: gitOpsTookBack = %v, want %v", c.name, got, c.want)
		}
	}
}

// A field that the engine takes back and the other manager writes again is
// a fight (3 flips: the engine's unseen write before the listed drift, the
// drift, the revert, the drift again): one fight event naming both
// managers and values, after the drift event that completed it; the same
// state sent again adds nothing. (The one-off edit reverted once of
// TestWatcherReportsAppearAndRevert is no fight: it reports none.) The
// span runs from the first flip, the listed drift.
func TestWatcherReportsFight(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 16, 0, 0, 0, time.UTC)
	wt := startWatching(t, t0, 0)
	src, clk, events := wt.src, wt.clk, wt.events
	for i := 0; i < 3; i++ {
		if ev := <-events; ev.Type != EventDrifted {
			t.Fatalf("initial event %+v", ev)
		}
	}
	scaled := wt.listed(t, "web-scaled")
	clk.Set(t0.Add(time.Minute))
	src.watches["deployments"].Modify(readObject(t, "web-scaled-reverted.json"))
	if ev := <-events; ev.Type != EventReverted || ev.Resource.Name != "web-scaled" {
		t.Fatalf("want web-scaled reverted, got %+v", ev)
	}
	clk.Set(t0.Add(2 * time.Minute))
	src.watches["deployments"].Modify(scaled.DeepCopy())
	if ev := <-events; ev.Type != EventDrifted || ev.Resource.Name != "web-scaled" {
		t.Fatalf("want web-scaled drifted again, got %+v", ev)
	}
	ev := <-events
	if ev.Type != EventFight || ev.Fight == nil {
		t.Fatalf("want a fight event, got %+v", ev)
	}
	f := ev.Fight
	got := fmt.Sprintf("%s %s %s=%s %s=%s flips=%d span=%s", ev.Resource.Name, ev.Path, f.EngineManager, f.EngineValue, f.Manager, f.Value, f.Flips, f.Last.Sub(f.First))
	wantEngine := scaled.GetManagedFields()[0].Manager
	for _, e := range scaled.GetManagedFields() {
		if e.Manager == "kustomize-controller" || e.Manager == "argocd-controller" {
			wantEngine = e.Manager
		}
	}
	replicas, _, _ := unstructured.NestedInt64(scaled.Object, "spec", "replicas")
	back := readObject(t, "web-scaled-reverted.json")
	gitReplicas, _, _ := unstructured.NestedInt64(back.Object, "spec", "replicas")
	want := fmt.Sprintf("web-scaled /spec/replicas %s=%d %s=%d flips=3 span=2m0s", wantEngine, gitReplicas, ev.Manager, replicas)
	if got != want {
		t.Errorf("fight\n got %s\nwant %s", got, want)
	}
	if ev.Manager == "" || ev.Manager == wantEngine {
		t.Errorf("fight's other manager %q", ev.Manager)
	}
	// The same state again: the fight goes on, not news.
	clk.Set(t0.Add(3 * time.Minute))
	src.watches["deployments"].Modify(scaled.DeepCopy())
	wt.stopQuiet(t)
}
