//go:build e2e

package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// A real mutating admission webhook for the Flux lab: an HTTPS server in
// this test binary on 127.0.0.1, with a CA generated per run, registered on
// the lab API server by a MutatingWebhookConfiguration (clientConfig.url +
// caBundle) that selects one scenario's namespace only, so it never touches
// another scenario. It mutates Deployments the way injectors do.

// Webhook mutations, one URL path each.
const (
	// whSidecar appends a `sidecar` container when the pod template has
	// none (istio/linkerd style: an existing sidecar is left as it is).
	whSidecar = "sidecar"
	// whEnv adds env INJECTED=from-webhook to the first container when it
	// has no INJECTED variable.
	whEnv = "env"
	// whPullPolicy sets imagePullPolicy: Always on every container on
	// every write (a policy enforcer: it overwrites whatever was sent).
	whPullPolicy = "pull-policy"
)

// labWebhook is the lab's webhook server.
type labWebhook struct {
	srv    *httptest.Server
	caPEM  []byte
	mu     sync.Mutex
	probed map[string]bool // namespace -> a probe request was seen
}

var (
	webhookOnce sync.Once
	theWebhook  *labWebhook
	webhookErr  error
)

// webhook returns the lab's webhook server, started on first use.
func (l *fluxLab) webhook(t testing.TB) *labWebhook {
	t.Helper()
	webhookOnce.Do(func() { theWebhook, webhookErr = startWebhook() })
	if webhookErr != nil {
		t.Fatalf("webhook server: %v", webhookErr)
	}
	return theWebhook
}

// startWebhook generates a CA and a serving certificate for 127.0.0.1
// (ECDSA P-256, valid for the run) and starts the HTTPS server.
func startWebhook() (*labWebhook, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "kubectl-drift e2e webhook CA"},
		NotBefore:             now.Add(-time.Minute),
		NotAfter:              now.Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	srvKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	srvTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore:    now.Add(-time.Minute),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	srvDER, err := x509.CreateCertificate(rand.Reader, srvTmpl, ca, &srvKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	w := &labWebhook{probed: map[string]bool{}}
	w.caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	w.srv = httptest.NewUnstartedServer(w)
	w.srv.TLS = &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{{
		Certificate: [][]byte{srvDER},
		PrivateKey:  srvKey,
	}}}
	w.srv.StartTLS()
	return w, nil
}

func (w *labWebhook) close() {
	if w != nil && w.srv != nil {
		w.srv.Close()
	}
}

// ServeHTTP answers an AdmissionReview with a JSON patch.
func (w *labWebhook) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 4<<20))
	if err != nil {
		http.Error(rw, err.Error(), http.StatusBadRequest)
		return
	}
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(body, &review); err != nil || review.Request == nil {
		http.Error(rw, "not an AdmissionReview", http.StatusBadRequest)
		return
	}
	req := review.Request
	if req.Name == "probe" {
		w.mu.Lock()
		w.probed[req.Namespace] = true
		w.mu.Unlock()
	}
	resp := &admissionv1.AdmissionResponse{UID: req.UID, Allowed: true}
	var obj map[string]any
	if err := json.Unmarshal(req.Object.Raw, &obj); err == nil {
		if patch := mutate(strings.Trim(r.URL.Path, "/"), obj); len(patch) > 0 {
			raw, _ := json.Marshal(patch)
			pt := admissionv1.PatchTypeJSONPatch
			resp.Patch, resp.PatchType = raw, &pt
		}
	}
	review.Response, review.Request = resp, nil
	rw.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(rw).Encode(review)
}

// mutate returns the JSON patch of one mutation for a Deployment.
func mutate(kind string, obj map[string]any) []map[string]any {
	containers, _, _ := unstructured.NestedSlice(obj, "spec", "template", "spec", "containers")
	base := "/spec/template/spec/containers"
	var patch []map[string]any
	switch kind {
	case whSidecar:
		for _, c := range containers {
			if m, _ := c.(map[string]any); m["name"] == "sidecar" {
				return nil
			}
		}
		patch = append(patch, map[string]any{"op": "add", "path": base + "/-",
			"value": map[string]any{"name": "sidecar", "image": "busybox:1.36"}})
	case whEnv:
		if len(containers) == 0 {
			return nil
		}
		c, _ := containers[0].(map[string]any)
		env, _ := c["env"].([]any)
		for _, e := range env {
			if m, _ := e.(map[string]any); m["name"] == "INJECTED" {
				return nil
			}
		}
		item := map[string]any{"name": "INJECTED", "value": "from-webhook"}
		if env == nil {
			patch = append(patch, map[string]any{"op": "add", "path": base + "/0/env", "value": []any{item}})
		} else {
			patch = append(patch, map[string]any{"op": "add", "path": base + "/0/env/-", "value": item})
		}
	case whPullPolicy:
		for i, c := range containers {
			if m, _ := c.(map[string]any); m["imagePullPolicy"] != "Always" {
				patch = append(patch, map[string]any{"op": "add", "path": fmt.Sprintf("%s/%d/imagePullPolicy", base, i), "value": "Always"})
			}
		}
	}
	return patch
}

// register installs a MutatingWebhookConfiguration calling mutation kind
// for Deployments of namespace ns only (failurePolicy Ignore, no side
// effects so dry-runs are admitted too), waits until the API server calls
// it, and removes it when the test ends.
func (w *labWebhook) register(t testing.TB, l *fluxLab, ns, kind string) {
	t.Helper()
	name := "drift-e2e-" + ns
	manifest := fmt.Sprintf(`apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: %s}
webhooks:
- name: %s.lab.drift.test
  admissionReviewVersions: [v1]
  sideEffects: None
  failurePolicy: Ignore
  reinvocationPolicy: Never
  timeoutSeconds: 5
  clientConfig:
    url: %s/%s
    caBundle: %s
  namespaceSelector:
    matchLabels: {kubernetes.io/metadata.name: %s}
  rules:
  - apiGroups: [apps]
    apiVersions: [v1]
    resources: [deployments]
    operations: [CREATE, UPDATE]
`, name, kind, w.srv.URL, kind, base64.StdEncoding.EncodeToString(w.caPEM), ns)
	l.create(t, gvrMWC, manifest)
	t.Cleanup(func() { l.kubectl(t, RunOpts{}, "delete", "mutatingwebhookconfiguration", name, "--ignore-not-found") })
	// The API server picks up webhook configurations asynchronously: probe
	// with server-side dry-run creates until one reaches the webhook.
	probe := strings.ReplaceAll(`apiVersion: apps/v1
kind: Deployment
metadata: {name: probe, namespace: NS}
spec:
  selector: {matchLabels: {app: probe}}
  template:
    metadata: {labels: {app: probe}}
    spec: {containers: [{name: app, image: nginx:1.25}]}
`, "NS", ns)
	deadline := time.Now().Add(30 * time.Second)
	for {
		l.kubectl(t, RunOpts{Stdin: []byte(probe)}, "create", "--dry-run=server", "-o", "name", "-f", "-")
		w.mu.Lock()
		ok := w.probed[ns]
		w.mu.Unlock()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("webhook %s for namespace %s: the API server never called it in 30s", name, ns)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

var gvrMWC = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "mutatingwebhookconfigurations"}
