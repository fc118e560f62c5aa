package cluster

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
)

func TestDecodeListStreamsItems(t *testing.T) {
	body := `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"42","continue":"abc","remainingItemCount":3},
"items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"},"data":{"k":"v"}}],"extra":[1,{"x":null}]}`
	var names []string
	rv, cont, err := decodeList(strings.NewReader(body), func(raw []byte) error {
		names = append(names, string(raw)) // copy: raw is reused
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if rv != "42" || cont != "abc" {
		t.Errorf("rv=%q continue=%q", rv, cont)
	}
	want := []string{`{"metadata":{"name":"a"}}`, `{"metadata":{"name":"b"},"data":{"k":"v"}}`}
	if strings.Join(names, "|") != strings.Join(want, "|") {
		t.Errorf("items = %q, want %q", names, want)
	}
}

func TestDecodeListErrors(t *testing.T) {
	for name, body := range map[string]string{
		"not an object":  `[1,2]`,
		"items object":   `{"items":{"a":1}}`,
		"truncated":      `{"items":[{"metadata":{}}`,
		"bad item":       `{"items":[{"metadata":}]}`,
		"empty":          ``,
		"trailing comma": `{"items":[{},]}`,
	} {
		if _, _, err := decodeList(strings.NewReader(body), func([]byte) error { return nil }); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	// A null items list is an empty list.
	n := 0
	if _, _, err := decodeList(strings.NewReader(`{"items":null}`), func([]byte) error { n++; return nil }); err != nil || n != 0 {
		t.Errorf("null items: n=%d err=%v", n, err)
	}
	// The caller's error comes back as is, not as a decoding error.
	stop := errors.New("stop")
	if _, _, err := decodeList(strings.NewReader(`{"items":[{}]}`), func([]byte) error { return stop }); !errors.Is(err, callerError{stop}) && err.Error() != "stop" {
		t.Errorf("caller error = %v", err)
	}
}

// apiServer serves a configmaps collection in pages of `limit`, ignoring
// limit for resourceVersion=0 as the watch cache does, and refuses secrets.
type apiServer struct {
	mu       sync.Mutex
	requests []string
	items    int
}

func (s *apiServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests = append(s.requests, r.URL.Path+"?"+r.URL.RawQuery)
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if strings.HasSuffix(r.URL.Path, "/secrets") {
		w.WriteHeader(http.StatusForbidden)
		// A failed write reaches the client as a short body, which fails
		// the test there; the server has no one else to tell.
		_, _ = fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403,
"message":"secrets is forbidden: User \"reader\" cannot list resource \"secrets\" in API group \"\" in the namespace \"shop\""}`)
		return
	}
	q := r.URL.Query()
	start := 0
	if c := q.Get("continue"); c != "" {
		if _, err := fmt.Sscanf(c, "from-%d", &start); err != nil {
			http.Error(w, "bad continue token "+c, http.StatusBadRequest)
			return
		}
	}
	limit := s.items
	if q.Get("resourceVersion") != "0" {
		if _, err := fmt.Sscanf(q.Get("limit"), "%d", &limit); err != nil {
			http.Error(w, "bad limit "+q.Get("limit"), http.StatusBadRequest)
			return
		}
	}
	end := min(start+limit, s.items)
	var items []string
	for i := start; i < end; i++ {
		items = append(items, fmt.Sprintf(`{"metadata":{"name":"cm-%d","namespace":"shop"}}`, i))
	}
	cont := ""
	if end < s.items {
		cont = fmt.Sprintf("from-%d", end)
	}
	_, _ = fmt.Fprintf(w, `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"7","continue":%q},"items":[%s]}`, cont, strings.Join(items, ","))
}

// testStreamer is a Streamer of a client of a test server that api serves
// (closed when the test ends).
func testStreamer(t *testing.T, api http.Handler) (*Client, *Streamer) {
	t.Helper()
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	flags := genericclioptions.NewConfigFlags(false)
	host := srv.URL
	flags.APIServer = &host
	c, err := New(flags, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.NewStreamer()
	if err != nil {
		t.Fatal(err)
	}
	return c, s
}

var cmMapping = &meta.RESTMapping{
	Resource:         schema.GroupVersionResource{Version: "v1", Resource: "configmaps"},
	GroupVersionKind: schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"},
	Scope:            meta.RESTScopeNamespace,
}

func TestStreamerPaginates(t *testing.T) {
	api := &apiServer{items: 1203}
	c, s := testStreamer(t, api)
	n := 0
	rv, err := s.List(context.Background(), cmMapping, "shop", StreamOptions{Limit: 500, LabelSelector: "app=web"}, func(raw []byte) error {
		n++
		return nil
	})
	if err != nil || n != 1203 || rv != "7" {
		t.Fatalf("n=%d rv=%q err=%v", n, rv, err)
	}
	want := []string{
		"/api/v1/namespaces/shop/configmaps?labelSelector=app%3Dweb&limit=500",
		"/api/v1/namespaces/shop/configmaps?continue=from-500&labelSelector=app%3Dweb&limit=500",
		"/api/v1/namespaces/shop/configmaps?continue=from-1000&labelSelector=app%3Dweb&limit=500",
	}
	if strings.Join(api.requests, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests:\n%s\nwant:\n%s", strings.Join(api.requests, "\n"), strings.Join(want, "\n"))
	}
	if got := c.Counter().Counts()["list"]; got != 3 {
		t.Errorf("counter list=%d, want 3", got)
	}
}

func TestStreamerWatchCacheIsOneRequest(t *testing.T) {
	api := &apiServer{items: 1203}
	_, s := testStreamer(t, api)
	n := 0
	if _, err := s.List(context.Background(), cmMapping, "", StreamOptions{ResourceVersionZero: true}, func([]byte) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	if n != 1203 || len(api.requests) != 1 || api.requests[0] != "/api/v1/configmaps?limit=500&resourceVersion=0" {
		t.Errorf("n=%d requests=%q", n, api.requests)
	}
}

func TestStreamerForbidden(t *testing.T) {
	_, s := testStreamer(t, &apiServer{})
	m := *cmMapping
	m.Resource.Resource = "secrets"
	_, err := s.List(context.Background(), &m, "shop", StreamOptions{}, func([]byte) error { return nil })
	if !apierrors.IsForbidden(err) {
		t.Fatalf("err = %v, want Forbidden", err)
	}
	if !strings.Contains(err.Error(), "forbidden: cannot list secrets") {
		t.Errorf("message: %v", err)
	}
}

// FuzzDecodeList: whatever a server (or a proxy in between) sends, the
// decoder returns an error or items, never panics, and hands fn only
// complete JSON values.
func FuzzDecodeList(f *testing.F) {
	f.Add([]byte(`{"kind":"List","metadata":{"resourceVersion":"1"},"items":[{"a":1},{"b":[1,2]}]}`))
	f.Add([]byte(`{"items":null}`))
	f.Add([]byte(`{"metadata":{"continue":"x"},"items":[]}`))
	f.Add([]byte(`{"items":[{"metadata":{"name":"a"}}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _, _ = decodeList(strings.NewReader(string(data)), func(raw []byte) error {
			if len(raw) == 0 {
				t.Fatal("empty item")
			}
			return nil
		})
	})
}
