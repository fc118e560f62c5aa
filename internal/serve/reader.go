package serve

import (
	"context"
	"maps"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/scan"
)

// OwnerCache is the model.Reader the engines' adapters judge with in serve:
// the owner kinds (Applications, Kustomizations, HelmReleases...) are read
// from shared informers over all namespaces, so judging an event costs no
// request. Kinds without an informer, and owner kinds before their informer
// synced (the adapters read their settings at start-up), are read from the
// API server directly.
//
// The objects the adapters GET before Start are their settings (Argo CD's
// argocd-cm and argocd-cmd-params-cm): Start watches each of them (one
// informer per object, by name) and OnSettings hears when one changes, so
// serve rebuilds the adapters without a restart; the rebuilt adapters read
// them from those informers.
type OwnerCache struct {
	direct  dynamic.Interface
	factory dynamicinformer.DynamicSharedInformerFactory

	mu      sync.Mutex
	byGVK   map[schema.GroupVersionKind]informers.GenericInformer
	mapping map[schema.GroupVersionKind]scan.Kind
	// started: Start ran; settings Gets are no longer recorded.
	started bool
	// settings are the objects read directly before Start, and their
	// informers once started.
	settings   map[settingsKey]informers.GenericInformer
	settingsFn []func()
	settingsF  []dynamicinformer.DynamicSharedInformerFactory
}

type settingsKey struct {
	gvk             schema.GroupVersionKind
	namespace, name string
}

var _ model.Reader = (*OwnerCache)(nil)

// NewOwnerCache prepares informers for kinds; Start runs them.
func NewOwnerCache(client dynamic.Interface, kinds []scan.Kind) *OwnerCache {
	c := &OwnerCache{
		direct:   client,
		factory:  dynamicinformer.NewDynamicSharedInformerFactory(client, 0),
		byGVK:    map[schema.GroupVersionKind]informers.GenericInformer{},
		mapping:  map[schema.GroupVersionKind]scan.Kind{},
		settings: map[settingsKey]informers.GenericInformer{},
	}
	for _, k := range kinds {
		inf := c.factory.ForResource(k.GVR)
		// Owners' status is what tells a reconcile (persisted drift), so
		// only managedFields are dropped.
		_ = inf.Informer().SetTransform(dropManagedFields)
		c.byGVK[k.GVK] = inf
		c.mapping[k.GVK] = k
	}
	return c
}

// dropManagedFields is the owner informers' transform: obj without its
// managedFields, in a copy of its top two levels. As serve's own
// transform, it never writes its input (client-go's fake tracker still
// holds it).
func dropManagedFields(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	md, ok := u.Object["metadata"].(map[string]any)
	if _, managed := md["managedFields"]; !ok || !managed {
		return obj, nil
	}
	md = maps.Clone(md)
	delete(md, "managedFields")
	out := maps.Clone(u.Object)
	out["metadata"] = md
	return &unstructured.Unstructured{Object: out}, nil
}

// OnChange calls fn (from the informers' goroutines) when an owner object
// is added or changes: serve re-explains the objects it owns, so a
// reconcile is counted without waiting for a resync. Call before Start.
func (c *OwnerCache) OnChange(fn func(kind, namespace, name string)) {
	for gvk, inf := range c.byGVK {
		kind := gvk.Kind
		call := func(obj any) {
			if u, ok := obj.(*unstructured.Unstructured); ok {
				fn(kind, u.GetNamespace(), u.GetName())
			}
		}
		_, _ = inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    call,
			UpdateFunc: func(_, obj any) { call(obj) },
		})
	}
}

// OnOwner calls fn (from the informers' goroutines) with a key for
// OwnerCache.owner when an owner object is added (the initial list
// included: it may be newer than what the adapters read at start-up),
// changes or is deleted. Call before Start.
func (c *OwnerCache) OnOwner(fn func(key string)) {
	for gvk, inf := range c.byGVK {
		call := func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			if u, ok := obj.(*unstructured.Unstructured); ok {
				fn(ownerKey(gvk, u.GetNamespace(), u.GetName()))
			}
		}
		_, _ = inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    call,
			UpdateFunc: func(_, obj any) { call(obj) },
			DeleteFunc: call,
		})
	}
}

// ownerKey names an owner object for OnOwner and owner.
func ownerKey(gvk schema.GroupVersionKind, namespace, name string) string {
	return gvk.Group + "|" + gvk.Version + "|" + gvk.Kind + "|" + namespace + "|" + name
}

// owner returns the owner object key names as its informer holds it now
// (a copy), or a stub naming it when it is gone (deleted); ok is false
// for a key of no cached kind.
func (c *OwnerCache) owner(key string) (obj *unstructured.Unstructured, deleted, ok bool) {
	parts := strings.SplitN(key, "|", 5)
	if len(parts) != 5 {
		return nil, false, false
	}
	gvk := schema.GroupVersionKind{Group: parts[0], Version: parts[1], Kind: parts[2]}
	c.mu.Lock()
	inf, known := c.byGVK[gvk]
	c.mu.Unlock()
	if !known {
		return nil, false, false
	}
	ikey := parts[4]
	if parts[3] != "" {
		ikey = parts[3] + "/" + parts[4]
	}
	cached, exists, err := inf.Informer().GetIndexer().GetByKey(ikey)
	if u, isU := cached.(*unstructured.Unstructured); err == nil && exists && isU {
		u = u.DeepCopy()
		u.SetGroupVersionKind(gvk)
		return u, false, true
	}
	stub := &unstructured.Unstructured{}
	stub.SetGroupVersionKind(gvk)
	stub.SetNamespace(parts[3])
	stub.SetName(parts[4])
	return stub, true, true
}

// OnSettings calls fn (from an informer's goroutine) when a settings
// object (see OwnerCache) changes, appears or goes away after Start. Call
// before Start.
func (c *OwnerCache) OnSettings(fn func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.settingsFn = append(c.settingsFn, fn)
}

// Start runs the informers until ctx ends: the owner kinds', and one per
// settings object read so far.
func (c *OwnerCache) Start(ctx context.Context) {
	c.mu.Lock()
	c.started = true
	fns := append([]func(){}, c.settingsFn...)
	for key := range c.settings {
		gvr := c.gvrLocked(key.gvk)
		name := key.name
		f := dynamicinformer.NewFilteredDynamicSharedInformerFactory(c.direct, 0, key.namespace, func(lo *metav1.ListOptions) {
			lo.FieldSelector = "metadata.name=" + name
		})
		inf := f.ForResource(gvr)
		changed := func(obj any) {
			if u, ok := obj.(*unstructured.Unstructured); ok && u.GetName() != name {
				return // a fake or old server that ignores the field selector
			}
			for _, fn := range fns {
				fn()
			}
		}
		_, _ = inf.Informer().AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
			// The initial list is what the adapters read already.
			AddFunc: func(obj any, initial bool) {
				if !initial {
					changed(obj)
				}
			},
			UpdateFunc: func(_, obj any) { changed(obj) },
			DeleteFunc: func(obj any) {
				if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
					obj = t.Obj
				}
				changed(obj)
			},
		})
		c.settings[key] = inf
		c.settingsF = append(c.settingsF, f)
		f.Start(ctx.Done())
	}
	c.mu.Unlock()
	c.factory.Start(ctx.Done())
}

// Synced are the informers' HasSynced functions.
func (c *OwnerCache) Synced() []cache.InformerSynced {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []cache.InformerSynced
	for _, inf := range c.byGVK {
		out = append(out, inf.Informer().HasSynced)
	}
	for _, inf := range c.settings {
		if inf != nil {
			out = append(out, inf.Informer().HasSynced)
		}
	}
	return out
}

// Shutdown waits for the informers to stop (after ctx of Start ended).
func (c *OwnerCache) Shutdown() {
	c.factory.Shutdown()
	c.mu.Lock()
	fs := c.settingsF
	c.mu.Unlock()
	for _, f := range fs {
		f.Shutdown()
	}
}

func (c *OwnerCache) informer(gvk schema.GroupVersionKind) (informers.GenericInformer, scan.Kind, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	inf, ok := c.byGVK[gvk]
	if !ok || !inf.Informer().HasSynced() {
		return nil, scan.Kind{}, false
	}
	return inf, c.mapping[gvk], true
}

// Get implements model.Reader.
func (c *OwnerCache) Get(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error) {
	if u, ok, err := c.settingsGet(gvk, namespace, name); ok {
		return u, err
	}
	inf, k, ok := c.informer(gvk)
	if !ok {
		return c.directGet(ctx, gvk, namespace, name)
	}
	var obj any
	var err error
	if namespace != "" {
		obj, err = inf.Lister().ByNamespace(namespace).Get(name)
	} else {
		obj, err = inf.Lister().Get(name)
	}
	if err != nil {
		return nil, err // the lister's NotFound is the API's StatusError
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, apierrors.NewNotFound(k.GVR.GroupResource(), name)
	}
	// Cached objects are shared: callers get their own copy.
	return u.DeepCopy(), nil
}

// List implements model.Reader.
func (c *OwnerCache) List(ctx context.Context, gvk schema.GroupVersionKind, namespace, labelSelector string) ([]unstructured.Unstructured, error) {
	inf, _, ok := c.informer(gvk)
	if !ok {
		return c.directList(ctx, gvk, namespace, labelSelector)
	}
	sel := labels.Everything()
	if labelSelector != "" {
		var err error
		if sel, err = labels.Parse(labelSelector); err != nil {
			return nil, err
		}
	}
	var objs []any
	var err error
	if namespace != "" {
		objs, err = listNS(inf, namespace, sel)
	} else {
		objs, err = listAll(inf, sel)
	}
	if err != nil {
		return nil, err
	}
	out := make([]unstructured.Unstructured, 0, len(objs))
	for _, o := range objs {
		if u, ok := o.(*unstructured.Unstructured); ok {
			out = append(out, *u.DeepCopy())
		}
	}
	return out, nil
}

func listNS(inf informers.GenericInformer, ns string, sel labels.Selector) ([]any, error) {
	rs, err := inf.Lister().ByNamespace(ns).List(sel)
	out := make([]any, len(rs))
	for i, r := range rs {
		out[i] = r
	}
	return out, err
}

func listAll(inf informers.GenericInformer, sel labels.Selector) ([]any, error) {
	rs, err := inf.Lister().List(sel)
	out := make([]any, len(rs))
	for i, r := range rs {
		out[i] = r
	}
	return out, err
}

// directGet and directList need the resource of a kind; kinds the cache
// was not told about are resolved by the conventional plural, which holds
// for every kind the adapters read (ConfigMap, Secret, and the engines').
func (c *OwnerCache) directGet(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error) {
	return c.resource(gvk, namespace).Get(ctx, name, getOptions)
}

func (c *OwnerCache) directList(ctx context.Context, gvk schema.GroupVersionKind, namespace, labelSelector string) ([]unstructured.Unstructured, error) {
	l, err := c.resource(gvk, namespace).List(ctx, listOptions(labelSelector))
	if err != nil {
		return nil, err
	}
	for i := range l.Items {
		l.Items[i].SetGroupVersionKind(gvk)
	}
	return l.Items, nil
}

// settingsGet records a settings object read before Start, and serves one
// from its informer once that synced; ok is false when the caller should
// read on.
func (c *OwnerCache) settingsGet(gvk schema.GroupVersionKind, namespace, name string) (u *unstructured.Unstructured, ok bool, err error) {
	key := settingsKey{gvk: gvk, namespace: namespace, name: name}
	c.mu.Lock()
	inf, known := c.settings[key]
	if !c.started {
		// Owner kinds are cached by their informers, not settings.
		if _, owner := c.byGVK[gvk]; !owner && !known {
			c.settings[key] = nil
		}
		c.mu.Unlock()
		return nil, false, nil
	}
	c.mu.Unlock()
	if inf == nil || !inf.Informer().HasSynced() {
		return nil, false, nil
	}
	var obj runtime.Object
	if namespace != "" {
		obj, err = inf.Lister().ByNamespace(namespace).Get(name)
	} else {
		obj, err = inf.Lister().Get(name)
	}
	if err != nil {
		return nil, true, err // the lister's NotFound is the API's StatusError
	}
	cached, isU := obj.(*unstructured.Unstructured)
	if !isU {
		return nil, true, apierrors.NewNotFound(c.gvr(gvk).GroupResource(), name)
	}
	return cached.DeepCopy(), true, nil
}

// gvr is the resource of a kind: the mapping's, else the conventional
// plural.
func (c *OwnerCache) gvr(gvk schema.GroupVersionKind) schema.GroupVersionResource {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gvrLocked(gvk)
}

// gvrLocked is gvr with c.mu held.
func (c *OwnerCache) gvrLocked(gvk schema.GroupVersionKind) schema.GroupVersionResource {
	if k, ok := c.mapping[gvk]; ok {
		return k.GVR
	}
	return gvk.GroupVersion().WithResource(plural(gvk.Kind))
}

func (c *OwnerCache) resource(gvk schema.GroupVersionKind, namespace string) dynamic.ResourceInterface {
	gvr := c.gvr(gvk)
	if namespace == "" {
		return c.direct.Resource(gvr)
	}
	return c.direct.Resource(gvr).Namespace(namespace)
}
