package argocd

import (
	"strings"
	"testing"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// A Service Argo CD synced client-side with Git's sessionAffinity None;
// kubectl patch then set ClientIP, and the API server filled
// sessionAffinityConfig.clientIP.timeoutSeconds 10800 in the same write
// (make differential ENGINE=argocd seed 52103).
const serviceAffinityPatched = `
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: ns
  annotations:
    argocd.argoproj.io/tracking-id: app:/Service:ns/web
    kubectl.kubernetes.io/last-applied-configuration: '{"apiVersion":"v1","kind":"Service","metadata":{"annotations":{"argocd.argoproj.io/tracking-id":"app:/Service:ns/web"},"name":"web","namespace":"ns"},"spec":{"ports":[{"name":"http","port":80,"targetPort":8080}],"selector":{"app":"web"},"sessionAffinity":"None","type":"ClusterIP"}}'
  managedFields:
  - manager: argocd-controller
    operation: Update
    apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1:
      f:metadata: {f:annotations: {.: {}, f:argocd.argoproj.io/tracking-id: {}, f:kubectl.kubernetes.io/last-applied-configuration: {}}}
      f:spec:
        f:ports: {.: {}, "k:{\"port\":80,\"protocol\":\"TCP\"}": {.: {}, f:name: {}, f:port: {}, f:protocol: {}, f:targetPort: {}}}
        f:selector: {}
        f:type: {}
  - manager: kubectl-patch
    operation: Update
    apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1: {f:spec: {f:sessionAffinity: {}, f:sessionAffinityConfig: {.: {}, f:clientIP: {.: {}, f:timeoutSeconds: {}}}}}
spec:
  clusterIP: 10.0.0.12
  ports: [{name: http, port: 80, protocol: TCP, targetPort: 8080}]
  selector: {app: web}
  sessionAffinity: ClientIP
  sessionAffinityConfig: {clientIP: {timeoutSeconds: 10800}}
  type: ClusterIP
`

const serviceAffinityGit = `
apiVersion: v1
kind: Service
metadata: {name: web, namespace: ns}
spec:
  ports: [{name: http, port: 80, targetPort: 8080}]
  selector: {app: web}
  sessionAffinity: None
  type: ClusterIP
`

// TestDerivedFieldFollowsItsSyncedSource (class R15, seed 52103): the
// sync's 3-way patch does not list sessionAffinityConfig (nobody applied
// it), but it sets sessionAffinity back to None, and the API server's
// defaulting of the patched object (kubernetes pkg/apis/core/v1
// defaults.go SetDefaults_Service) drops sessionAffinityConfig with it:
// self-heal removed it on Argo CD v3.2.11, so it is reverted, not
// reported. A sessionAffinity Git leaves at ClientIP keeps it.
func TestDerivedFieldFollowsItsSyncedSource(t *testing.T) {
	parser, err := parityParser()
	if err != nil {
		t.Fatal(err)
	}
	const timeout = "/spec/sessionAffinityConfig/clientIP/timeoutSeconds"
	opts := Options{Inputs: []Input{{Object: objectOf(t, selfHealApp)}}, GVKParser: parser}
	rep := explainFile(t, opts, serviceAffinityPatched, serviceAffinityGit)
	if v := argoVerdict(t, rep, timeout); v.Kind != model.Reverted || strings.Contains(v.Reason, SyncKeepsPhrase) {
		t.Errorf("Git sets None: %s %q, want reverted (the defaulting drops it with its source)", v.Kind, v.Reason)
	}
	// A jsonPointer rule hides sessionAffinity, and the Application
	// respects ignored differences: the sync keeps live's ClientIP, so
	// the derived field is never called reverted (syncTarget; the
	// ServerSideDiff case that showed it, seed 58790, A27, is the saved
	// case e2e/testdata/differential/argocd-seed-58790.yaml).
	respecting := Options{Inputs: []Input{{Object: objectOf(t, strings.Replace(selfHealApp, "  syncPolicy:", "  - {kind: Service, jsonPointers: [/spec/sessionAffinity]}\n  syncPolicy:", 1))}}, GVKParser: parser}
	rep = explainFile(t, respecting, serviceAffinityPatched, serviceAffinityGit)
	for _, d := range rep.Drifts {
		if v := verdictOf(d, Engine); d.Path == timeout && v != nil && v.Kind == model.Reverted {
			t.Errorf("sessionAffinity ignored and respected: %s %q, want it kept", v.Kind, v.Reason)
		}
	}
	// Git's ClientIP: the sync keeps the source, the server's default
	// stays (Argo CD's diff defaults its target the same way: no drift).
	rep = explainFile(t, opts, serviceAffinityPatched, strings.Replace(serviceAffinityGit, "sessionAffinity: None", "sessionAffinity: ClientIP", 1))
	for _, d := range rep.Drifts {
		if d.Path == timeout {
			if v := argoVerdict(t, rep, timeout); v.Kind == model.Reverted {
				t.Errorf("Git sets ClientIP: %s %q, want it kept", v.Kind, v.Reason)
			}
		}
	}
}
