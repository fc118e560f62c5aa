package argocd

import (
	"strings"
	"testing"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// ssaSelfHealApp syncs with ServerSideApply=true and selfHeal, compared
// by the structured-merge diff (no ServerSideDiff).
const ssaSelfHealApp = testAppHead + `  syncPolicy:
    automated: {selfHeal: true}
    syncOptions: [ServerSideApply=true]
`

// TestServerSideSyncKeepsWhatTheServerSetsAgain (issue 32, W6; seeds
// 50336, 50389, 50562): a CronJob whose container's resources: {}
// argocd-controller applied last time and Git leaves out, and a changed
// schedule. Argo CD's structured-merge diff shows both (its apply would
// prune resources), and its self-heal sync, a server-side apply as
// argocd-controller, prunes resources, but the API server decodes the
// object into its Go type and encodes it again, resources: {} with it
// (localApply, serverRoundTrip): the field is as it was, the object stays
// OutOfSync. resources is reported (the sync leaves it), schedule
// reverted (the sync writes Git's value).
func TestServerSideSyncKeepsWhatTheServerSetsAgain(t *testing.T) {
	rep := explainApp(t, ssaSelfHealApp, cronJobMigrated, `
apiVersion: batch/v1
kind: CronJob
metadata: {name: cj, namespace: ns}
spec:
  schedule: "*/10 * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers:
          - {name: app, image: busybox}
`)
	if st := statusOf(t, rep); !st.Drift {
		t.Fatalf("status %+v, want OutOfSync", st)
	}
	if v := argoVerdict(t, rep, "/spec/schedule"); v.Kind != model.Reverted {
		t.Errorf("/spec/schedule: %s (%s), want reverted", v.Kind, v.Reason)
	}
	v := argoVerdict(t, rep, "/spec/jobTemplate/spec/template/spec/containers/0/resources")
	if v.Kind != model.Reported || !strings.Contains(v.Reason, ServerSetsAgainPhrase) {
		t.Errorf("resources: %s (%s), want reported saying %q", v.Kind, v.Reason, ServerSetsAgainPhrase)
	}
}

// A ConfigMap the first sync created client-side (argocd-controller an
// Update manager owning last-applied-configuration, the label tier and
// the data), as Argo CD v3.2.11 creates the objects of a
// ServerSideApply=true Application (differential seed 50880).
const cmCreatedClientSide = `
apiVersion: v1
kind: ConfigMap
metadata:
  name: cm
  namespace: ns
  labels: {tier: web}
  annotations:
    argocd.argoproj.io/tracking-id: app:/ConfigMap:ns/cm
    kubectl.kubernetes.io/last-applied-configuration: '{"apiVersion":"v1","data":{"a":"1","b":"2"},"kind":"ConfigMap","metadata":{"annotations":{"argocd.argoproj.io/tracking-id":"app:/ConfigMap:ns/cm"},"labels":{"tier":"web"},"name":"cm","namespace":"ns"}}'
  managedFields:
  - manager: argocd-controller
    operation: Update
    apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1:
      f:data: {.: {}, f:a: {}, f:b: {}}
      f:metadata:
        f:annotations:
          .: {}
          f:argocd.argoproj.io/tracking-id: {}
          f:kubectl.kubernetes.io/last-applied-configuration: {}
        f:labels: {.: {}, f:tier: {}}
data: {a: "1", b: "2"}
`

// TestServerSideSyncPrunesMigratedFields (issue 32, A16; seed 50880): Git
// drops the label tier and changes b. Argo CD's structured-merge diff does
// not show tier (argocd-controller applied nothing yet), but its
// server-side apply sync is kubectl apply --server-side, which hands the
// fields of the Update managers owning last-applied-configuration to
// argocd-controller (k8s.io/kubectl pkg/cmd/apply/apply.go
// migrateToSSAIfNecessary, client-go util/csaupgrade) and applies again:
// the apply prunes tier. Left alone, the reason saying a sync deletes it.
func TestServerSideSyncPrunesMigratedFields(t *testing.T) {
	rep := explainApp(t, ssaSelfHealApp, cmCreatedClientSide, `
apiVersion: v1
kind: ConfigMap
metadata: {name: cm, namespace: ns}
data: {a: "1", b: "3"}
`)
	if st := statusOf(t, rep); !st.Drift {
		t.Fatalf("status %+v, want OutOfSync", st)
	}
	v := argoVerdict(t, rep, "/metadata/labels/tier")
	if (v.Kind != model.LeftAlone && v.Kind != model.Ignored) || !strings.Contains(v.Reason, SyncDeletesPhrase) {
		t.Errorf("tier: %s (%s), want left alone saying %q", v.Kind, v.Reason, SyncDeletesPhrase)
	}
}

// A Deployment a client-side sync created (argocd-controller as an
// Update, with last-applied-configuration) with replicas 2, whose label
// part-of kubectl patch then changed, as differential seed 62864 left it.
const deploymentCreatedClientSide = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: ns
  labels: {app: web, app.kubernetes.io/part-of: other}
  annotations:
    argocd.argoproj.io/tracking-id: app:apps/Deployment:ns/web
    kubectl.kubernetes.io/last-applied-configuration: '{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"annotations":{"argocd.argoproj.io/tracking-id":"app:apps/Deployment:ns/web"},"labels":{"app":"web","app.kubernetes.io/part-of":"shop"},"name":"web","namespace":"ns"},"spec":{"replicas":2,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"image":"nginx:1.25","name":"web"}]}}}}'
  managedFields:
  - manager: argocd-controller
    operation: Update
    apiVersion: apps/v1
    fieldsType: FieldsV1
    fieldsV1:
      f:metadata:
        f:annotations:
          .: {}
          f:argocd.argoproj.io/tracking-id: {}
          f:kubectl.kubernetes.io/last-applied-configuration: {}
        f:labels: {.: {}, f:app: {}}
      f:spec:
        f:replicas: {}
        f:selector: {}
        f:template:
          f:metadata: {f:labels: {.: {}, f:app: {}}}
          f:spec:
            f:containers:
              'k:{"name":"web"}': {.: {}, f:image: {}, f:name: {}}
  - manager: kubectl-patch
    operation: Update
    apiVersion: apps/v1
    fieldsType: FieldsV1
    fieldsV1:
      f:metadata: {f:labels: {f:app.kubernetes.io/part-of: {}}}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: "nginx:1.25"}]}
`

// TestServerSideSyncPrunesMigratedDefaults (seed 62864): as
// TestServerSideSyncPrunesMigratedFields, for a field the API server
// defaults. Git drops replicas (2); Argo CD's structured-merge diff shows
// only the label, but the server-side sync's migration hands replicas to
// argocd-controller, the apply prunes it, and the server's defaulting
// sets 1: self-heal changed it. Left alone, the reason saying a sync
// deletes it and what the server sets.
func TestServerSideSyncPrunesMigratedDefaults(t *testing.T) {
	rep := explainApp(t, ssaSelfHealApp, deploymentCreatedClientSide, `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: ns, labels: {app: web, app.kubernetes.io/part-of: shop}}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: "nginx:1.25"}]}
`)
	if st := statusOf(t, rep); !st.Drift {
		t.Fatalf("status %+v, want OutOfSync", st)
	}
	v := argoVerdict(t, rep, "/spec/replicas")
	if v.Kind != model.LeftAlone || !strings.Contains(v.Reason, SyncDeletesPhrase) || !strings.Contains(v.Reason, "sets it to 1") {
		t.Errorf("replicas: %s (%s), want left alone saying %q and that the server sets it to 1", v.Kind, v.Reason, SyncDeletesPhrase)
	}
	if v := argoVerdict(t, rep, "/metadata/labels/app.kubernetes.io~1part-of"); v.Kind != model.Reverted {
		t.Errorf("part-of: %s (%s), want reverted", v.Kind, v.Reason)
	}
}

// TestServerSideSyncExposesWhatAManagersRuleHid (differential seed
// 62591, Argo CD v3.2.11): an Ingress a client-side sync created, whose
// rewrite-target a person's kubectl apply changed; a managedFieldsManagers
// rule for kubectl-client-side-apply hides it, and the sync is server-side
// with RespectIgnoreDifferences=true. Git adds a label: OutOfSync. The
// first self-heal sync keeps the person's value (the normalized target),
// but its migration hands the annotation to argocd-controller; no rule
// hides it then, and the next self-heal sync writes Git's value. Ignored
// (Argo CD's diff does not show it now), the reason saying a sync writes
// it back.
func TestServerSideSyncExposesWhatAManagersRuleHid(t *testing.T) {
	const live = `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
  namespace: ns
  annotations:
    argocd.argoproj.io/tracking-id: app:networking.k8s.io/Ingress:ns/web
    nginx.ingress.kubernetes.io/rewrite-target: /app
    kubectl.kubernetes.io/last-applied-configuration: '{"apiVersion":"networking.k8s.io/v1","kind":"Ingress","metadata":{"annotations":{"argocd.argoproj.io/tracking-id":"app:networking.k8s.io/Ingress:ns/web","nginx.ingress.kubernetes.io/rewrite-target":"/app"},"name":"web","namespace":"ns"},"spec":{"ingressClassName":"nginx"}}'
  managedFields:
  - manager: argocd-controller
    operation: Update
    apiVersion: networking.k8s.io/v1
    fieldsType: FieldsV1
    fieldsV1:
      f:metadata: {f:annotations: {.: {}, f:argocd.argoproj.io/tracking-id: {}}}
      f:spec: {f:ingressClassName: {}}
  - manager: kubectl-client-side-apply
    operation: Update
    apiVersion: networking.k8s.io/v1
    fieldsType: FieldsV1
    fieldsV1:
      f:metadata:
        f:annotations:
          f:kubectl.kubernetes.io/last-applied-configuration: {}
          f:nginx.ingress.kubernetes.io/rewrite-target: {}
spec: {ingressClassName: nginx}
`
	app := strings.Replace(ssaSelfHealApp, "[ServerSideApply=true]", "[ServerSideApply=true, RespectIgnoreDifferences=true]", 1) +
		"  ignoreDifferences: [{group: networking.k8s.io, kind: Ingress, managedFieldsManagers: [kubectl-client-side-apply]}]\n"
	rep := explainApp(t, app, live, `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
  namespace: ns
  labels: {edge: "true"}
  annotations: {nginx.ingress.kubernetes.io/rewrite-target: /}
spec: {ingressClassName: nginx}
`)
	if st := statusOf(t, rep); !st.Drift {
		t.Fatalf("status %+v, want OutOfSync (the label)", st)
	}
	v := argoVerdict(t, rep, "/metadata/annotations/nginx.ingress.kubernetes.io~1rewrite-target")
	if v.Kind != model.Ignored || !strings.Contains(v.Reason, exposedPhrase) || !strings.Contains(v.Reason, SyncReappliesPhrase) {
		t.Errorf("rewrite-target: %s (%s), want ignored (Argo CD's diff does not show it now) saying %q", v.Kind, v.Reason, exposedPhrase)
	}
	// Without self-heal no second sync runs: the rule's verdict stays.
	manual := strings.Replace(app, "    automated: {selfHeal: true}\n", "", 1)
	rep = explainApp(t, manual, live, `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
  namespace: ns
  labels: {edge: "true"}
  annotations: {nginx.ingress.kubernetes.io/rewrite-target: /}
spec: {ingressClassName: nginx}
`)
	if v := argoVerdict(t, rep, "/metadata/annotations/nginx.ingress.kubernetes.io~1rewrite-target"); v.Kind != model.Ignored || strings.Contains(v.Reason, exposedPhrase) {
		t.Errorf("without self-heal, rewrite-target: %s (%s), want ignored, the rule's verdict", v.Kind, v.Reason)
	}
}

// TestServerSideSyncRevertsWhatAManagersRuleHidInAShownMap (differential
// seed 63833, Argo CD v3.2.11): as
// TestServerSideSyncExposesWhatAManagersRuleHid, for a label under the
// rule in a labels map Argo CD's diff shows (Git adds another label):
// reported now (RespectIgnoreDifferences copies the live value into the
// first sync), reverted by self-heal's second sync.
func TestServerSideSyncRevertsWhatAManagersRuleHidInAShownMap(t *testing.T) {
	const live = `
apiVersion: v1
kind: ConfigMap
metadata:
  name: cm
  namespace: ns
  labels: {policy: strict}
  annotations:
    argocd.argoproj.io/tracking-id: app:/ConfigMap:ns/cm
    kubectl.kubernetes.io/last-applied-configuration: '{"apiVersion":"v1","data":{"a":"1"},"kind":"ConfigMap","metadata":{"annotations":{"argocd.argoproj.io/tracking-id":"app:/ConfigMap:ns/cm"},"labels":{"policy":"strict"},"name":"cm","namespace":"ns"}}'
  managedFields:
  - manager: argocd-controller
    operation: Update
    apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1:
      f:data: {.: {}, f:a: {}}
      f:metadata: {f:annotations: {.: {}, f:argocd.argoproj.io/tracking-id: {}}}
  - manager: kubectl-client-side-apply
    operation: Update
    apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1:
      f:metadata:
        f:annotations: {f:kubectl.kubernetes.io/last-applied-configuration: {}}
        f:labels: {.: {}, f:policy: {}}
data: {a: "1"}
`
	app := strings.Replace(ssaSelfHealApp, "[ServerSideApply=true]", "[ServerSideApply=true, RespectIgnoreDifferences=true]", 1) +
		"  ignoreDifferences: [{kind: ConfigMap, managedFieldsManagers: [kubectl-client-side-apply]}]\n"
	rep := explainApp(t, app, live, `
apiVersion: v1
kind: ConfigMap
metadata: {name: cm, namespace: ns, labels: {policy: relaxed, edge: "true"}}
data: {a: "1"}
`)
	if st := statusOf(t, rep); !st.Drift {
		t.Fatalf("status %+v, want OutOfSync (the label edge)", st)
	}
	v := argoVerdict(t, rep, "/metadata/labels/policy")
	if v.Kind != model.Reverted || !strings.Contains(v.Reason, exposedPhrase) {
		t.Errorf("policy: %s (%s), want reverted saying %q", v.Kind, v.Reason, exposedPhrase)
	}
}

// TestServerSideSyncMigrationDeletesAMap (differential seed 67202, Argo
// CD v3.2.11): an Ingress a client-side sync created; kubectl label added
// part-of, then a person's kubectl apply added the label edge (its
// manifest, now last-applied-configuration, has labels; Git has none).
// The ServerSideApply=true sync first applies Git client-side as
// kubectl-client-side-apply (the migration step): kubectl's 3-way patch
// deletes the whole labels map, part-of with it. Self-heal deleted both.
func TestServerSideSyncMigrationDeletesAMap(t *testing.T) {
	const live = `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
  namespace: ns
  annotations:
    nginx.ingress.kubernetes.io/rewrite-target: /
    kubectl.kubernetes.io/last-applied-configuration: '{"apiVersion":"networking.k8s.io/v1","kind":"Ingress","metadata":{"annotations":{"nginx.ingress.kubernetes.io/rewrite-target":"/"},"labels":{"edge":"true"},"name":"web","namespace":"ns"},"spec":{"ingressClassName":"nginx"}}'
  labels: {app.kubernetes.io/part-of: manual, edge: "true"}
  managedFields:
  - manager: argocd-controller
    operation: Update
    apiVersion: networking.k8s.io/v1
    fieldsType: FieldsV1
    fieldsV1:
      f:metadata: {f:annotations: {.: {}, f:nginx.ingress.kubernetes.io/rewrite-target: {}}}
      f:spec: {f:ingressClassName: {}}
  - manager: kubectl-label
    operation: Update
    apiVersion: networking.k8s.io/v1
    fieldsType: FieldsV1
    fieldsV1:
      f:metadata: {f:labels: {.: {}, f:app.kubernetes.io/part-of: {}}}
  - manager: kubectl-client-side-apply
    operation: Update
    apiVersion: networking.k8s.io/v1
    fieldsType: FieldsV1
    fieldsV1:
      f:metadata: {f:annotations: {f:kubectl.kubernetes.io/last-applied-configuration: {}}, f:labels: {f:edge: {}}}
spec: {ingressClassName: nginx}
`
	const git = `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
  namespace: ns
  annotations: {nginx.ingress.kubernetes.io/rewrite-target: /}
spec: {ingressClassName: nginx}
`
	// The person's manifest had no tracking annotation: Argo CD finds
	// the object in its status.resources.
	app := ssaSelfHealApp + "status:\n  resources:\n  - {group: networking.k8s.io, version: v1, kind: Ingress, namespace: ns, name: web, status: OutOfSync}\n"
	rep := explainApp(t, app, live, git)
	if st := statusOf(t, rep); !st.Drift {
		t.Fatalf("status %+v, want OutOfSync (the tracking annotation)", st)
	}
	v := argoVerdict(t, rep, "/metadata/labels/app.kubernetes.io~1part-of")
	if v.Kind != model.Reverted && !strings.Contains(v.Reason, SyncDeletesPhrase) {
		t.Errorf("part-of: %s (%s), want a sync deleting it", v.Kind, v.Reason)
	}
}
