// Package cluster is kubectl-drift's read-only view of a Kubernetes cluster:
// clients built from kubectl's own flags (genericclioptions.ConfigFlags),
// RESTMapper-based resolution of "TYPE/NAME" arguments, paginated LISTs, a
// request counter and errors a person can act on.
//
// Nothing here writes to the cluster: the tool promises to work with
// get/list RBAC, so Client only exposes Get and List.
package cluster

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// Options tune the clients. The zero value is usable.
type Options struct {
	// QPS and Burst are client-go's client-side rate limits for object
	// requests (not discovery). Zero means 50 and 100: a scan makes one
	// LIST per kind, so the limiter should not be what makes it slow.
	QPS   float32
	Burst int
	// PageSize is the LIST page size (limit/continue). Zero means 500, the
	// page size kubectl get uses.
	PageSize int64
	// ResourceVersionZero lists with resourceVersion=0: served from the API
	// server's watch cache, cheaper for etcd, possibly slightly stale, and
	// not paginated (the server ignores limit for RV=0 cache reads).
	ResourceVersionZero bool
}

const (
	defaultQPS      = 50
	defaultBurst    = 100
	defaultPageSize = 500
)

// Client reads objects from one cluster. It implements model.Reader.
// Build it with New; it contacts the server only when first used.
type Client struct {
	flags     *genericclioptions.ConfigFlags
	opts      Options
	config    *rest.Config
	dynamic   dynamic.Interface
	mapper    meta.RESTMapper
	discovery discovery.CachedDiscoveryInterface
	counter   *Counter
	// openAPIRootFile caches the /openapi/v3 list beside discovery's.
	openAPIRootFile string
}

var _ model.Reader = (*Client)(nil)

// New builds a Client from kubectl's flags (kubeconfig, context, namespace,
// impersonation, --server, --request-timeout...). Discovery uses the disk
// cache ConfigFlags configures (~/.kube/cache), the same one kubectl uses.
func New(flags *genericclioptions.ConfigFlags, opts Options) (*Client, error) {
	if opts.QPS == 0 {
		opts.QPS = defaultQPS
	}
	if opts.Burst == 0 {
		opts.Burst = defaultBurst
	}
	if opts.PageSize == 0 {
		opts.PageSize = defaultPageSize
	}
	cfg, err := flags.ToRESTConfig()
	if err != nil {
		return nil, ConfigError(err)
	}
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = opts.QPS, opts.Burst
	counter := NewCounter()
	cfg.Wrap(counter.Wrap)
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, ConfigError(err)
	}
	disc, err := flags.ToDiscoveryClient()
	if err != nil {
		return nil, ConfigError(err)
	}
	// ConfigFlags' mapper is a deferred discovery mapper (it resets and
	// retries once when a kind is unknown, so a CRD installed after the
	// cache was written is still found) behind kubectl's short-name
	// expander (deploy, cm, ...): client-go restmapper/shortcut.go.
	mapper, err := flags.ToRESTMapper()
	if err != nil {
		return nil, ConfigError(err)
	}
	return &Client{flags: flags, opts: opts, config: cfg, dynamic: dyn, mapper: mapper, discovery: disc, counter: counter,
		openAPIRootFile: openAPIRootPath(flags, cfg.Host)}, nil
}

// Mapper returns the RESTMapper (with short names) the client resolves with.
func (c *Client) Mapper() meta.RESTMapper { return c.mapper }

// Discovery returns the cached discovery client.
func (c *Client) Discovery() discovery.CachedDiscoveryInterface { return c.discovery }

// Counter returns the counter of requests made through Get and List.
func (c *Client) Counter() *Counter { return c.counter }

// Host is the API server URL the client talks to.
func (c *Client) Host() string { return c.config.Host }

// Namespace returns the namespace from --namespace or the kubeconfig
// context ("default" when neither sets one), and whether it was explicit.
func (c *Client) Namespace() (string, bool, error) {
	return c.flags.ToRawKubeConfigLoader().Namespace()
}

// RESTMapping maps a kind to its resource and scope.
func (c *Client) RESTMapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	m, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		if meta.IsNoMatchError(err) {
			return nil, &UnknownTypeError{Type: gvk.Kind + groupSuffix(gvk.Group), Err: err}
		}
		return nil, ServerError(c.config.Host, err)
	}
	return m, nil
}

// resourceFor returns the dynamic client for a kind in a namespace (the
// namespace is dropped for cluster-scoped kinds).
func (c *Client) resourceFor(gvk schema.GroupVersionKind, namespace string) (dynamic.ResourceInterface, *meta.RESTMapping, error) {
	m, err := c.RESTMapping(gvk)
	if err != nil {
		return nil, nil, err
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace && namespace != "" {
		return c.dynamic.Resource(m.Resource).Namespace(namespace), m, nil
	}
	return c.dynamic.Resource(m.Resource), m, nil
}

// Get reads one object. Errors wrap the API server's StatusError (so
// apierrors.IsNotFound/IsForbidden work) and print as one line.
func (c *Client) Get(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error) {
	ri, m, err := c.resourceFor(gvk, namespace)
	if err != nil {
		return nil, err
	}
	if m.Scope.Name() != meta.RESTScopeNameNamespace {
		namespace = ""
	}
	obj, err := ri.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, wrapAPIError(c.config.Host, "get", m.Resource.GroupResource(), namespace, name, err)
	}
	return obj, nil
}

// List reads every object of a kind, one page of Options.PageSize at a time
// (limit/continue, as kubectl get does), in namespace or in all namespaces
// when namespace is "".
func (c *Client) List(ctx context.Context, gvk schema.GroupVersionKind, namespace, labelSelector string) ([]unstructured.Unstructured, error) {
	ri, m, err := c.resourceFor(gvk, namespace)
	if err != nil {
		return nil, err
	}
	if m.Scope.Name() != meta.RESTScopeNameNamespace {
		namespace = ""
	}
	opts := metav1.ListOptions{LabelSelector: labelSelector, Limit: c.opts.PageSize}
	if c.opts.ResourceVersionZero {
		opts.ResourceVersion = "0"
		opts.Limit = 0
	}
	var items []unstructured.Unstructured
	for {
		page, err := ri.List(ctx, opts)
		if err != nil {
			return nil, wrapAPIError(c.config.Host, "list", m.Resource.GroupResource(), namespace, "", err)
		}
		for i := range page.Items {
			// A LIST returns items without apiVersion/kind in some
			// encodings; callers key objects by GVK, so set it.
			if page.Items[i].GetKind() == "" {
				page.Items[i].SetGroupVersionKind(m.GroupVersionKind)
			}
		}
		items = append(items, page.Items...)
		cont := page.GetContinue()
		if cont == "" || opts.ResourceVersion == "0" {
			return items, nil
		}
		opts.Continue = cont
	}
}

func groupSuffix(group string) string {
	if group == "" {
		return ""
	}
	return "." + group
}

// describe renders `deployments.apps "web"` like the API server does.
func describe(gr schema.GroupResource, name string) string {
	s := gr.String()
	if name != "" {
		s += fmt.Sprintf(" %q", name)
	}
	return s
}
