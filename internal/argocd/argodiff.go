package argocd

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/source"
)

// ArgoDiffOptions locate Argo CD's own computed diffs: the response of
// GET /api/v1/applications/{name}/managed-resources, saved to a file
// (--argocd-diff FILE) or fetched from the API server like the argocd CLI
// does (ARGOCD_SERVER, ARGOCD_AUTH_TOKEN).
type ArgoDiffOptions struct {
	File string
	// Loaded is File already read by the caller (explain checks it before
	// it contacts the cluster): load uses it instead of reading File again.
	Loaded *ManagedResources
	// Server is host[:port] or a URL; Token a bearer token (empty for an
	// API server run with --disable-auth).
	Server string
	Token  string
	// Insecure skips TLS verification (argocd --insecure); PlainText uses
	// http (argocd --plaintext).
	Insecure  bool
	PlainText bool
	// Client is used for API calls; nil means a client with a 30s timeout.
	Client *http.Client
}

func (o ArgoDiffOptions) configured() bool {
	return o.File != "" || o.Server != ""
}

// ResourceDiff is one item of the managed-resources response
// (pkg/apis/application/v1alpha1/types.go ResourceDiff). The states are JSON
// documents carried as strings.
type ResourceDiff struct {
	Group               string `json:"group,omitempty"`
	Kind                string `json:"kind,omitempty"`
	Namespace           string `json:"namespace,omitempty"`
	Name                string `json:"name,omitempty"`
	TargetState         string `json:"targetState,omitempty"`
	LiveState           string `json:"liveState,omitempty"`
	NormalizedLiveState string `json:"normalizedLiveState,omitempty"`
	PredictedLiveState  string `json:"predictedLiveState,omitempty"`
	ResourceVersion     string `json:"resourceVersion,omitempty"`
	Modified            bool   `json:"modified,omitempty"`
	Hook                bool   `json:"hook,omitempty"`
}

// ManagedResources is the managed-resources response.
type ManagedResources struct {
	Items []ResourceDiff `json:"items"`
	// From says where it came from (file path or URL).
	From string `json:"-"`
}

// ParseManagedResources reads a saved managed-resources response.
func ParseManagedResources(data []byte) (*ManagedResources, error) {
	mr := &ManagedResources{}
	if err := json.Unmarshal(data, mr); err != nil {
		return nil, fmt.Errorf("not an Argo CD managed-resources response: %w", err)
	}
	for i, it := range mr.Items {
		if it.Kind == "" || it.Name == "" {
			return nil, fmt.Errorf("managed-resources item %d has no kind/name", i)
		}
	}
	return mr, nil
}

// Find returns the item for obj, if any.
func (m *ManagedResources) Find(group, kind, namespace, name string) *ResourceDiff {
	if m == nil {
		return nil
	}
	for i := range m.Items {
		it := &m.Items[i]
		if it.Group == group && it.Kind == kind && it.Name == name && (it.Namespace == namespace || it.Namespace == "" || namespace == "") {
			return it
		}
	}
	return nil
}

// States decodes the JSON-string states; nil where empty or "null".
func (d *ResourceDiff) States() (target, normalizedLive, predictedLive *unstructured.Unstructured, err error) {
	dec := func(s string) (*unstructured.Unstructured, error) {
		s = strings.TrimSpace(s)
		if s == "" || s == "null" {
			return nil, nil
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON([]byte(s)); err != nil {
			return nil, err
		}
		return u, nil
	}
	if target, err = dec(d.TargetState); err != nil {
		return nil, nil, nil, fmt.Errorf("targetState: %w", err)
	}
	if normalizedLive, err = dec(d.NormalizedLiveState); err != nil {
		return nil, nil, nil, fmt.Errorf("normalizedLiveState: %w", err)
	}
	if predictedLive, err = dec(d.PredictedLiveState); err != nil {
		return nil, nil, nil, fmt.Errorf("predictedLiveState: %w", err)
	}
	return target, normalizedLive, predictedLive, nil
}

// load reads the saved file, if any. API responses are fetched per
// Application by fetch, when Judge knows which one owns the object.
func (o ArgoDiffOptions) load(_ context.Context, _ map[string]*appEntry) (*ManagedResources, error) {
	if o.Loaded != nil {
		return o.Loaded, nil
	}
	if o.File == "" {
		return nil, nil
	}
	return ReadManagedResources(o.File)
}

// ReadManagedResources reads a saved managed-resources response
// (--argocd-diff FILE) through the bounded reader and parses it; a parse
// error is a *ManagedResourcesError.
func ReadManagedResources(path string) (*ManagedResources, error) {
	data, err := source.ReadFile(path, nil, 0)
	if err != nil {
		return nil, fmt.Errorf("--argocd-diff: %w", err)
	}
	mr, err := ParseManagedResources(data)
	if err != nil {
		return nil, fmt.Errorf("--argocd-diff %s: %w", path, &ManagedResourcesError{Err: err})
	}
	mr.From = path
	return mr, nil
}

// ManagedResourcesError is a saved response that is not a managed-resources
// document (the file itself was read).
type ManagedResourcesError struct{ Err error }

func (e *ManagedResourcesError) Error() string { return e.Err.Error() }
func (e *ManagedResourcesError) Unwrap() error { return e.Err }

// fetch asks the Argo CD API server for one Application's managed resources
// (server/application/application.proto ManagedResources).
func (o ArgoDiffOptions) fetch(ctx context.Context, appNamespace, appName string, r *ResourceDiff) (*ManagedResources, error) {
	if o.Server == "" {
		return nil, nil
	}
	base := o.baseURL()
	q := url.Values{}
	if appNamespace != "" {
		q.Set("appNamespace", appNamespace)
	}
	if r != nil {
		q.Set("group", r.Group)
		q.Set("kind", r.Kind)
		q.Set("namespace", r.Namespace)
		q.Set("name", r.Name)
	}
	u := strings.TrimRight(base, "/") + "/api/v1/applications/" + url.PathEscape(appName) + "/managed-resources?" + q.Encode()
	body, err := o.get(ctx, u)
	if err != nil {
		return nil, err
	}
	mr, err := ParseManagedResources(body)
	if err != nil {
		return nil, err
	}
	mr.From = strings.SplitN(u, "?", 2)[0]
	return mr, nil
}

// comparisonErrors returns the messages of an Application's error
// conditions (ComparisonError when its repository cannot be fetched), read
// from the API server; nil when there are none or they cannot be read.
func (o ArgoDiffOptions) comparisonErrors(ctx context.Context, appNamespace, appName string) []string {
	q := url.Values{}
	if appNamespace != "" {
		q.Set("appNamespace", appNamespace)
	}
	body, err := o.get(ctx, strings.TrimRight(o.baseURL(), "/")+"/api/v1/applications/"+url.PathEscape(appName)+"?"+q.Encode())
	if err != nil {
		return nil
	}
	var app struct {
		Status struct {
			Conditions []struct {
				Type    string `json:"type"`
				Message string `json:"message"`
			} `json:"conditions"`
		} `json:"status"`
	}
	if json.Unmarshal(body, &app) != nil {
		return nil
	}
	var out []string
	for _, c := range app.Status.Conditions {
		if strings.HasSuffix(c.Type, "Error") {
			out = append(out, c.Type+": "+c.Message)
		}
	}
	return out
}

func (o ArgoDiffOptions) baseURL() string {
	base := o.Server
	if !strings.Contains(base, "://") {
		scheme := "https"
		if o.PlainText {
			scheme = "http"
		}
		base = scheme + "://" + base
	}
	return base
}

// get calls the API server with the token, if any.
func (o ArgoDiffOptions) get(ctx context.Context, u string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	if o.Token != "" {
		req.Header.Set("Authorization", "Bearer "+o.Token)
	}
	client := o.Client
	if client == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		if o.Insecure {
			tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // user asked with --insecure, like argocd
		}
		client = &http.Client{Timeout: 30 * time.Second, Transport: tr}
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("Argo CD API: %w", err)
	}
	// Close only releases the connection: by then the body has been read (or
	// its read error returned), so a Close error loses nothing the caller needs.
	defer func() { _ = resp.Body.Close() }()
	body, err := source.ReadAll(resp.Body, 0)
	if err != nil {
		return nil, fmt.Errorf("Argo CD API %s: %w", strings.SplitN(u, "?", 2)[0], err)
	}
	if resp.StatusCode != http.StatusOK {
		msg := strings.TrimSpace(string(body))
		if len(msg) > 200 {
			msg = msg[:200] + "..."
		}
		return nil, fmt.Errorf("Argo CD API %s: %s %s", strings.SplitN(u, "?", 2)[0], resp.Status, msg)
	}
	return body, nil
}
