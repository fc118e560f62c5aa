package cluster

import (
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Counter counts API requests by Kubernetes verb (get, list, watch, ...).
// It is how scan proves "one LIST per kind, never a GET per object".
type Counter struct {
	mu     sync.Mutex
	counts map[string]int
}

// NewCounter returns an empty counter.
func NewCounter() *Counter { return &Counter{counts: map[string]int{}} }

// Wrap is a rest.Config.Wrap transport wrapper.
func (c *Counter) Wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		c.Add(Verb(req.Method, req.URL.Path, req.URL.Query().Get("watch")))
		return rt.RoundTrip(req)
	})
}

// Add counts one request.
func (c *Counter) Add(verb string) {
	c.mu.Lock()
	c.counts[verb]++
	c.mu.Unlock()
}

// Counts returns a copy of the counts by verb.
func (c *Counter) Counts() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.counts))
	for k, v := range c.counts {
		out[k] = v
	}
	return out
}

// Total is the number of requests counted.
func (c *Counter) Total() int {
	n := 0
	for _, v := range c.Counts() {
		n += v
	}
	return n
}

// String renders "get=1 list=4", verbs sorted.
func (c *Counter) String() string {
	counts := c.Counts()
	verbs := slices.Sorted(maps.Keys(counts))
	parts := make([]string, 0, len(verbs))
	for _, v := range verbs {
		parts = append(parts, v+"="+strconv.Itoa(counts[v]))
	}
	return strings.Join(parts, " ")
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// Verb maps an HTTP request to the Kubernetes verb the API server would
// authorize it as, the way k8s.io/apiserver/pkg/endpoints/request
// (requestinfo.go) does it: a GET on a collection is "list", on a named
// object "get", and watch=true makes either a "watch". Paths outside
// /api and /apis (/version, /openapi) are "nonresource".
func Verb(method, path, watch string) string {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	var rest []string
	switch {
	case len(segs) >= 2 && segs[0] == "api":
		rest = segs[2:] // api/v1/...
	case len(segs) >= 3 && segs[0] == "apis":
		rest = segs[3:] // apis/group/version/...
	default:
		return "nonresource"
	}
	if len(rest) == 0 {
		return "nonresource" // discovery of a group version
	}
	// "namespaces/NS/RESOURCE..." addresses a namespaced resource; a bare
	// "namespaces/NS" is the Namespace object itself.
	if rest[0] == "namespaces" && len(rest) >= 3 {
		rest = rest[2:]
	}
	named := len(rest) >= 2
	switch method {
	case http.MethodGet, http.MethodHead:
		if watch == "true" || watch == "1" {
			return "watch"
		}
		if named {
			return "get"
		}
		return "list"
	case http.MethodPost:
		return "create"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		if named {
			return "delete"
		}
		return "deletecollection"
	}
	return strings.ToLower(method)
}
