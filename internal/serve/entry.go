package serve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
	"unique"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-drift/kubectl-drift/internal/scan"
)

// entry is what serve's informers hold of one watched object (issue 35):
// its identity, and for an object an engine owns its content as JSON,
// status left out. A decoded object is a tree of maps: Go spends ~300
// bytes on each small map, and a Deployment with its managedFields has
// tens of them, ~16 KiB in all; its JSON is ~2 KiB. The worker decodes
// an entry when it explains the object (Server.decode), exactly as the
// dynamic client decodes the API's JSON (integers int64, the rest
// float64), so the pipeline sees the object it saw before.
//
// Entries are immutable once built: every reader shares one.
type entry struct {
	name, namespace string
	uid             types.UID
	resourceVersion string
	// raw is the object without status, as JSON compressed by c, when an
	// engine owned it
	// as the transform saw it; nil for every other object, of which serve
	// keeps only the identity (Owned judges from labels, annotations and
	// managedFields, all dropped then: a change of what marks ownership
	// needs a restart, see Server.reload).
	raw []byte
	// n is raw's length once decompressed; c the kind's codec.
	n int
	c *codec
}

var _ metav1.ObjectMetaAccessor = (*entry)(nil)

// GetObjectMeta lets client-go's key and index functions (meta.Accessor)
// read an entry; it builds the small object they read on each call, which
// only happens per event.
func (e *entry) GetObjectMeta() metav1.Object {
	return &metav1.ObjectMeta{Name: e.name, Namespace: e.namespace, UID: e.uid, ResourceVersion: e.resourceVersion}
}

// owned says whether an engine owned the object when it was cached.
func (e *entry) owned() bool { return e.raw != nil }

// object decodes e: the full object (status aside) when owned, else one
// with its identity only, as the transform kept before entries (the
// pipeline finds no owner on it).
func (e *entry) object(k scan.Kind) (*unstructured.Unstructured, error) {
	if e.raw == nil {
		md := make(map[string]any, 4)
		md["name"] = e.name
		if e.namespace != "" {
			md["namespace"] = e.namespace
		}
		if e.uid != "" {
			md["uid"] = string(e.uid)
		}
		if e.resourceVersion != "" {
			md["resourceVersion"] = e.resourceVersion
		}
		u := &unstructured.Unstructured{Object: map[string]any{"metadata": md}}
		u.SetGroupVersionKind(k.GVK)
		return u, nil
	}
	raw, err := e.json()
	if err != nil {
		return nil, err
	}
	// scan.Decode is the dynamic client's decoding (utiljson: integers
	// int64) and sets apiVersion/kind.
	return scan.Decode(k, raw)
}

// metaOnly is what an owner change asks of a cached object
// (Pipeline.Touches: the adapters' Owner, which reads labels and
// annotations, as scan's Precheck does).
type metaOnly struct {
	Metadata struct {
		Labels      map[string]string `json:"labels"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
}

// light decodes an owned entry's identity, labels and annotations only: an
// owner change that may concern every object of an owner asks each cached
// object, and decoding each in full would cost ~10 times more.
func (e *entry) light(k scan.Kind) (*unstructured.Unstructured, error) {
	raw, err := e.json()
	if err != nil {
		return nil, err
	}
	var m metaOnly
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	u, _ := (&entry{name: e.name, namespace: e.namespace, uid: e.uid, resourceVersion: e.resourceVersion}).object(k)
	md := u.Object["metadata"].(map[string]any)
	if len(m.Metadata.Labels) > 0 {
		md["labels"] = anyMap(m.Metadata.Labels)
	}
	if len(m.Metadata.Annotations) > 0 {
		md["annotations"] = anyMap(m.Metadata.Annotations)
	}
	return u, nil
}

func anyMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// json is an owned entry's object as JSON.
func (e *entry) json() ([]byte, error) { return e.c.decompress(e.raw, e.n) }

// newEntry builds the entry of a decoded object with its kind's codec:
// in is the object with its kind set, owned the pipeline's decision on
// it. in is read, never written.
func newEntry(in *unstructured.Unstructured, owned bool, c *codec) (*entry, error) {
	meta, _ := in.Object["metadata"].(map[string]any)
	str := func(f string) string { s, _ := meta[f].(string); return s }
	e := &entry{
		name: str("name"),
		// Namespaces repeat across objects: one copy each.
		namespace:       unique.Make(str("namespace")).Value(),
		uid:             types.UID(str("uid")),
		resourceVersion: str("resourceVersion"),
	}
	if !owned {
		return e, nil
	}
	// Status is never desired state (Argo CD 3 ignores /status, Flux
	// never applies it): no verdict reads it. Everything else is kept,
	// kubectl.kubernetes.io/last-applied-configuration included: Argo
	// CD's 3-way diff reads it as its last sync (gitops-engine
	// pkg/diff/diff.go ThreeWayDiff; internal/argocd argoLastApplied and
	// JudgeClean), and so do our Argo CD verdicts.
	top := make(map[string]any, len(in.Object))
	for f, v := range in.Object {
		if f != "status" {
			top[f] = v
		}
	}
	bp := encodeBuffers.Get().(*[]byte)
	defer encodeBuffers.Put(bp)
	raw, err := appendJSON((*bp)[:0], top)
	if err != nil {
		return nil, fmt.Errorf("serve: encode %s/%s for the cache: %w", e.namespace, e.name, err)
	}
	*bp = raw
	if e.raw, err = c.compress(raw); err != nil {
		return nil, fmt.Errorf("serve: compress %s/%s for the cache: %w", e.namespace, e.name, err)
	}
	e.n, e.c = len(raw), c
	return e, nil
}

// encodeBuffers are newEntry's scratch buffers (informers of several
// kinds transform at once).
var encodeBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// appendJSON appends v, a decoded object's value, to buf as JSON that
// decodes back to v with the dynamic client's decoding (utiljson): a
// float64 with an integral value is written with ".0", which
// encoding/json leaves out, so that it does not come back an int64.
// Types a decoded object does not hold go through encoding/json.
func appendJSON(buf []byte, v any) ([]byte, error) {
	switch t := v.(type) {
	case nil:
		return append(buf, "null"...), nil
	case bool:
		return strconv.AppendBool(buf, t), nil
	case string:
		return appendString(buf, t), nil
	case int64:
		return strconv.AppendInt(buf, t, 10), nil
	case float64:
		if math.IsInf(t, 0) || math.IsNaN(t) {
			return nil, fmt.Errorf("unsupported value %v", t)
		}
		n := len(buf)
		buf = strconv.AppendFloat(buf, t, 'g', -1, 64)
		if !bytes.ContainsAny(buf[n:], ".eEn") {
			buf = append(buf, ".0"...)
		}
		return buf, nil
	case map[string]any:
		// Keys in order, as encoding/json writes them: objects of a kind
		// then match their dictionary (codec) in long runs.
		var small [16]string
		keys := small[:0]
		for k := range t {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		buf = append(buf, '{')
		for i, k := range keys {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = appendString(buf, k)
			buf = append(buf, ':')
			var err error
			if buf, err = appendJSON(buf, t[k]); err != nil {
				return nil, err
			}
		}
		return append(buf, '}'), nil
	case []any:
		buf = append(buf, '[')
		for i, e := range t {
			if i > 0 {
				buf = append(buf, ',')
			}
			var err error
			if buf, err = appendJSON(buf, e); err != nil {
				return nil, err
			}
		}
		return append(buf, ']'), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(buf, b...), nil
}

// appendString appends s as a JSON string. Decoded strings are valid
// UTF-8 (the decoder replaced any invalid byte), so only quotes,
// backslashes and control characters need escaping.
func appendString(buf []byte, s string) []byte {
	const hex = "0123456789abcdef"
	buf = append(buf, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		buf = append(buf, s[start:i]...)
		switch c {
		case '"', '\\':
			buf = append(buf, '\\', c)
		case '\n':
			buf = append(buf, '\\', 'n')
		case '\r':
			buf = append(buf, '\\', 'r')
		case '\t':
			buf = append(buf, '\\', 't')
		default:
			buf = append(buf, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	buf = append(buf, s[start:]...)
	return append(buf, '"')
}

// entryKey is an entry's informer key (cache.MetaNamespaceKeyFunc's),
// without building its ObjectMeta.
func entryKey(obj any) (string, error) {
	switch t := obj.(type) {
	case *entry:
		if t.namespace == "" {
			return t.name, nil
		}
		return t.namespace + "/" + t.name, nil
	case cache.DeletedFinalStateUnknown:
		return t.Key, nil
	}
	return cache.MetaNamespaceKeyFunc(obj)
}
