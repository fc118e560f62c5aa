package serve

import (
	"context"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
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
type OwnerCache struct {
	direct  dynamic.Interface
	factory dynamicinformer.DynamicSharedInformerFactory

	mu      sync.Mutex
	byGVK   map[schema.GroupVersionKind]informers.GenericInformer
	mapping map[schema.GroupVersionKind]scan.Kind
}

var _ model.Reader = (*OwnerCache)(nil)

// NewOwnerCache prepares informers for kinds; Start runs them.
func NewOwnerCache(client dynamic.Interface, kinds []scan.Kind) *OwnerCache {
	c := &OwnerCache{
		direct:  client,
		factory: dynamicinformer.NewDynamicSharedInformerFactory(client, 0),
		byGVK:   map[schema.GroupVersionKind]informers.GenericInformer{},
		mapping: map[schema.GroupVersionKind]scan.Kind{},
	}
	for _, k := range kinds {
		inf := c.factory.ForResource(k.GVR)
		// Owners' status is what tells a reconcile (persisted drift), so
		// only managedFields are dropped.
		_ = inf.Informer().SetTransform(func(obj any) (any, error) {
			if u, ok := obj.(*unstructured.Unstructured); ok {
				u.SetManagedFields(nil)
			}
			return obj, nil
		})
		c.byGVK[k.GVK] = inf
		c.mapping[k.GVK] = k
	}
	return c
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

// Start runs the informers until ctx ends.
func (c *OwnerCache) Start(ctx context.Context) { c.factory.Start(ctx.Done()) }

// Synced are the informers' HasSynced functions.
func (c *OwnerCache) Synced() []cache.InformerSynced {
	var out []cache.InformerSynced
	for _, inf := range c.byGVK {
		out = append(out, inf.Informer().HasSynced)
	}
	return out
}

// Shutdown waits for the informers to stop (after ctx of Start ended).
func (c *OwnerCache) Shutdown() { c.factory.Shutdown() }

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

func (c *OwnerCache) resource(gvk schema.GroupVersionKind, namespace string) dynamic.ResourceInterface {
	c.mu.Lock()
	k, ok := c.mapping[gvk]
	c.mu.Unlock()
	gvr := k.GVR
	if !ok {
		gvr = gvk.GroupVersion().WithResource(plural(gvk.Kind))
	}
	if namespace == "" {
		return c.direct.Resource(gvr)
	}
	return c.direct.Resource(gvr).Namespace(namespace)
}
