package scan

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubectl-drift/kubectl-drift/internal/fight"
	"github.com/kubectl-drift/kubectl-drift/internal/managedfields"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/model/jsonpointer"
	"github.com/kubectl-drift/kubectl-drift/internal/output"
)

// WatchSource is a Source that can also watch a kind from a resourceVersion.
type WatchSource interface {
	Source
	Watch(ctx context.Context, kind Kind, namespace, labelSelector, resourceVersion string) (watch.Interface, error)
}

// Watch event types.
const (
	// EventDrifted: a field is drifted. At start-up, for drift that already
	// existed (Since is then the manager's last write, from managedFields).
	EventDrifted = "drifted"
	// EventReverted: the field is no longer owned by the outside manager
	// (the engine took it back, or the field went away).
	EventReverted = "reverted"
	// EventDeleted: the drifted object was deleted.
	EventDeleted = "deleted"
	// EventResolved: the drift ended without a GitOps engine writing the
	// object since it began: a person or another controller removed or
	// restored the field (kubectl label x-), so nothing was reverted.
	EventResolved = "resolved"
	// EventFight: a GitOps engine and another manager keep writing the
	// field in turn (internal/fight, the detector serve uses); once per
	// fight, Fight says who and what.
	EventFight = "fight"
)

// WatchEvent is one line of `scan --watch`.
type WatchEvent struct {
	Time     time.Time        `json:"time"`
	Type     string           `json:"type"`
	Resource model.ResourceID `json:"resource"`
	Path     string           `json:"path"`
	// FieldPath names list items by key, like FieldDrift.FieldPath.
	FieldPath string           `json:"fieldPath"`
	Manager   string           `json:"manager"`
	Class     model.CauseClass `json:"class"`
	Owner     string           `json:"owner,omitempty"`
	// Since is when the drift appeared (best estimate).
	Since time.Time `json:"since"`
	// LivedSeconds is how long a reverted/deleted drift lived.
	LivedSeconds *float64 `json:"livedSeconds,omitempty"`
	// Interval is the owner's reconcile interval, when known, and
	// Intervals how many whole intervals the drift survived: persistent
	// drift (Intervals >= 1) means the engine did not, or could not,
	// revert it.
	Interval  string `json:"interval,omitempty"`
	Intervals *int   `json:"intervals,omitempty"`
	// Verdicts of the owning engine(s), where known.
	Verdicts []model.Verdict `json:"verdicts,omitempty"`
	// DesiredSource is what the drift was judged against, as scan's
	// reports say it: managed-fields, or rendered under --source.
	DesiredSource model.DesiredSource `json:"desiredSource,omitempty"`
	// Fight is set on fight events.
	Fight *WatchFight `json:"fight,omitempty"`
	// Status is set on the events of an object its engine records drifted
	// with no field named (Path is then ""): the engine's word for it,
	// "argocd: OutOfSync (Application status)".
	Status string `json:"status,omitempty"`
}

// WatchFight is the fight of a fight event: the engine's manager and value,
// the other writer's (Manager of the event too), the flips within the
// window and the time they span. Values of Secrets are masked.
type WatchFight struct {
	EngineManager string    `json:"engineManager"`
	EngineValue   string    `json:"engineValue"`
	Manager       string    `json:"manager"`
	Value         string    `json:"value"`
	Flips         int       `json:"flips"`
	First         time.Time `json:"first"`
	Last          time.Time `json:"last"`
	// PeriodSeconds is the mean time between flips.
	PeriodSeconds float64 `json:"periodSeconds"`
}

// Watcher follows drift: an initial list per kind, then a watch from the
// list's resourceVersion, reconnecting from the last seen version and
// relisting when that has expired. Only drifted objects are kept in memory.
type Watcher struct {
	Source        WatchSource
	Inspector     *Inspector
	Namespace     string
	LabelSelector string
	Kinds         []Kind
	// DefaultInterval is assumed when the owner's interval is unknown
	// (Argo CD's is controller-wide, timeout.reconciliation); zero leaves
	// Intervals unset.
	DefaultInterval time.Duration
	// Emit receives events in order; it is called from one goroutine at a
	// time.
	Emit func(WatchEvent) error
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Warn receives warnings (a kind that may not be listed); may be nil.
	Warn func(string)
	// Fight configures the fight detector (zero: its defaults, 3 flips
	// within 10 minutes).
	Fight fight.Config
	// Owners are the engines' kinds whose objects the adapters judge with
	// (Applications with their recorded status, Kustomizations,
	// HelmReleases), followed in all namespaces with one LIST and one
	// WATCH each: each change goes to the adapters
	// (Inspector.UpdateOwner), and the kinds of the objects whose verdict
	// it may change are listed again (one LIST per kind; requests that
	// come while one is pending are one). Without them the adapters judge
	// with the engine objects as the watch began.
	Owners []Kind
	// OwnerSource reads Owners; nil: Source (the engine runs in the
	// scanned cluster).
	OwnerSource WatchSource

	mu     sync.Mutex
	state  map[types.UID]*tracked
	fights *fight.Detector
	// relist asks the follower of a scanned kind (by index in Kinds) to
	// list it again: an owner's change may change its objects' verdicts.
	relist []chan struct{}
}

// statusField is the key in tracked.fields of an object its engine
// records drifted with no drifted field to name (Argo CD's OutOfSync from
// its Application's status: a commit not synced yet); its events have
// Path "" and Status set.
const statusField = ""

type tracked struct {
	id     model.ResourceID
	owner  string
	ival   time.Duration
	fields map[string]trackedField
}

type trackedField struct {
	fieldPath string
	manager   model.ManagerRef
	since     time.Time
	verdicts  []model.Verdict
	source    model.DesiredSource
	// status: the statusField's WatchEvent.Status.
	status string
}

func (w *Watcher) now() time.Time {
	if w.Now != nil {
		return w.Now()
	}
	return time.Now()
}

// Run watches until ctx ends (nil error) or a kind fails for another reason
// than an expired resourceVersion.
func (w *Watcher) Run(ctx context.Context) error {
	w.state = map[types.UID]*tracked{}
	w.fights = fight.New(w.Fight)
	w.relist = make([]chan struct{}, len(w.Kinds))
	errc := make(chan error, len(w.Kinds)+len(w.Owners))
	var wg sync.WaitGroup
	for i, k := range w.Kinds {
		w.relist[i] = make(chan struct{}, 1)
		var judgeMu sync.Mutex
		f := followed{namespace: w.Namespace, selector: w.LabelSelector, relist: w.relist[i],
			observe: func(ctx context.Context, obj *unstructured.Unstructured, deleted bool) error {
				return w.observe(ctx, &judgeMu, k, obj, deleted)
			},
			listed: func(seen map[types.UID]bool) error { return w.forgetUnseen(k, seen) }}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := w.follow(ctx, k, f); err != nil {
				errc <- fmt.Errorf("%s: %w", k, err)
			}
		}()
	}
	for _, k := range w.Owners {
		f := followed{owners: true, observe: func(_ context.Context, obj *unstructured.Unstructured, deleted bool) error {
			w.ownerChanged(obj, deleted)
			return nil
		}}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := w.follow(ctx, k, f); err != nil {
				errc <- fmt.Errorf("%s: %w", k, err)
			}
		}()
	}
	wg.Wait()
	close(errc)
	if err := <-errc; err != nil && ctx.Err() == nil {
		return err
	}
	return nil
}

// followed is what follow does with the objects of one kind.
type followed struct {
	namespace, selector string
	// observe takes each object listed or watched.
	observe func(ctx context.Context, obj *unstructured.Unstructured, deleted bool) error
	// listed, if set, takes the uids a (re)list returned.
	listed func(seen map[types.UID]bool) error
	// relist, if set, asks for a new list.
	relist <-chan struct{}
	// owners: an engine kind (Watcher.Owners), read from OwnerSource.
	owners bool
}

// ownerChanged hands an engine object's change to the adapters and has
// the kinds of the objects whose verdict it may change listed again.
func (w *Watcher) ownerChanged(obj *unstructured.Unstructured, deleted bool) {
	for _, c := range w.Inspector.UpdateOwner(obj, deleted) {
		for i, k := range w.Kinds {
			touched := c.All
			for _, r := range c.Objects {
				touched = touched || (r.Group == k.GVK.Group && r.Kind == k.GVK.Kind)
			}
			if touched {
				select {
				case w.relist[i] <- struct{}{}:
				default: // one is pending: it lists after this change
				}
			}
		}
	}
}

func (w *Watcher) follow(ctx context.Context, k Kind, f followed) error {
	src := w.Source
	if f.owners && w.OwnerSource != nil {
		src = w.OwnerSource
	}
	for {
		// (Re)list: the state of this kind is rebuilt from scratch, and drift
		// that vanished while we were not watching is reported as reverted.
		seen := map[types.UID]bool{}
		// JSON, as the WATCH that follows: a watcher keeps its decoded
		// objects, which protobuf would not make cheaper.
		list := src.List
		if j, ok := src.(JSONLister); ok {
			list = j.ListJSON
		}
		rv, err := list(ctx, k, f.namespace, f.selector, func(raw []byte) error {
			obj, err := Decode(k, raw)
			if err != nil {
				return err
			}
			seen[obj.GetUID()] = true
			return f.observe(ctx, obj, false)
		})
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if apierrors.IsForbidden(err) || apierrors.IsNotFound(err) {
				// As in a scan: a kind we may not list is a warning, the
				// other kinds are still followed.
				if w.Warn != nil {
					w.Warn(fmt.Sprintf("%s not watched: %v", k, err))
				}
				return nil
			}
			return err
		}
		if f.listed != nil {
			if err := f.listed(seen); err != nil {
				return err
			}
		}
		for {
			wi, err := src.Watch(ctx, k, f.namespace, f.selector, rv)
			if err != nil {
				if ctx.Err() != nil {
					return nil
				}
				if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
					break // relist
				}
				return err
			}
			next, expired, err := w.drain(ctx, k, f, wi, rv)
			wi.Stop()
			if err != nil || ctx.Err() != nil {
				return err
			}
			if expired {
				break
			}
			rv = next
		}
	}
}

// drain handles events until the watch closes; it returns the last
// resourceVersion seen, and whether to list again (the server said it
// expired, or a relist was asked for).
func (w *Watcher) drain(ctx context.Context, k Kind, f followed, wi watch.Interface, rv string) (string, bool, error) {
	for {
		select {
		case <-ctx.Done():
			return rv, false, nil
		case <-f.relist:
			return rv, true, nil
		case ev, ok := <-wi.ResultChan():
			if !ok {
				return rv, false, nil // server closed the watch: resume from rv
			}
			switch ev.Type {
			case watch.Error:
				err := apierrors.FromObject(ev.Object)
				if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
					return rv, true, nil
				}
				return rv, false, err
			case watch.Bookmark, watch.Added, watch.Modified, watch.Deleted:
				obj, ok := ev.Object.(*unstructured.Unstructured)
				if !ok {
					continue
				}
				rv = obj.GetResourceVersion()
				if ev.Type == watch.Bookmark {
					continue
				}
				obj.SetGroupVersionKind(k.GVK)
				if err := f.observe(ctx, obj, ev.Type == watch.Deleted); err != nil {
					return rv, false, err
				}
			}
		}
	}
}

// observe compares obj's drift with what was tracked and emits the
// differences.
func (w *Watcher) observe(ctx context.Context, judgeMu *sync.Mutex, k Kind, obj *unstructured.Unstructured, deleted bool) error {
	uid := obj.GetUID()
	now := w.now()
	rep, cur := w.currentDrift(ctx, judgeMu, k, obj, deleted, now)
	fights := w.feedFights(obj, cur, deleted, now)

	w.mu.Lock()
	defer w.mu.Unlock()
	t := w.state[uid]
	if t == nil && len(cur) == 0 && len(fights) == 0 {
		return nil
	}
	if t == nil {
		t = &tracked{fields: map[string]trackedField{}}
		w.state[uid] = t
	}
	if rep != nil {
		t.id = rep.Resource
		t.owner, t.ival = ownerInfo(rep.Owners, w.DefaultInterval)
	} else if t.id.Name == "" {
		gvk := obj.GroupVersionKind()
		t.id = model.ResourceID{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Namespace: obj.GetNamespace(), Name: obj.GetName()}
	}
	events := w.endedFields(t, cur, obj, deleted, now)
	events = append(events, w.startedFields(t, cur, now)...)
	events = append(events, fightEvents(t, fights, now)...)
	if len(t.fields) == 0 {
		delete(w.state, uid)
	}
	// By field; at one field the fight after the drift that completed it.
	sort.SliceStable(events, func(i, j int) bool { return events[i].Path < events[j].Path })
	for _, ev := range events {
		if err := w.Emit(ev); err != nil {
			return err
		}
	}
	return nil
}

// currentDrift judges obj now (nothing for a deleted object) and returns
// the report and the fields worth following, by path; an object whose
// only drift is its status is followed under statusField.
func (w *Watcher) currentDrift(ctx context.Context, judgeMu *sync.Mutex, k Kind, obj *unstructured.Unstructured, deleted bool, now time.Time) (*model.Report, map[string]trackedField) {
	cur := map[string]trackedField{}
	if deleted {
		return nil, cur
	}
	cand, _ := w.Inspector.PrecheckObject(k, obj)
	if cand == nil {
		return nil, cur
	}
	rep, _, err := w.Inspector.Explain(ctx, judgeMu, cand, obj)
	if err != nil || rep == nil {
		return nil, cur
	}
	for _, d := range rep.Drifts {
		if !d.Counts() {
			continue // every engine ignores it: not drift worth following
		}
		m := w.Inspector.culprit(d)
		since := now
		if m.Time != nil && m.Time.Before(now) {
			since = *m.Time
		}
		cur[d.Path] = trackedField{fieldPath: d.FieldPath, manager: m, since: since, verdicts: d.Verdicts, source: rep.DesiredSource}
	}
	if st := statusOnly(rep); len(cur) == 0 && st != "" {
		cur[statusField] = trackedField{since: now, source: rep.DesiredSource, status: st}
	}
	return rep, cur
}

// feedFights gives the fight detector the object's drifted fields (a
// deleted object is forgotten) and returns the fights it completed.
func (w *Watcher) feedFights(obj *unstructured.Unstructured, cur map[string]trackedField, deleted bool, now time.Time) []fight.Fight {
	uid := obj.GetUID()
	if deleted {
		w.fights.Forget(string(uid))
		return nil
	}
	drifted := make([]FightDrift, 0, len(cur))
	for p, f := range cur {
		if p != statusField {
			drifted = append(drifted, FightDrift{Path: p, Manager: f.manager.Manager})
		}
	}
	gvk := obj.GroupVersionKind()
	ref := fight.Object{UID: string(uid), Group: gvk.Group, Kind: gvk.Kind, Namespace: obj.GetNamespace(), Name: obj.GetName()}
	_, fights := FeedFights(w.fights, ref, obj, drifted, now)
	return fights
}

// endedFields removes from t the fields no longer drifted and returns
// their events: deleted with the object, reverted when GitOps took the
// field back, else resolved. The caller holds w.mu.
func (w *Watcher) endedFields(t *tracked, cur map[string]trackedField, obj *unstructured.Unstructured, deleted bool, now time.Time) []WatchEvent {
	var events []WatchEvent
	for p, f := range t.fields {
		if _, still := cur[p]; still {
			continue
		}
		typ := EventReverted
		switch {
		case deleted:
			typ = EventDeleted
		case p == statusField && !gitOpsWroteSince(obj, f.since), p != statusField && !gitOpsTookBack(obj, p, f.since):
			typ = EventResolved
		}
		events = append(events, w.ended(typ, t, p, f, now))
		delete(t.fields, p)
	}
	return events
}

// startedFields records in t the fields drifted now and returns an event
// for each new one; a field already drifted keeps its since. The caller
// holds w.mu.
func (w *Watcher) startedFields(t *tracked, cur map[string]trackedField, now time.Time) []WatchEvent {
	var events []WatchEvent
	for p, f := range cur {
		if old, had := t.fields[p]; had {
			f.since = old.since // the same drift goes on
			t.fields[p] = f
			continue
		}
		t.fields[p] = f
		events = append(events, WatchEvent{Time: now, Type: EventDrifted, Resource: t.id, Path: p, FieldPath: f.fieldPath,
			Manager: f.manager.Manager, Class: f.manager.Class, Owner: t.owner, Since: f.since, Interval: intervalString(t.ival), Verdicts: f.verdicts,
			DesiredSource: f.source, Status: f.status})
	}
	return events
}

// fightEvents are the events of the fights completed at this observation.
func fightEvents(t *tracked, fights []fight.Fight, now time.Time) []WatchEvent {
	events := make([]WatchEvent, 0, len(fights))
	for _, fg := range fights {
		f := t.fields[fg.Field]
		events = append(events, WatchEvent{Time: now, Type: EventFight, Resource: t.id, Path: fg.Field, FieldPath: f.fieldPath,
			Manager: fg.Manager, Class: f.manager.Class, Owner: t.owner, Since: fg.First, Interval: intervalString(t.ival), Verdicts: f.verdicts,
			DesiredSource: f.source,
			Fight: &WatchFight{EngineManager: fg.EngineManager, EngineValue: fg.EngineValue, Manager: fg.Manager, Value: fg.Value,
				Flips: fg.Flips, First: fg.First, Last: fg.Last, PeriodSeconds: fg.Period.Seconds()}})
	}
	return events
}

// forgetUnseen ends the drift of objects of kind k that a relist did not
// return (deleted while the watch was down).
func (w *Watcher) forgetUnseen(k Kind, seen map[types.UID]bool) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.now()
	for uid, t := range w.state {
		if seen[uid] || t.id.Kind != k.GVK.Kind || t.id.Group != k.GVK.Group {
			continue
		}
		for p, f := range t.fields {
			if err := w.Emit(w.ended(EventDeleted, t, p, f, now)); err != nil {
				return err
			}
		}
		delete(w.state, uid)
	}
	return nil
}

func (w *Watcher) ended(typ string, t *tracked, p string, f trackedField, now time.Time) WatchEvent {
	lived := now.Sub(f.since)
	if lived < 0 {
		lived = 0
	}
	secs := lived.Seconds()
	ev := WatchEvent{Time: now, Type: typ, Resource: t.id, Path: p, FieldPath: f.fieldPath, Manager: f.manager.Manager,
		Class: f.manager.Class, Owner: t.owner, Since: f.since, LivedSeconds: &secs, Interval: intervalString(t.ival), Verdicts: f.verdicts,
		DesiredSource: f.source, Status: f.status}
	if t.ival > 0 {
		n := int(lived / t.ival)
		ev.Intervals = &n
	}
	return ev
}

// gitOpsTookBack reports whether a GitOps engine ended the drift of the
// field at pointer: it owns the field now, or its managedFields entry was
// written at or after since (an engine's apply that removed a field others
// added). managedFields times have one-second resolution, hence "at or
// after". Otherwise a person or another controller ended it.
func gitOpsTookBack(obj *unstructured.Unstructured, pointer string, since time.Time) bool {
	if ix, err := managedfields.Parse(obj); err == nil && !ix.Empty() {
		for _, m := range ix.Owners(obj, pointer) {
			if managedfields.IsGitOpsManager(m.Manager) {
				return true
			}
		}
	}
	return gitOpsWroteSince(obj, since)
}

// gitOpsWroteSince reports whether a GitOps engine wrote obj at or after
// since (its managedFields entry's time): a sync that ended a drift.
func gitOpsWroteSince(obj *unstructured.Unstructured, since time.Time) bool {
	for _, mf := range obj.GetManagedFields() {
		if managedfields.IsGitOpsManager(mf.Manager) && mf.Time != nil && !mf.Time.Time.Before(since.Truncate(time.Second)) {
			return true
		}
	}
	return false
}

// statusOnly is the engines' word for a report's object status drift
// ("argocd: OutOfSync (Application status)"), "" when no engine records
// the object drifted.
func statusOnly(rep *model.Report) string {
	var parts []string
	for _, st := range rep.Status {
		if !st.Drift {
			continue
		}
		s := string(st.Engine) + ": " + st.Status
		if st.From != "" && st.From != "computed" {
			s += " (" + st.From + ")"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

// ownerInfo renders the owners and picks the shortest known interval: the
// engine that reconciles most often is the one that should have reverted.
func ownerInfo(owners []model.Owner, def time.Duration) (string, time.Duration) {
	var parts []string
	var ival time.Duration
	for _, o := range owners {
		parts = append(parts, string(o.Engine)+" "+o.Ref())
		if d, err := time.ParseDuration(o.Interval); err == nil && d > 0 && (ival == 0 || d < ival) {
			ival = d
		}
	}
	if ival == 0 {
		ival = def
	}
	return strings.Join(parts, ", "), ival
}

func intervalString(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return d.String()
}

// EventPrinter writes watch events as lines (table), JSON lines or YAML
// documents.
func EventPrinter(out io.Writer, format string) func(WatchEvent) error {
	headerDone := false
	return func(ev WatchEvent) error {
		switch format {
		case OutputJSON, OutputYAML:
			return output.PrintStreamItem(out, output.Format(format), ev)
		}
		if !headerDone {
			headerDone = true
			if _, err := fmt.Fprintln(out, "TIME                  EVENT     OBJECT / FIELD / MANAGER / LIFETIME"); err != nil {
				return err
			}
		}
		obj := ev.Resource.GroupKind() + " " + ev.Resource.Namespace + "/" + ev.Resource.Name
		if ev.Resource.Namespace == "" {
			obj = ev.Resource.GroupKind() + " " + ev.Resource.Name
		}
		if f := ev.Fight; f != nil {
			field := ev.FieldPath
			if field == "" {
				field = ev.Path
			}
			_, err := fmt.Fprintf(out, "%s  %-8s  %s %s: %s writes %s, %s writes %s; %d flips in %s\n", ev.Time.UTC().Format(time.RFC3339), ev.Type, obj, field,
				f.EngineManager, f.EngineValue, f.Manager, f.Value, f.Flips, duration.HumanDuration(f.Last.Sub(f.First)))
			return err
		}
		line := fmt.Sprintf("%s  %-8s  %s %s by %s (%s)", ev.Time.UTC().Format(time.RFC3339), ev.Type, obj, ev.FieldPath, ev.Manager, ev.Class)
		if ev.Status != "" {
			line = fmt.Sprintf("%s  %-8s  %s %s", ev.Time.UTC().Format(time.RFC3339), ev.Type, obj, ev.Status)
		}
		if ev.Owner != "" {
			line += ", owner " + ev.Owner
		}
		for _, v := range ev.Verdicts {
			line += fmt.Sprintf(", %s: %s", v.Engine, v.Kind)
		}
		if ev.LivedSeconds == nil {
			line += ", since " + ev.Since.UTC().Format(time.RFC3339)
		} else {
			line += ", lived " + duration.HumanDuration(time.Duration(*ev.LivedSeconds*float64(time.Second)))
			if ev.Intervals != nil {
				line += fmt.Sprintf(", survived %d reconcile interval(s) of %s", *ev.Intervals, ev.Interval)
			} else {
				line += ", reconcile interval unknown"
			}
		}
		_, err := fmt.Fprintln(out, line)
		return err
	}
}

// FightDrift is a drifted field and the manager it is attributed to
// (Inspector.Culprit), as FeedFights takes them.
type FightDrift struct {
	Path    string
	Manager string
}

// FightRevert is a write by a GitOps engine that put Git's value back over
// another manager's different value.
type FightRevert struct {
	Field string
	// Engine is the engine's manager, Over the manager it reverted
	// ("unknown" when the detector remembers none).
	Engine, Over string
}

// FeedFights records in d the writes that the current state of obj shows,
// for serve and `scan --watch` alike: each drifted field is a write by its
// culprit (the first time, preceded by the engine's unseen write: drift is
// only reported once the engine wrote the object); each field d already
// follows that a GitOps engine owns again is a write by the engine. It
// returns the reverts among those writes and the fights that started
// (d.Check's first report of each). Calls for one object must not overlap.
func FeedFights(d *fight.Detector, ref fight.Object, obj *unstructured.Unstructured, drifted []FightDrift, now time.Time) (reverts []FightRevert, started []fight.Fight) {
	followed := d.Fields(ref.UID)
	if len(drifted) == 0 && len(followed) == 0 {
		return nil, nil
	}
	isFollowed := make(map[string]bool, len(followed))
	for _, f := range followed {
		isFollowed[f] = true
	}
	engineMgr := ""
	for _, e := range obj.GetManagedFields() {
		if e.Subresource == "" && managedfields.IsGitOpsManager(e.Manager) {
			engineMgr = e.Manager
			break
		}
	}
	isDrifted := make(map[string]bool, len(drifted))
	for _, dr := range drifted {
		isDrifted[dr.Path] = true
		h, show := fightValue(obj.Object, dr.Path)
		if !isFollowed[dr.Path] && engineMgr != "" {
			d.Observe(ref, dr.Path, fight.Write{Manager: engineMgr, Engine: true, Hash: "before:" + h, Value: "(not seen)", Time: now.Add(-time.Millisecond)})
		}
		d.Observe(ref, dr.Path, fight.Write{Manager: dr.Manager, Hash: h, Value: show, Time: now})
	}
	var ix *managedfields.Index
	for _, f := range d.Fields(ref.UID) {
		if isDrifted[f] {
			continue
		}
		if ix == nil {
			var err error
			if ix, err = managedfields.Parse(obj); err != nil {
				break
			}
		}
		mgr := ""
		for _, o := range ix.Owners(obj, f) {
			if managedfields.IsGitOpsManager(o.Manager) {
				mgr = o.Manager
				break
			}
		}
		if mgr == "" {
			continue // nobody took it back (yet), or a third party removed it
		}
		h, show := fightValue(obj.Object, f)
		over := d.LastManager(ref.UID, f, false)
		if over == "" {
			over = "unknown"
		}
		if d.Observe(ref, f, fight.Write{Manager: mgr, Engine: true, Hash: h, Value: show, Time: now}) {
			reverts = append(reverts, FightRevert{Field: f, Engine: mgr, Over: over})
		}
	}
	for _, f := range d.Fields(ref.UID) {
		if fg, isNew, ok := d.Check(ref.UID, f, now); ok && isNew {
			started = append(started, fg)
		}
	}
	return reverts, started
}

// maxFightValue bounds a value shown in a fight (metrics never carry it).
const maxFightValue = 200

// fightValue returns the hash that tells the values at pointer apart and
// the compact JSON shown for it (truncated); an absent field hashes as
// "absent".
func fightValue(doc map[string]any, pointer string) (hash, show string) {
	v, ok := jsonpointer.Get(doc, pointer)
	if !ok {
		return "absent", "(absent)"
	}
	b, err := json.Marshal(v) // map keys sorted: equal values, equal bytes
	if err != nil {
		return "unencodable", "(unencodable)"
	}
	sum := sha256.Sum256(b)
	show = string(b)
	if len(show) > maxFightValue {
		show = show[:maxFightValue] + "…"
	}
	return hex.EncodeToString(sum[:8]), show
}
