package argocd

import (
	"strings"
	"testing"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// A LoadBalancer Service a client-side sync created, then a person's
// kubectl apply set externalTrafficPolicy Local; the API server allocated
// healthCheckNodePort in that write (differential seed 52110).
const lbLocalByHand = `
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: ns
  annotations:
    argocd.argoproj.io/tracking-id: app:/Service:ns/web
    kubectl.kubernetes.io/last-applied-configuration: '{"apiVersion":"v1","kind":"Service","metadata":{"annotations":{"argocd.argoproj.io/tracking-id":"app:/Service:ns/web"},"name":"web","namespace":"ns"},"spec":{"externalTrafficPolicy":"Local","ports":[{"name":"https","port":443,"targetPort":8443}],"selector":{"app":"web"},"type":"LoadBalancer"}}'
  managedFields:
  - manager: argocd-controller
    operation: Update
    apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1:
      f:metadata:
        f:annotations:
          .: {}
          f:argocd.argoproj.io/tracking-id: {}
      f:spec:
        f:allocateLoadBalancerNodePorts: {}
        f:internalTrafficPolicy: {}
        f:ports:
          .: {}
          k:{"port":443,"protocol":"TCP"}:
            .: {}
            f:name: {}
            f:port: {}
            f:protocol: {}
            f:targetPort: {}
        f:selector: {}
        f:sessionAffinity: {}
        f:type: {}
  - manager: kubectl-client-side-apply
    operation: Update
    apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1:
      f:metadata:
        f:annotations:
          f:kubectl.kubernetes.io/last-applied-configuration: {}
      f:spec:
        f:externalTrafficPolicy: {}
        f:healthCheckNodePort: {}
spec:
  allocateLoadBalancerNodePorts: true
  clusterIP: 10.96.6.150
  clusterIPs: [10.96.6.150]
  externalTrafficPolicy: Local
  healthCheckNodePort: 32327
  internalTrafficPolicy: Cluster
  ipFamilies: [IPv4]
  ipFamilyPolicy: SingleStack
  ports:
  - {name: https, nodePort: 31762, port: 443, protocol: TCP, targetPort: 8443}
  selector: {app: web}
  sessionAffinity: None
  type: LoadBalancer
`

// TestSyncReleasesHealthCheckNodePort (issue 32, A10; differential seeds
// 52110, 50186, 51028, 51148): the sync of the OutOfSync Service deletes
// externalTrafficPolicy (last-applied-configuration lists it, Git does
// not); the API server defaults it to Cluster and its update strategy
// releases healthCheckNodePort in the same write (kubernetes
// pkg/registry/core/service/strategy.go dropTypeDependentFields), which
// Argo CD's diff does not show: left alone, a sync deletes it. Where Git
// sets the policy to Cluster itself, the server-side diff's apply
// dry-run (in memory here) clears it too, so Argo CD's diff shows it.
func TestSyncReleasesHealthCheckNodePort(t *testing.T) {
	const git = `
apiVersion: v1
kind: Service
metadata: {name: web, namespace: ns, annotations: {team: a}}
spec:
  ports: [{name: https, port: 443, protocol: TCP, targetPort: 8443}]
  selector: {app: web}
  type: LoadBalancer
`
	for _, c := range []struct{ name, syncPolicy string }{
		{"client-side sync", "  syncPolicy: {automated: {selfHeal: true}}\n"},
		{"ServerSideApply", "  syncPolicy: {automated: {selfHeal: true}, syncOptions: [ServerSideApply=true]}\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep := explainSSDWith(t, "", lbLocalByHand, git, "spec:\n", "spec:\n"+c.syncPolicy)
			if st := statusOf(t, rep); !st.Drift {
				t.Fatalf("status %+v, want OutOfSync", st)
			}
			for _, p := range []string{"/spec/externalTrafficPolicy", "/spec/healthCheckNodePort"} {
				if v := argoVerdict(t, rep, p); v.Kind != model.LeftAlone || !strings.Contains(v.Reason, SyncDeletesPhrase) {
					t.Errorf("%s: %s (%s), want left alone saying %q", p, v.Kind, v.Reason, SyncDeletesPhrase)
				}
			}
		})
	}
	// Without ServerSideDiff the 3-way diff shows the policy
	// (last-applied-configuration lists it, Git does not): reverted, and
	// healthCheckNodePort, which it does not show, goes with it.
	t.Run("3-way diff", func(t *testing.T) {
		rep := explainSSDWith(t, "", lbLocalByHand, git, "    argocd.argoproj.io/compare-options: ServerSideDiff=true\n", "",
			"spec:\n", "spec:\n  syncPolicy: {automated: {selfHeal: true}}\n")
		if v := argoVerdict(t, rep, "/spec/externalTrafficPolicy"); v.Kind != model.Reverted {
			t.Errorf("externalTrafficPolicy: %s (%s), want reverted", v.Kind, v.Reason)
		}
		if v := argoVerdict(t, rep, "/spec/healthCheckNodePort"); v.Kind != model.LeftAlone || !strings.Contains(v.Reason, SyncDeletesPhrase) {
			t.Errorf("healthCheckNodePort: %s (%s), want left alone saying %q", v.Kind, v.Reason, SyncDeletesPhrase)
		}
	})
	// Git sets the policy to Cluster itself: the server-side diff's
	// apply dry-run (in memory here) clears healthCheckNodePort too, so
	// Argo CD's diff shows both, and the client-side sync, though
	// last-applied-configuration does not list healthCheckNodePort,
	// changes it (seed 50186).
	for _, c := range []struct {
		name, syncPolicy string
		want             model.VerdictKind
	}{
		{"Git sets Cluster, manual sync", "", model.Reported},
		{"Git sets Cluster, selfHeal", "  syncPolicy: {automated: {selfHeal: true}}\n", model.Reverted},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep := explainSSDWith(t, "", lbLocalByHand, strings.Replace(git, "type: LoadBalancer", "type: LoadBalancer\n  externalTrafficPolicy: Cluster", 1),
				"spec:\n", "spec:\n"+c.syncPolicy)
			for _, p := range []string{"/spec/externalTrafficPolicy", "/spec/healthCheckNodePort"} {
				if v := argoVerdict(t, rep, p); v.Kind != c.want || strings.Contains(v.Reason, SyncKeepsPhrase) {
					t.Errorf("%s: %s (%s), want %s (in Argo CD's diff, changed by a sync)", p, v.Kind, v.Reason, c.want)
				}
			}
		})
	}
}

// TestSyncAllocatesHealthCheckNodePort (issue 32, A10; differential seeds
// 51028, 51148): Git adds externalTrafficPolicy Local to a LoadBalancer
// Service whose live policy is Cluster. Argo CD's diff shows the policy;
// its sync sets it and the API server allocates healthCheckNodePort in
// the same write (pkg/registry/core/service/storage/alloc.go), which the
// diff does not show: left alone, a sync adds it.
func TestSyncAllocatesHealthCheckNodePort(t *testing.T) {
	live := strings.NewReplacer("externalTrafficPolicy: Local", "externalTrafficPolicy: Cluster",
		"  healthCheckNodePort: 32327\n", "", "        f:healthCheckNodePort: {}\n", "", `\"externalTrafficPolicy\":\"Local\",`, "").Replace(lbLocalByHand)
	rep := explainSSDWith(t, "", live, `
apiVersion: v1
kind: Service
metadata: {name: web, namespace: ns}
spec:
  externalTrafficPolicy: Local
  ports: [{name: https, port: 443, protocol: TCP, targetPort: 8443}]
  selector: {app: web}
  type: LoadBalancer
`, "    argocd.argoproj.io/compare-options: ServerSideDiff=true\n", "", "spec:\n", "spec:\n  syncPolicy: {automated: {selfHeal: true}}\n")
	if v := argoVerdict(t, rep, "/spec/externalTrafficPolicy"); v.Kind != model.Reverted {
		t.Errorf("externalTrafficPolicy: %s (%s), want reverted", v.Kind, v.Reason)
	}
	if v := argoVerdict(t, rep, "/spec/healthCheckNodePort"); v.Kind != model.LeftAlone || !strings.Contains(v.Reason, SyncAddsPhrase) {
		t.Errorf("healthCheckNodePort: %s (%s), want left alone saying %q", v.Kind, v.Reason, SyncAddsPhrase)
	}
}

// TestDaemonSetTemplateGeneration (issue 32; differential seed 53130): a
// DaemonSet whose container image a person changed, hidden by a jq rule,
// under ServerSideDiff. The dry-run of Git's manifest puts the image back,
// so the DaemonSet strategy bumps the template generation (kubernetes
// pkg/registry/apps/daemonset/strategy.go PrepareForUpdate), which apps/v1
// keeps in deprecated.daemonset.template.generation: Argo CD is OutOfSync
// on that annotation alone. The in-memory dry-run bumps it too. (The
// client-side sync's Update entry owns the annotation the server set in
// its request, so the dry-run's result keeps the server's value:
// gitops-engine removeWebhookMutation keeps every field of
// argocd-controller's entries, Update or Apply.)
func TestDaemonSetTemplateGeneration(t *testing.T) {
	const live = `
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent
  namespace: ns
  generation: 2
  annotations:
    argocd.argoproj.io/tracking-id: app:apps/DaemonSet:ns/agent
    deprecated.daemonset.template.generation: "2"
  managedFields:
  - manager: argocd-controller
    operation: Update
    apiVersion: apps/v1
    fieldsType: FieldsV1
    fieldsV1:
      f:metadata: {f:annotations: {f:argocd.argoproj.io/tracking-id: {}, f:deprecated.daemonset.template.generation: {}}}
      f:spec:
        f:selector: {}
        f:template:
          f:metadata: {f:labels: {f:app: {}}}
          f:spec:
            f:containers:
              'k:{"name":"agent"}': {.: {}, f:name: {}}
  - manager: kubectl-patch
    operation: Update
    apiVersion: apps/v1
    fieldsType: FieldsV1
    fieldsV1:
      f:spec: {f:template: {f:spec: {f:containers: {'k:{"name":"agent"}': {f:image: {}}}}}}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec: {containers: [{name: agent, image: "fluent/fluent-bit:3.1"}]}
`
	const git = `
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: ns}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec: {containers: [{name: agent, image: "fluent/fluent-bit:3.0"}]}
`
	rep := explainSSDWith(t, "", live, git, "spec:\n",
		"spec:\n  ignoreDifferences: [{group: apps, kind: DaemonSet, jqPathExpressions: ['.spec.template.spec.containers[].image']}]\n")
	if st := statusOf(t, rep); !st.Drift {
		t.Fatalf("status %+v, want OutOfSync (the template generation)", st)
	}
	if v := argoVerdict(t, rep, "/metadata/annotations/"+templateGenerationPointer); v.Kind != model.Reported {
		t.Errorf("template generation: %s (%s), want reported", v.Kind, v.Reason)
	}
}

const templateGenerationPointer = "deprecated.daemonset.template.generation"

// A ClusterIP Service a client-side sync created; then a person's
// kubectl apply of a manifest with sessionAffinity ClientIP, and the API
// server defaulted sessionAffinityConfig in that write (differential
// seed 56194).
const affinityByHand = `
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: ns
  annotations:
    argocd.argoproj.io/tracking-id: app:/Service:ns/web
    kubectl.kubernetes.io/last-applied-configuration: '{"apiVersion":"v1","kind":"Service","metadata":{"annotations":{},"name":"web","namespace":"ns"},"spec":{"ports":[{"name":"http","port":80,"protocol":"TCP","targetPort":8080}],"selector":{"app":"web"},"sessionAffinity":"ClientIP"}}'
  managedFields:
  - manager: argocd-controller
    operation: Update
    apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1:
      f:metadata:
        f:annotations:
          .: {}
          f:argocd.argoproj.io/tracking-id: {}
      f:spec:
        f:internalTrafficPolicy: {}
        f:ports:
          .: {}
          k:{"port":80,"protocol":"TCP"}:
            .: {}
            f:name: {}
            f:port: {}
            f:protocol: {}
            f:targetPort: {}
        f:selector: {}
        f:type: {}
  - manager: kubectl-client-side-apply
    operation: Update
    apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1:
      f:metadata:
        f:annotations:
          f:kubectl.kubernetes.io/last-applied-configuration: {}
      f:spec:
        f:sessionAffinity: {}
        f:sessionAffinityConfig:
          .: {}
          f:clientIP:
            .: {}
            f:timeoutSeconds: {}
spec:
  clusterIP: 10.96.6.151
  clusterIPs: [10.96.6.151]
  internalTrafficPolicy: Cluster
  ipFamilies: [IPv4]
  ipFamilyPolicy: SingleStack
  ports:
  - {name: http, port: 80, protocol: TCP, targetPort: 8080}
  selector: {app: web}
  sessionAffinity: ClientIP
  sessionAffinityConfig: {clientIP: {timeoutSeconds: 10800}}
  type: ClusterIP
`

// TestSyncDeletesDerivedField (issue 32, A25; differential seed 56194):
// the Service is OutOfSync (Git adds an annotation); its client-side sync
// deletes sessionAffinity (last-applied-configuration lists it, Git does
// not), the API server defaults it to None and drops
// sessionAffinityConfig in the same write (core/v1 SetDefaults_Service).
// Argo CD's server-side diff shows neither: both left alone, a sync
// deletes them. With ServerSideApply=true the same holds: the person's
// kubectl-client-side-apply entry makes the sync migrate it first with a
// client-side apply (csaMigrates).
func TestSyncDeletesDerivedField(t *testing.T) {
	const git = `
apiVersion: v1
kind: Service
metadata: {name: web, namespace: ns, annotations: {team: a}}
spec:
  ports: [{name: http, port: 80, protocol: TCP, targetPort: 8080}]
  selector: {app: web}
`
	for _, c := range []struct{ name, syncPolicy string }{
		{"client-side sync", "  syncPolicy: {automated: {selfHeal: true}}\n"},
		{"ServerSideApply, migration", "  syncPolicy: {automated: {selfHeal: true}, syncOptions: [ServerSideApply=true]}\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep := explainSSDWith(t, "", affinityByHand, git, "spec:\n", "spec:\n"+c.syncPolicy)
			if st := statusOf(t, rep); !st.Drift {
				t.Fatalf("status %+v, want OutOfSync", st)
			}
			for _, p := range []string{"/spec/sessionAffinity", "/spec/sessionAffinityConfig"} {
				if v := argoVerdict(t, rep, p); v.Kind != model.LeftAlone || !strings.Contains(v.Reason, SyncDeletesPhrase) {
					t.Errorf("%s: %s (%s), want left alone saying %q", p, v.Kind, v.Reason, SyncDeletesPhrase)
				}
			}
		})
	}
	// Git sets the same sessionAffinity: the sync keeps it, and so the
	// server keeps its config: nothing is named for either.
	t.Run("Git keeps ClientIP", func(t *testing.T) {
		rep := explainSSDWith(t, "", affinityByHand, strings.Replace(git, "selector: {app: web}", "selector: {app: web}\n  sessionAffinity: ClientIP", 1),
			"spec:\n", "spec:\n  syncPolicy: {automated: {selfHeal: true}}\n")
		for _, d := range rep.Drifts {
			if strings.HasPrefix(d.Path, "/spec/sessionAffinity") {
				t.Errorf("%s named (%+v), want nothing: the sync keeps it", d.Path, d.Verdicts)
			}
		}
	})
}
