package cluster

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
)

// Streamer LISTs objects and hands them over one at a time, decoding the
// response body as it arrives: memory holds one object, not a page (and not
// the whole list when the watch cache ignores limit for resourceVersion=0).
// It is what scan uses; Client.List stays the simple path for a handful of
// objects. Build it with Client.NewStreamer; it is safe for concurrent use.
type Streamer struct {
	host   string
	cfg    *rest.Config
	client *http.Client
	// requests counts the LIST requests (pages) made, for --stats.
	requests atomic.Int64
}

// Requests is the number of LIST requests (pages) the streamer has made.
func (s *Streamer) Requests() int64 { return s.requests.Load() }

// StreamOptions tune one streamed LIST.
type StreamOptions struct {
	LabelSelector string
	// Limit is the page size (limit/continue). Zero means 500, kubectl get's.
	Limit int64
	// ResourceVersionZero asks for resourceVersion=0 on the first request:
	// the API server answers from its watch cache instead of a quorum read
	// from etcd. The answer may lag a few milliseconds behind etcd, which a
	// scan does not care about. The cache may ignore limit and send the whole
	// list in one response: streaming keeps that cheap on our side.
	ResourceVersionZero bool
	// Protobuf asks for the protobuf encoding (as client-go's typed clients
	// and the controllers built on them do) when the kind's Go type is
	// known to client-go's scheme: a built-in kind. The server answers
	// JSON for others (CRs, aggregated APIs that cannot), and fn then gets
	// JSON. Protobuf items are object messages without the k8s envelope;
	// JSON items start with '{', protobuf ones with their metadata field's
	// tag (0x0a).
	Protobuf bool
}

// NewStreamer builds a streamer sharing the client's rest config (rate
// limits, the request Counter, impersonation). All LISTs share one HTTP
// client and one rate limiter, so concurrent kinds do not multiply QPS.
func (c *Client) NewStreamer() (*Streamer, error) {
	cfg := rest.CopyConfig(c.config)
	if cfg.RateLimiter == nil && cfg.QPS > 0 {
		cfg.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(cfg.QPS, cfg.Burst)
	}
	// Errors are decoded as metav1.Status, so apierrors.IsForbidden works
	// on what Stream returns; objects themselves are never decoded here.
	cfg.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	cfg.AcceptContentTypes = "application/json"
	cfg.ContentType = "application/json"
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, ConfigError(err)
	}
	return &Streamer{host: c.config.Host, cfg: cfg, client: hc}, nil
}

// List streams every object of m's resource in namespace (all namespaces
// when "", and always for cluster-scoped kinds). fn gets each object's raw
// JSON; the slice is reused for the next object, so fn must copy what it
// keeps. Items of typed lists carry no apiVersion/kind: callers know the
// kind from m. It returns the list's resourceVersion (to start a watch from).
// Errors wrap the API server's StatusError (IsForbidden works through them).
func (s *Streamer) List(ctx context.Context, m *meta.RESTMapping, namespace string, o StreamOptions, fn func(raw []byte) error) (string, error) {
	gv := m.Resource.GroupVersion()
	cfg := *s.cfg
	cfg.GroupVersion = &schema.GroupVersion{Group: gv.Group, Version: gv.Version}
	if o.Protobuf && scheme.Scheme.Recognizes(m.GroupVersionKind) {
		// JSON stays acceptable: an aggregated API server may not speak
		// protobuf; the body's first bytes say which came.
		cfg.AcceptContentTypes = ProtobufContentType + ",application/json"
	}
	cfg.APIPath = "/apis"
	if gv.Group == "" {
		cfg.APIPath = "/api"
	}
	rc, err := rest.RESTClientForConfigAndClient(&cfg, s.client)
	if err != nil {
		return "", ConfigError(err)
	}
	namespaced := m.Scope.Name() == meta.RESTScopeNameNamespace
	if !namespaced {
		namespace = ""
	}
	limit := o.Limit
	if limit <= 0 {
		limit = defaultPageSize
	}
	var cont, rv string
	first := true
	for first || cont != "" {
		req := rc.Get().NamespaceIfScoped(namespace, namespaced && namespace != "").Resource(m.Resource.Resource).
			Param("limit", strconv.FormatInt(limit, 10))
		if o.LabelSelector != "" {
			req = req.Param("labelSelector", o.LabelSelector)
		}
		if cont != "" {
			// A continue token pins the snapshot; resourceVersion must not
			// be sent with it.
			req = req.Param("continue", cont)
		} else if o.ResourceVersionZero {
			req = req.Param("resourceVersion", "0")
		}
		first = false
		s.requests.Add(1)
		body, err := req.Stream(ctx)
		if err != nil {
			return "", wrapAPIError(s.host, "list", m.Resource.GroupResource(), namespace, "", ServerError(s.host, err))
		}
		var pageRV string
		pageRV, cont, err = decodeBody(body, fn)
		_ = body.Close()
		if err != nil {
			var ce callerError
			if errors.As(err, &ce) {
				return "", ce.err
			}
			return "", wrapAPIError(s.host, "list", m.Resource.GroupResource(), namespace, "", ServerError(s.host, err))
		}
		if pageRV != "" {
			rv = pageRV
		}
	}
	return rv, nil
}

// decodeBody decodes a LIST response in whichever encoding the server
// chose: protobuf (its envelope's magic) or JSON.
func decodeBody(body io.Reader, fn func(raw []byte) error) (rv, cont string, err error) {
	br := bufio.NewReaderSize(body, 64<<10)
	if head, _ := br.Peek(len(protoMagic)); bytes.Equal(head, protoMagic) {
		return decodeProtoList(br, fn)
	}
	return decodeList(br, fn)
}

// decodeList walks a List document token by token and calls fn for each
// element of "items" without ever holding more than one of them.
func decodeList(r io.Reader, fn func(raw []byte) error) (rv, cont string, err error) {
	dec := json.NewDecoder(r)
	if err := expectDelim(dec, '{'); err != nil {
		return "", "", err
	}
	var item json.RawMessage // reused: RawMessage.UnmarshalJSON appends to [:0]
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return "", "", fmt.Errorf("decode list: %w", err)
		}
		key, _ := tok.(string)
		switch key {
		case "metadata":
			var md struct {
				ResourceVersion string `json:"resourceVersion"`
				Continue        string `json:"continue"`
			}
			if err := dec.Decode(&md); err != nil {
				return "", "", fmt.Errorf("decode list metadata: %w", err)
			}
			rv, cont = md.ResourceVersion, md.Continue
		case "items":
			tok, err := dec.Token()
			if err != nil {
				return "", "", fmt.Errorf("decode list items: %w", err)
			}
			if tok == nil { // "items": null
				continue
			}
			if d, ok := tok.(json.Delim); !ok || d != '[' {
				return "", "", fmt.Errorf("decode list: items is not a list")
			}
			for dec.More() {
				if err := dec.Decode(&item); err != nil {
					return "", "", fmt.Errorf("decode list item: %w", err)
				}
				if err := fn(item); err != nil {
					return "", "", callerError{err}
				}
			}
			if err := expectDelim(dec, ']'); err != nil {
				return "", "", err
			}
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return "", "", fmt.Errorf("decode list: %w", err)
			}
		}
	}
	return rv, cont, expectDelim(dec, '}')
}

// callerError carries fn's own error through decodeList unwrapped: it is
// not a failure of the LIST.
type callerError struct{ err error }

func (e callerError) Error() string { return e.err.Error() }

func expectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("decode list: %w", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return fmt.Errorf("decode list: expected %q, got %v", want, tok)
	}
	return nil
}

// Watch opens a watch on m's resource in namespace (all when "") from
// resourceVersion, with bookmarks so a reconnect can resume. Errors wrap the
// API server's StatusError (an expired resourceVersion is IsResourceExpired
// or IsGone).
func (c *Client) Watch(ctx context.Context, m *meta.RESTMapping, namespace, labelSelector, resourceVersion string) (watch.Interface, error) {
	namespaced := m.Scope.Name() == meta.RESTScopeNameNamespace
	var ri dynamic.ResourceInterface = c.dynamic.Resource(m.Resource)
	if namespaced && namespace != "" {
		ri = c.dynamic.Resource(m.Resource).Namespace(namespace)
	} else {
		namespace = ""
	}
	w, err := ri.Watch(ctx, metav1.ListOptions{
		LabelSelector:       labelSelector,
		ResourceVersion:     resourceVersion,
		AllowWatchBookmarks: true,
	})
	if err != nil {
		return nil, wrapAPIError(c.config.Host, "watch", m.Resource.GroupResource(), namespace, "", ServerError(c.config.Host, err))
	}
	return w, nil
}
