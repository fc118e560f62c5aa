package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/homedir"
	"k8s.io/kube-openapi/pkg/handler3"
)

// discoveryTTL is how long kubectl trusts its disk-cached discovery: the
// 6 hours k8s.io/cli-runtime's ConfigFlags.toDiscoveryClient gives
// client-go's discovery/cached/disk.NewCachedDiscoveryClientForConfig.
const discoveryTTL = 6 * time.Hour

// openAPIRootFile is the name of the /openapi/v3 list in the host's
// discovery cache directory, beside kubectl's servergroups.json.
const openAPIRootFile = "openapiv3-root.json"

// errGVGone says a group-version's document URL answered 404.
var errGVGone = errors.New("OpenAPI v3 document not found")

// openAPIRoot reads the /openapi/v3 list of group-versions and their
// hashed document URLs. It keeps the list in the discovery disk cache
// under discovery's TTL, as kubectl keeps the group and resource lists: a
// run within the TTL that needs a built-in group-version's document reads
// the list from disk with no request. A group-version missing from the
// cached list, or whose document is gone (404), makes the list be read
// again from the server. A built-in document that changed within the TTL
// (a server upgrade) is seen when the TTL ends, as kubectl sees the
// upgrade's resource lists.
type openAPIRoot struct {
	rest rest.Interface
	// file is the cached list; "" when there is no cache directory.
	file string
	ttl  time.Duration
}

// openAPIRootPath is where the /openapi/v3 list of host is cached: the
// discovery cache directory kubectl computes for it (cli-runtime
// ConfigFlags.toDiscoveryClient: --cache-dir, else $KUBECACHEDIR, else
// ~/.kube/cache; then discovery/<host with unsafe characters as _>,
// computeDiscoverCacheDir).
func openAPIRootPath(flags *genericclioptions.ConfigFlags, host string) string {
	dir := os.Getenv("KUBECACHEDIR")
	if dir == "" {
		dir = filepath.Join(homedir.HomeDir(), ".kube", "cache")
	}
	if flags.CacheDir != nil && *flags.CacheDir != "" {
		dir = *flags.CacheDir
	}
	schemeless := strings.Replace(strings.Replace(host, "https://", "", 1), "http://", "", 1)
	safeHost := unsafeFileCharacters.ReplaceAllString(schemeless, "_")
	return filepath.Join(dir, "discovery", safeHost, openAPIRootFile)
}

// unsafeFileCharacters is cli-runtime's overlyCautiousIllegalFileCharacters.
var unsafeFileCharacters = regexp.MustCompile(`[^(\w/.)]`)

// document returns the JSON OpenAPI v3 document of gv, and false when the
// server lists no document for it (after a fresh read of the list) or has
// no /openapi/v3 at all (the list cannot be read: the caller falls back
// to /openapi/v2, whose read reports a server that is down).
func (r *openAPIRoot) document(ctx context.Context, gv schema.GroupVersion) ([]byte, bool, error) {
	// A built-in group-version's document changes only with the server's
	// version, so its list entry is trusted for the TTL as kubectl trusts
	// its resource lists; a CRD's or an aggregated API's changes whenever
	// its schema does, while the document at a cached hash stays in the
	// HTTP cache (immutable), so its list is revalidated every run.
	paths, cached, err := r.paths(ctx, !scheme.Scheme.IsVersionRegistered(gv))
	if err != nil {
		return nil, false, nil //nolint:nilerr // no v3 list: v2 decides
	}
	doc, found, err := r.fetch(ctx, paths, gv)
	if !cached || (found && !errors.Is(err, errGVGone)) {
		return doc, found, err
	}
	// The cached list lacks gv or names a document that is gone: the
	// server's API changed since the list was written.
	if paths, _, err = r.paths(ctx, true); err != nil {
		return nil, false, nil //nolint:nilerr // no v3 list: v2 decides
	}
	return r.fetch(ctx, paths, gv)
}

// fetch reads gv's document at the URL paths gives it.
func (r *openAPIRoot) fetch(ctx context.Context, paths map[string]handler3.OpenAPIV3DiscoveryGroupVersion, gv schema.GroupVersion) ([]byte, bool, error) {
	apiPath := "apis/" + gv.Group + "/" + gv.Version
	if gv.Group == "" {
		apiPath = "api/" + gv.Version
	}
	ref, ok := paths[apiPath]
	if !ok {
		return nil, false, nil
	}
	req, err := r.request(ref.ServerRelativeURL)
	if err != nil {
		return nil, true, err
	}
	doc, err := req.SetHeader("Accept", runtime.ContentTypeJSON).Do(ctx).Raw()
	if apierrors.IsNotFound(err) {
		return nil, true, fmt.Errorf("%s: %w", ref.ServerRelativeURL, errGVGone)
	}
	return doc, true, err
}

// request is the GET of a document URL as client-go's openapi client
// builds it (k8s.io/client-go/openapi groupversion.SchemaWithContext): a
// URL under /openapi/v3 keeps the client's path prefix, any other is
// taken as server-relative.
func (r *openAPIRoot) request(serverRelativeURL string) (*rest.Request, error) {
	rootPrefix := strings.TrimSuffix(r.rest.Get().AbsPath("/").URL().Path, "/")
	u := strings.TrimPrefix(serverRelativeURL, rootPrefix)
	if !strings.HasPrefix(u, "/openapi/v3") {
		return r.rest.Get().RequestURI(u), nil
	}
	locator, err := url.Parse(u)
	if err != nil {
		return nil, fmt.Errorf("OpenAPI v3 document URL %q: %w", serverRelativeURL, err)
	}
	req := r.rest.Get().AbsPath(locator.Path)
	for k, values := range locator.Query() {
		for _, v := range values {
			req = req.Param(k, v)
		}
	}
	return req, nil
}

// paths returns the /openapi/v3 list: from the disk cache when it is
// younger than the TTL and fresh is false (cached true), otherwise from
// the server (revalidated by ETag through the HTTP disk cache), then
// written to the disk cache.
func (r *openAPIRoot) paths(ctx context.Context, fresh bool) (map[string]handler3.OpenAPIV3DiscoveryGroupVersion, bool, error) {
	if !fresh && r.file != "" {
		if raw, ok := r.readCached(); ok {
			var disco handler3.OpenAPIV3Discovery
			if err := json.Unmarshal(raw, &disco); err == nil && disco.Paths != nil {
				return disco.Paths, true, nil
			}
		}
	}
	raw, err := r.rest.Get().AbsPath("/openapi/v3").Do(ctx).Raw()
	if err != nil {
		return nil, false, err
	}
	var disco handler3.OpenAPIV3Discovery
	if err := json.Unmarshal(raw, &disco); err != nil {
		return nil, false, fmt.Errorf("parsing /openapi/v3: %w", err)
	}
	if r.file != "" {
		// A cache that cannot be written costs a request next time, no
		// more: client-go's discovery cache ignores the same failure.
		_ = writeFileAtomic(r.file, raw)
	}
	return disco.Paths, false, nil
}

// readCached returns the cached list when it is younger than the TTL.
func (r *openAPIRoot) readCached() ([]byte, bool) {
	info, err := os.Stat(r.file)
	if err != nil || time.Since(info.ModTime()) > r.ttl {
		return nil, false
	}
	raw, err := os.ReadFile(r.file)
	return raw, err == nil
}

// writeFileAtomic writes data to name through a temporary file and a
// rename, as client-go's disk cache writes (concurrent kubectl runs never
// read half a file), with its modes (0750 directories, 0660 files).
func writeFileAtomic(name string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o750); err != nil {
		return fmt.Errorf("caching the OpenAPI v3 list: %w", err)
	}
	f, err := os.CreateTemp(filepath.Dir(name), filepath.Base(name)+".")
	if err != nil {
		return fmt.Errorf("caching the OpenAPI v3 list: %w", err)
	}
	defer func() { _ = os.Remove(f.Name()) }() // gone after the rename
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return fmt.Errorf("caching the OpenAPI v3 list: %w", err)
	}
	if err := f.Chmod(0o660); err != nil {
		_ = f.Close()
		return fmt.Errorf("caching the OpenAPI v3 list: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("caching the OpenAPI v3 list: %w", err)
	}
	if err := os.Rename(f.Name(), name); err != nil {
		return fmt.Errorf("caching the OpenAPI v3 list: %w", err)
	}
	return nil
}
