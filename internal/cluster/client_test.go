package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
)

// fakeAPIServer serves discovery for v1 configmaps and a paginated LIST of
// five ConfigMaps in namespace "shop", recording each request's query.
type fakeAPIServer struct {
	mu      sync.Mutex
	queries []string
}

func (f *fakeAPIServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	write := func(v any) { _ = json.NewEncoder(w).Encode(v) }
	status := func(err *apierrors.StatusError) metav1.Status {
		st := err.ErrStatus
		st.Kind, st.APIVersion = "Status", "v1" // as the API server sends it
		return st
	}
	switch r.URL.Path {
	case "/api":
		write(map[string]any{"kind": "APIVersions", "versions": []string{"v1"}})
	case "/apis":
		write(map[string]any{"kind": "APIGroupList", "apiVersion": "v1", "groups": []any{}})
	case "/api/v1":
		write(map[string]any{"kind": "APIResourceList", "groupVersion": "v1", "resources": []any{
			map[string]any{"name": "configmaps", "singularName": "configmap", "namespaced": true, "kind": "ConfigMap", "shortNames": []string{"cm"}, "verbs": []string{"get", "list"}},
		}})
	case "/api/v1/namespaces/shop/configmaps":
		f.mu.Lock()
		f.queries = append(f.queries, r.URL.RawQuery)
		f.mu.Unlock()
		q := r.URL.Query()
		start, _ := strconv.Atoi(q.Get("continue"))
		limit, _ := strconv.Atoi(q.Get("limit"))
		if limit == 0 {
			limit = 5
		}
		var items []any
		for i := start; i < 5 && i < start+limit; i++ {
			items = append(items, map[string]any{"metadata": map[string]any{"name": fmt.Sprintf("cm-%d", i), "namespace": "shop"}})
		}
		meta := map[string]any{}
		if start+limit < 5 {
			meta["continue"] = strconv.Itoa(start + limit)
		}
		write(map[string]any{"kind": "ConfigMapList", "apiVersion": "v1", "metadata": meta, "items": items})
	case "/api/v1/namespaces/shop/configmaps/locked":
		w.WriteHeader(http.StatusForbidden)
		write(status(apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "locked",
			fmt.Errorf(`User "reader" cannot get resource "configmaps" in API group "" in the namespace "shop"`))))
	default:
		w.WriteHeader(http.StatusNotFound)
		write(status(apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, "x")))
	}
}

func newTestClient(t *testing.T, srv *httptest.Server, opts Options) *Client {
	t.Helper()
	flags := genericclioptions.NewConfigFlags(true)
	server, cache := srv.URL, t.TempDir()
	flags.APIServer = &server
	flags.CacheDir = &cache
	c, err := New(flags, opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestListPaginatesAndCounts(t *testing.T) {
	fake := &fakeAPIServer{}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	c := newTestClient(t, srv, Options{PageSize: 2})
	cm := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}

	items, err := c.List(context.Background(), cm, "shop", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 5 || items[4].GetName() != "cm-4" || items[0].GetKind() != "ConfigMap" {
		t.Fatalf("got %d items (%v)", len(items), items)
	}
	want := []string{"limit=2", "continue=2&limit=2", "continue=4&limit=2"}
	if fmt.Sprint(fake.queries) != fmt.Sprint(want) {
		t.Errorf("queries %q, want %q", fake.queries, want)
	}
	if got := c.Counter().Counts()["list"]; got != 3 {
		t.Errorf("counted %d lists, want 3 (one per page): %s", got, c.Counter())
	}
}

func TestListResourceVersionZeroIsOneRequest(t *testing.T) {
	fake := &fakeAPIServer{}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	c := newTestClient(t, srv, Options{PageSize: 2, ResourceVersionZero: true})
	items, err := c.List(context.Background(), schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, "shop", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 5 || len(fake.queries) != 1 || fake.queries[0] != "resourceVersion=0" {
		t.Errorf("items %d, queries %q; want 5 items from one resourceVersion=0 request", len(items), fake.queries)
	}
}

func TestResolveAndGetErrors(t *testing.T) {
	srv := httptest.NewServer(&fakeAPIServer{})
	defer srv.Close()
	c := newTestClient(t, srv, Options{})

	target, err := c.Resolve([]string{"cm/locked"}, "shop")
	if err != nil {
		t.Fatal(err)
	}
	if target.GVK.Kind != "ConfigMap" || !target.Namespaced || target.Namespace != "shop" || target.String() != "configmaps/locked" {
		t.Errorf("target %+v", target)
	}
	_, err = c.Get(context.Background(), target.GVK, "shop", "locked")
	if !apierrors.IsForbidden(err) || err.Error() != `forbidden: cannot get configmaps "locked" in namespace "shop" as user "reader"; kubectl drift is read-only and needs the get and list verbs on configmaps` {
		t.Errorf("Get forbidden: %v", err)
	}
	_, err = c.Get(context.Background(), target.GVK, "shop", "gone")
	if !apierrors.IsNotFound(err) || err.Error() != `configmaps "gone" not found in namespace "shop"` {
		t.Errorf("Get missing: %v", err)
	}
	if _, err := c.Resolve([]string{"widgets/x"}, "shop"); err == nil || err.Error() != `the server doesn't have a resource type "widgets"` {
		t.Errorf("Resolve unknown: %v", err)
	}
	if got := c.Counter().Counts()["get"]; got != 2 {
		t.Errorf("counted %d gets, want 2 (discovery is not counted): %s", got, c.Counter())
	}
}

func TestUnreachableServer(t *testing.T) {
	srv := httptest.NewServer(&fakeAPIServer{})
	srv.Close() // nothing listens there any more
	c := newTestClient(t, srv, Options{})
	_, err := c.Resolve([]string{"cm/x"}, "shop")
	var ue *UnreachableError
	if !errors.As(err, &ue) {
		t.Fatalf("Resolve against a closed server: %v", err)
	}
}
