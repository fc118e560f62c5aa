// Package serve is the engine behind `kubectl drift serve`: drift watched
// continuously from shared informers, fights between a GitOps engine and
// other field managers detected as they happen, and both exposed as
// Prometheus metrics.
//
// Cost model: one LIST and one WATCH per kind (client-go reflectors, which
// re-list on 410 Gone and reconnect after an API server restart); every
// event is re-explained from the informer's cache with the same per-object
// pipeline as scan (scan.ExplainFunc), never a LIST or GET per event for the
// scanned and owner kinds. An informer transform turns each object into an
// entry (entry.go): the identity of an object no engine owns, and for the
// others their JSON without status (drift is never in status), compressed
// with the kind's first object as dictionary: under 2 KB of RSS per watched
// object in all instead of ~20 KB of decoded maps (issue 35, docs/performance.md).
// The worker decodes an entry only when scan's precheck says it may have
// drifted.
//
// The package knows no cobra; the CLI turns flags into Options.
package serve

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/http/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/kubectl-drift/kubectl-drift/internal/engine"
	"github.com/kubectl-drift/kubectl-drift/internal/fight"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/scan"
)

// Options describe one serve run.
type Options struct {
	// Client reads the scanned kinds. It must not give up on a server
	// that stopped answering (serve outlives API server restarts).
	Client dynamic.Interface
	// Kinds are the scanned kinds, already resolved and checked listable.
	Kinds []scan.Kind
	// SkippedKinds were requested but may not be listed or watched
	// (Forbidden): exposed as kubectl_drift_scan_kinds{result="skipped"}.
	SkippedKinds int
	// Owners is the cache the adapters judge with; Run starts it. May be nil.
	Owners *OwnerCache
	// Namespace to watch; "" watches all.
	Namespace string
	// LabelSelector filters the scanned objects.
	LabelSelector string
	// Resync re-delivers every cached object this often (0: never).
	Resync time.Duration
	// Explain is the per-object pipeline (scan's Inspector.Explain).
	Explain scan.ExplainFunc
	// Owned says whether a GitOps engine owns obj (no cluster access):
	// objects it does not own keep only metadata in the cache. It must
	// not write obj: the informers' transform hands it their input.
	Owned func(kind scan.Kind, obj *unstructured.Unstructured) bool
	// Culprit attributes a drifted field to a manager.
	Culprit func(model.FieldDrift) model.ManagerRef
	// Precheck: see Pipeline. nil: every owned object is decoded.
	Precheck func(kind scan.Kind, raw []byte) (candidate bool, err error)
	// Follow and Touches: see Pipeline. nil: engine objects are read once.
	Follow  func(obj *unstructured.Unstructured, deleted bool) []engine.OwnerChange
	Touches func(c engine.OwnerChange, obj *unstructured.Unstructured) bool
	// Reload rebuilds Explain, Owned and Culprit (the engines' adapters)
	// when a settings object the adapters read at start-up changes
	// (OwnerCache.OnSettings: argocd-cm's ignoreDifferences...); every
	// cached object is then re-explained. nil: settings are read once.
	Reload func(ctx context.Context) (Pipeline, error)
	// Fight configures the fight detector.
	Fight fight.Config
	// FightNames adds the object name to kubectl_drift_fights (one series
	// per object: mind cardinality).
	FightNames bool
	// Listener serves the metrics; Run closes it.
	Listener net.Listener
	// Pprof serves /debug/pprof.
	Pprof bool
	// Warn receives warnings; may be nil.
	Warn func(string)
	// Log receives fights as they start; may be nil.
	Log func(string)
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Pipeline is what serve judges with, from the engines' adapters.
type Pipeline struct {
	Explain scan.ExplainFunc
	Owned   func(kind scan.Kind, obj *unstructured.Unstructured) bool
	Culprit func(model.FieldDrift) model.ManagerRef
	// Precheck says from an owned object's JSON, decoding only its
	// metadata, whether Explain may report anything on it (scan's
	// Inspector.Precheck, its first pass): false must mean that Explain
	// of the decoded object returns nil. The worker then skips decoding
	// the object (most objects of a cluster only their engine wrote).
	// nil: every object is decoded and explained.
	Precheck func(kind scan.Kind, raw []byte) (candidate bool, err error)
	// Follow hands the adapters an engine object as the owner cache sees
	// it now (scan.Inspector.UpdateOwner) and says whose verdicts may
	// change; Touches says whether a change names an object
	// (scan.Inspector.Touches). nil: the adapters judge with the engine
	// objects they read at start-up.
	Follow  func(obj *unstructured.Unstructured, deleted bool) []engine.OwnerChange
	Touches func(c engine.OwnerChange, obj *unstructured.Unstructured) bool
}

// reloadKey in the queue rebuilds the pipeline in the worker, so that it
// never overlaps an Observe.
var reloadKey = qkey{kind: -1}

// ownerQueueKind marks an owner object in the queue (key: ownerKey), so
// that the adapters take its change in the worker, between two Observes.
const ownerQueueKind = -2

// Server watches and serves. Build it with New.
type Server struct {
	opts     Options
	factory  dynamicinformer.DynamicSharedInformerFactory
	informer []cache.SharedIndexInformer
	queue    *workqueue.Typed[qkey]
	detector *fight.Detector
	registry *prometheus.Registry
	reverts  *prometheus.CounterVec
	events   *prometheus.CounterVec
	errs     prometheus.Counter
	watchErr *prometheus.CounterVec
	reloads  prometheus.Counter
	ready    atomic.Bool
	pipe     atomic.Pointer[Pipeline]

	mu      sync.Mutex
	reports map[types.UID]*model.Report
	// uids maps the informer key of an object serve holds state of to
	// its uid, to forget that state when it is deleted or recreated.
	uids       map[qkey]types.UID
	lastChange time.Time
	warned     map[string]bool
	// persist follows drifted fields across owner reconciles, by uid.
	persist map[string]map[string]*persistState
}

type qkey struct {
	kind int
	key  string
}

// New prepares the informers and metrics; Run starts them.
func New(opts Options) (*Server, error) {
	if opts.Client == nil || opts.Explain == nil || opts.Owned == nil || opts.Culprit == nil || opts.Listener == nil {
		return nil, errors.New("serve: Client, Explain, Owned, Culprit and Listener are required")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	s := &Server{
		opts:     opts,
		queue:    workqueue.NewTyped[qkey](),
		detector: fight.New(opts.Fight),
		registry: prometheus.NewRegistry(),
		reports:  map[types.UID]*model.Report{},
		uids:     map[qkey]types.UID{},
		warned:   map[string]bool{},
		persist:  map[string]map[string]*persistState{},
		// Until the first event: the start.
		lastChange: opts.Now(),
	}
	// The metrics serve exports: a name, its help and, for a vector, its
	// labels.
	counter := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
	}
	counterVec := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	}
	s.reverts = counterVec(MetricReverts, "Writes by a GitOps engine that put Git's value back over another manager's different value, seen by serve.",
		"namespace", "kind", "engine", "manager")
	s.events = counterVec(MetricEvents, "Objects re-explained after an informer event, by kind.", "kind")
	s.errs = counter(MetricExplainErrors, "Objects whose drift could not be explained (unparsable managedFields).")
	s.watchErr = counterVec(MetricWatchErrors, "Failed LISTs and WATCHes of the informers, by kind; client-go re-lists and retries.", "kind")
	s.reloads = counter(MetricReloads, "Rebuilds of the engines' adapters after a settings object they read (argocd-cm...) changed.")
	s.pipe.Store(&Pipeline{Explain: opts.Explain, Owned: opts.Owned, Culprit: opts.Culprit, Precheck: opts.Precheck, Follow: opts.Follow, Touches: opts.Touches})
	s.registry.MustRegister(s.reverts, s.events, s.errs, s.watchErr, s.reloads,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	if opts.Owners != nil {
		opts.Owners.OnChange(s.requeueOwnedBy)
		opts.Owners.OnOwner(func(key string) { s.queue.Add(qkey{kind: ownerQueueKind, key: key}) })
		if opts.Reload != nil {
			opts.Owners.OnSettings(func() { s.queue.Add(reloadKey) })
		}
	}
	sel := opts.LabelSelector
	s.factory = dynamicinformer.NewFilteredDynamicSharedInformerFactory(opts.Client, opts.Resync, opts.Namespace, func(lo *metav1.ListOptions) {
		lo.LabelSelector = sel
	})
	for i, k := range opts.Kinds {
		inf := s.factory.ForResource(k.GVR).Informer()
		if err := inf.SetTransform(s.transform(k)); err != nil {
			return nil, err
		}
		if err := inf.SetWatchErrorHandlerWithContext(s.watchErrorHandler(k)); err != nil {
			return nil, err
		}
		if _, err := inf.AddEventHandler(s.handler(i)); err != nil {
			return nil, err
		}
		s.informer = append(s.informer, inf)
	}
	return s, nil
}

// Detector is the fight detector (tests, benchmarks).
func (s *Server) Detector() *fight.Detector { return s.detector }

// Ready reports whether the informers synced.
func (s *Server) Ready() bool { return s.ready.Load() }

// transform turns each object the informers receive into an entry:
// identity only for objects no engine owns (most of a cluster), and the
// JSON of everything but status for the others (see entry). It is
// idempotent (client-go hands it objects it transformed already when a
// streaming list's objects are replaced in) and never writes its input: a
// list or watch may hand out objects others still hold (client-go's fake
// tracker does, and -race caught the writes).
func (s *Server) transform(k scan.Kind) cache.TransformFunc {
	apiVersion, kind := k.GVK.GroupVersion().String(), k.GVK.Kind
	c := &codec{}
	return func(obj any) (any, error) {
		in, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return obj, nil
		}
		// Owned reads the object's kind (Argo CD's tracking id names
		// it). A decoded list item or watch event carries it; an object
		// without it is judged through a shallow copy that has it.
		judged := in
		av, _ := in.Object["apiVersion"].(string)
		if kd, _ := in.Object["kind"].(string); av != apiVersion || kd != kind {
			judged = &unstructured.Unstructured{Object: maps.Clone(in.Object)}
			judged.SetGroupVersionKind(k.GVK)
		}
		return newEntry(judged, s.pipe.Load().Owned(k, judged), c)
	}
}

func (s *Server) watchErrorHandler(k scan.Kind) cache.WatchErrorHandlerWithContext {
	return func(ctx context.Context, r *cache.Reflector, err error) {
		s.watchErr.WithLabelValues(k.GroupKind()).Inc()
		if apierrors.IsForbidden(err) {
			s.warnOnce(k.String()+" forbidden", fmt.Sprintf("%s: may no longer be listed or watched: %v", k, err))
		}
		cache.DefaultWatchErrorHandler(ctx, r, err)
	}
}

func (s *Server) warnOnce(key, msg string) {
	s.mu.Lock()
	seen := s.warned[key]
	s.warned[key] = true
	s.mu.Unlock()
	if !seen && s.opts.Warn != nil {
		s.opts.Warn(msg)
	}
}

func (s *Server) handler(kind int) cache.ResourceEventHandler {
	enqueue := func(obj any) {
		key, err := entryKey(obj)
		if err != nil {
			return
		}
		s.queue.Add(qkey{kind: kind, key: key})
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { enqueue(obj) },
		UpdateFunc: func(_, obj any) { enqueue(obj) },
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			if e, ok := obj.(*entry); ok {
				s.forget(e.uid)
			}
			enqueue(obj)
		},
	}
}

func (s *Server) forget(uid types.UID) {
	s.detector.Forget(string(uid))
	s.mu.Lock()
	delete(s.reports, uid)
	delete(s.persist, string(uid))
	s.lastChange = s.opts.Now()
	s.mu.Unlock()
}

// Run watches and serves until ctx ends; then it shuts the HTTP server down
// gracefully and returns nil. An error means the metrics could not be served.
func (s *Server) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	httpSrv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	httpErr := make(chan error, 1)
	go func() { httpErr <- httpSrv.Serve(s.opts.Listener) }()

	if s.opts.Owners != nil {
		s.opts.Owners.Start(ctx)
	}
	s.factory.Start(ctx.Done())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		synced := make([]cache.InformerSynced, 0, len(s.informer))
		for _, inf := range s.informer {
			synced = append(synced, inf.HasSynced)
		}
		if s.opts.Owners != nil {
			synced = append(synced, s.opts.Owners.Synced()...)
		}
		if cache.WaitForCacheSync(ctx.Done(), synced...) {
			s.ready.Store(true)
		}
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		for s.processNext(ctx) {
		}
	}()

	var err error
	select {
	case <-ctx.Done():
	case err = <-httpErr:
		err = fmt.Errorf("metrics server: %w", err)
	}
	cancel()
	s.queue.ShutDown()
	shutCtx, done := context.WithTimeout(context.Background(), 5*time.Second)
	defer done()
	_ = httpSrv.Shutdown(shutCtx)
	wg.Wait()
	s.factory.Shutdown()
	if s.opts.Owners != nil {
		s.opts.Owners.Shutdown()
	}
	return err
}

// Handler serves /metrics, /healthz, /readyz and, if asked, /debug/pprof.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	// "GET /path" patterns answer GET and HEAD, and 405 Method Not
	// Allowed with "Allow: GET, HEAD" to any other method, as exporters
	// do (promhttp itself answers every method).
	mux.Handle("GET /metrics", promhttp.HandlerFor(prometheus.Gatherers{s.registry, prometheus.GathererFunc(s.gather)},
		promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = fmt.Fprintln(w, "ok") })
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !s.Ready() {
			http.Error(w, "informers not synced", http.StatusServiceUnavailable)
			return
		}
		_, _ = fmt.Fprintln(w, "ok")
	})
	if s.opts.Pprof {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	return mux
}

func (s *Server) processNext(ctx context.Context) bool {
	k, shutdown := s.queue.Get()
	if shutdown {
		return false
	}
	defer s.queue.Done(k)
	if k == reloadKey {
		s.reload(ctx)
		return true
	}
	if k.kind == ownerQueueKind {
		s.followOwner(k.key)
		return true
	}
	kind := s.opts.Kinds[k.kind]
	obj, exists, err := s.informer[k.kind].GetIndexer().GetByKey(k.key)
	if err != nil || !exists {
		s.mu.Lock()
		delete(s.uids, k)
		s.mu.Unlock()
		return true
	}
	e, ok := obj.(*entry)
	if !ok {
		return true
	}
	if s.clean(kind, e) {
		s.observeClean(ctx, kind, e.uid)
	} else {
		u, err := e.object(kind)
		if err != nil {
			s.errs.Inc()
			return true
		}
		s.Observe(ctx, kind, u)
	}
	follows := len(s.detector.Fields(string(e.uid))) > 0
	s.mu.Lock()
	if old, had := s.uids[k]; had && old != e.uid {
		// Deleted and recreated between two events of ours.
		s.mu.Unlock()
		s.forget(old)
		s.mu.Lock()
	}
	// Only an object serve holds state of (a report, reconciles counted,
	// fields the detector follows) has anything to forget: the others,
	// most objects, cost no entry (issue 35).
	_, reported := s.reports[e.uid]
	_, persisting := s.persist[string(e.uid)]
	if reported || persisting || follows {
		s.uids[k] = e.uid
	} else {
		delete(s.uids, k)
	}
	s.mu.Unlock()
	return true
}

// clean says, without decoding e, that Observe of its object would find
// no drift and feed the fight detector nothing: no engine owned it (the
// pipeline finds no owner on an identity), or Precheck rules it out; and
// the detector follows none of its fields (a field it follows that is
// clean again is an engine's revert, which Observe must see).
func (s *Server) clean(kind scan.Kind, e *entry) bool {
	if len(s.detector.Fields(string(e.uid))) > 0 {
		return false
	}
	if !e.owned() {
		return true
	}
	pre := s.pipe.Load().Precheck
	if pre == nil {
		return false
	}
	raw, err := e.json()
	if err != nil {
		return false
	}
	cand, err := pre(kind, raw)
	return err == nil && !cand
}

// observeClean is Observe of an object whose report is nil and that feeds
// the fight detector nothing (clean): what Observe does then, without the
// object.
func (s *Server) observeClean(ctx context.Context, kind scan.Kind, uid types.UID) {
	s.events.WithLabelValues(kind.GroupKind()).Inc()
	now := s.opts.Now()
	s.persisted(ctx, nil, string(uid), now)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastChange = now
	delete(s.reports, uid)
}

// Observe re-explains obj and feeds the fight detector (scan.FeedFights,
// as `scan --watch` does): each drifted field is a write by its culprit,
// and each field the detector follows that an engine owns again is a write
// by the engine. Calls must not overlap.
func (s *Server) Observe(ctx context.Context, kind scan.Kind, obj *unstructured.Unstructured) {
	s.events.WithLabelValues(kind.GroupKind()).Inc()
	now := s.opts.Now()
	uid := obj.GetUID()
	pipe := s.pipe.Load()
	rep, err := pipe.Explain(ctx, kind, obj)
	if err != nil {
		s.errs.Inc()
		rep = nil
	}
	ref := fight.Object{UID: string(uid), Group: kind.GVK.Group, Kind: kind.GVK.Kind, Namespace: obj.GetNamespace(), Name: obj.GetName()}
	var drifted []scan.FightDrift
	if rep != nil {
		for _, d := range rep.Drifts {
			if d.Counts() {
				drifted = append(drifted, scan.FightDrift{Path: d.Path, Manager: pipe.Culprit(d).Manager})
			}
		}
	}
	reverts, started := scan.FeedFights(s.detector, ref, obj, drifted, now)
	for _, r := range reverts {
		s.reverts.WithLabelValues(ref.Namespace, kind.GroupKind(), engineOf(r.Engine), r.Over).Inc()
	}
	s.persisted(ctx, rep, string(uid), now)
	if s.opts.Log != nil {
		for _, fg := range started {
			s.opts.Log(fmt.Sprintf("fight: %s %s/%s %s: %s writes %s, %s writes %s; %d flips in %s",
				groupKind(ref.Group, ref.Kind), ref.Namespace, ref.Name, fg.Field, fg.EngineManager, fg.EngineValue, fg.Manager, fg.Value,
				fg.Flips, fg.Last.Sub(fg.First).Round(time.Second)))
		}
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	// The time of the last object explained is what scan's timestamp
	// metric means here: a stale one (no event, no resync) is alerted on.
	s.lastChange = now
	if rep == nil || !rep.HasDrift() {
		delete(s.reports, uid)
		return
	}
	s.reports[uid] = rep
}

// engineOf names the engine of a GitOps manager, as the engine label of
// scan's metrics does: the registered engine whose manager it is, "" for
// none.
func engineOf(manager string) string {
	m := strings.ToLower(manager)
	for _, d := range engine.All() {
		if d.IsManager(m) {
			return string(d.Name)
		}
	}
	return ""
}

// snapshot returns the drifted reports held and the time of the last change.
func (s *Server) snapshot() ([]*model.Report, time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// Unordered: gather, the only reader, sums them into families, and
	// the exposition sorts the series. Sorting 13,500 reports (a
	// 100k-object cluster) under s.mu cost a scrape ~9 ms of its ~33 and
	// held the workers off meanwhile (BenchmarkGather).
	out := make([]*model.Report, 0, len(s.reports))
	for _, r := range s.reports {
		out = append(out, r)
	}
	return out, s.lastChange
}

// reload rebuilds the pipeline and re-explains every cached object: a
// settings change (an ignoreDifferences rule added or removed) may change
// the verdict on any object the engine owns. Objects the informer
// transform stripped to metadata stay so: a change of what marks
// ownership (argocd-cm's tracking method or instance label) needs a
// restart.
func (s *Server) reload(ctx context.Context) {
	p, err := s.opts.Reload(ctx)
	if err != nil {
		if s.opts.Warn != nil {
			s.opts.Warn(fmt.Sprintf("settings changed, but the engines' adapters could not be rebuilt (keeping the old ones): %v", err))
		}
		return
	}
	s.pipe.Store(&p)
	s.reloads.Inc()
	n := 0
	for i, inf := range s.informer {
		for _, key := range inf.GetStore().ListKeys() {
			s.queue.Add(qkey{kind: i, key: key})
			n++
		}
	}
	if s.opts.Log != nil {
		s.opts.Log(fmt.Sprintf("settings changed: engines' adapters rebuilt, re-explaining %d objects", n))
	}
}

// followOwner hands the adapters an engine object's change (an
// Application's recorded status, a Kustomization suspended...) and
// re-explains the cached objects whose verdict it may change: those it
// names, or every object of the owner. No request: the object comes from
// the owner cache, the objects from the informers.
func (s *Server) followOwner(key string) {
	pipe := s.pipe.Load()
	if pipe.Follow == nil || s.opts.Owners == nil {
		return
	}
	obj, deleted, ok := s.opts.Owners.owner(key)
	if !ok {
		return
	}
	for _, c := range pipe.Follow(obj, deleted) {
		if c.All {
			if pipe.Touches == nil {
				continue
			}
			for i, inf := range s.informer {
				for _, o := range inf.GetStore().List() {
					e, ok := o.(*entry)
					if !ok || !e.owned() {
						continue // no owner: no change of one touches it
					}
					if u, err := e.light(s.opts.Kinds[i]); err == nil && pipe.Touches(c, u) {
						s.requeueObject(i, e.namespace, e.name)
					}
				}
			}
			continue
		}
		for _, r := range c.Objects {
			for i, k := range s.opts.Kinds {
				if k.GVK.Group == r.Group && k.GVK.Kind == r.Kind {
					s.requeueObject(i, r.Namespace, r.Name)
				}
			}
		}
	}
}

// requeueObject re-explains the cached object of kind i named
// namespace/name, if there is one.
func (s *Server) requeueObject(i int, namespace, name string) {
	key := name
	if namespace != "" && s.opts.Kinds[i].Namespaced {
		key = namespace + "/" + name
	}
	if _, exists, err := s.informer[i].GetIndexer().GetByKey(key); err == nil && exists {
		s.queue.Add(qkey{kind: i, key: key})
	}
}

// requeueOwnedBy re-explains the drifted objects an owner owns (its status
// may record a reconcile the drift survived).
func (s *Server) requeueOwnedBy(kind, namespace, name string) {
	s.mu.Lock()
	var keys []qkey
	for k, uid := range s.uids {
		rep := s.reports[uid]
		if rep == nil {
			continue
		}
		for _, o := range rep.Owners {
			if o.Kind == kind && o.Namespace == namespace && o.Name == name {
				keys = append(keys, k)
				break
			}
		}
	}
	s.mu.Unlock()
	for _, k := range keys {
		s.queue.Add(k)
	}
}
