package scan

import (
	"context"
	"maps"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// With Inspector.Desired (scan --watch --source), the watch judges each
// object against the desired object the hook gives and its events say so:
// web-image's image, which kubectl set, equals the render, so it is no
// drift though managedFields alone would call it one; web-hpa's replicas
// differ from the render's; web-scaled, which the hook does not render,
// is inferred from managedFields.
func TestWatcherJudgesAgainstTheDesiredHook(t *testing.T) {
	in := bothEngines(t)
	in.Desired = func(_ context.Context, live *unstructured.Unstructured) (*unstructured.Unstructured, model.DesiredSource, error) {
		d := live.DeepCopy()
		switch live.GetName() {
		case "web-image":
			return d, model.SourceRendered, nil
		case "web-hpa":
			if err := unstructured.SetNestedField(d.Object, int64(2), "spec", "replicas"); err != nil {
				return nil, "", err
			}
			return d, model.SourceRendered, nil
		}
		return nil, model.SourceManagedFields, nil
	}
	src := &watchSource{fileSource: shopSource(), watches: map[string]*watch.FakeWatcher{}, opened: make(chan string, 4)}
	events := make(chan WatchEvent, 32)
	w := &Watcher{Source: src, Inspector: in, Kinds: []Kind{kindDeployments},
		Emit: func(ev WatchEvent) error { events <- ev; return nil },
		Now:  func() time.Time { return time.Date(2026, 12, 2, 16, 0, 0, 0, time.UTC) }}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	<-src.opened // the list's drift is emitted before the watch opens
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	close(events)
	got := map[string]string{}
	for ev := range events {
		got[ev.Resource.Name+" "+ev.Path] = ev.Type + " " + string(ev.DesiredSource)
	}
	want := map[string]string{
		"web-hpa /spec/replicas":    "drifted rendered",
		"web-scaled /spec/replicas": "drifted managed-fields",
	}
	if !maps.Equal(got, want) {
		t.Errorf("events %v, want %v", got, want)
	}
}
