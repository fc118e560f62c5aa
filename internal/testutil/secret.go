package testutil

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
)

// LeakMarker is in every value of the MarkedSecret: data (base64),
// stringData (plain) and last-applied-configuration (both). No output may
// contain it, raw or base64-encoded. Values stay under gojq's 30-byte
// preview so that a jq error would quote them whole.
const LeakMarker = "QZXJWMARK"

// MarkedSecret is the Secret shop/db of the secret-leak tests (cli runs it
// through every command, scan through every output format): deployed by
// Argo CD and Flux, its values then edited with kubectl edit, every value
// carrying LeakMarker.
type MarkedSecret struct {
	// Live is the object as the API server returns it, with
	// managedFields and last-applied-configuration; Desired is the
	// manifest.
	Live, Desired string
	// Forms are the strings whose presence in output is a leak
	// (MarkerForms of every value).
	Forms []string
}

// NewMarkedSecret builds the Secret and checks that Leaks finds its values
// in its own YAML (a detector that sees nothing proves nothing).
func NewMarkedSecret(t testing.TB) MarkedSecret {
	t.Helper()
	m := LeakMarker
	liveToken, livePW, desiredPW, desiredToken := "live-"+m+"-t", "pw-"+m, "desired-"+m, "desired-"+m+"-t"
	laPW, laToken := "la-"+m, "la-"+m+"-t"
	// cert is longer than gojq's 24-byte preview: a jq error quotes only
	// its start, which a scrubber that matches whole values cannot find.
	cert := m + strings.Repeat("-certificate-body", 4)
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	lastApplied := fmt.Sprintf(`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"db","namespace":"shop"},"stringData":{"password":%q},"data":{"token":%q}}`, laPW, b64(laToken))
	s := MarkedSecret{
		Live: fmt.Sprintf(`apiVersion: v1
kind: Secret
metadata:
  name: db
  namespace: shop
  annotations:
    argocd.argoproj.io/tracking-id: shop:/Secret:shop/db
    kubectl.kubernetes.io/last-applied-configuration: '%s'
  labels:
    kustomize.toolkit.fluxcd.io/name: shop
    kustomize.toolkit.fluxcd.io/namespace: flux-system
  managedFields:
  - apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1:
      f:data:
        .: {}
      f:metadata:
        f:annotations:
          .: {}
          f:kubectl.kubernetes.io/last-applied-configuration: {}
      f:type: {}
    manager: argocd-controller
    operation: Update
    time: "2026-01-01T00:00:00Z"
  - apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1:
      f:data:
        f:password: {}
        f:token: {}
    manager: kubectl-edit
    operation: Update
    time: "2026-01-02T00:00:00Z"
type: Opaque
data:
  token: %s
  password: %s
  cert: %s
`, lastApplied, b64(liveToken), b64(livePW), b64(cert)),
		Desired: fmt.Sprintf(`apiVersion: v1
kind: Secret
metadata:
  name: db
  namespace: shop
type: Opaque
stringData:
  password: %s
data:
  token: %s
  cert: %s
`, desiredPW, b64(desiredToken), b64(cert)),
		Forms: MarkerForms(liveToken, livePW, desiredPW, laPW, laToken, desiredToken, cert),
	}
	for _, in := range []string{s.Live, s.Desired} {
		if len(Leaks(in, s.Forms)) == 0 {
			t.Fatalf("marker forms %v not found in the fixture itself", s.Forms)
		}
	}
	return s
}

// MarkerForms are the strings whose presence in output is a leak: the
// marker itself, the exact base64 encodings of values, and the part of the
// marker's base64 encoding that does not depend on what precedes it, at
// each of base64's three alignments (so a longer value holding the marker
// is caught too).
func MarkerForms(values ...string) []string {
	// The lowercased marker: a jq rule may transform a value
	// (ascii_downcase) before an error quotes it.
	forms := []string{LeakMarker, strings.ToLower(LeakMarker)}
	for _, v := range values {
		forms = append(forms, base64.StdEncoding.EncodeToString([]byte(v)))
	}
	for pad := 0; pad < 3; pad++ {
		enc := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("x", pad) + LeakMarker))
		skip := (pad*4 + 2) / 3 // characters that mix in the padding
		forms = append(forms, enc[skip+1:len(enc)-4])
	}
	return forms
}

// Leaks returns the forms found in s.
func Leaks(s string, forms []string) []string {
	var found []string
	for _, f := range forms {
		if strings.Contains(s, f) {
			found = append(found, f)
		}
	}
	return found
}
