package argocd

import (
	"context"
	"strings"
	"testing"

	"github.com/kubectl-drift/kubectl-drift/internal/drift"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// A ConfigMap a client-side sync created, then changed by two writers:
// a kubectl apply by hand of Git's manifest with a label audited
// (kubectl-client-side-apply; last-applied-configuration is now the
// person's), and a server-side apply as argocd-controller of a label quota
// (a second argocd-controller entry, an Apply). Git has a label of its own
// (app), as the differential corpus's objects have: a manifest with no
// labels at all would make kubectl's 3-way patch delete the whole labels
// map (its original lists labels), quota with it.
const csaThenTwoWriters = `
apiVersion: v1
kind: ConfigMap
metadata:
  name: cm
  namespace: ns
  labels: {app: web, audited: "yes", quota: q1}
  annotations:
    argocd.argoproj.io/tracking-id: app:/ConfigMap:ns/cm
    kubectl.kubernetes.io/last-applied-configuration: '{"apiVersion":"v1","data":{"a":"1","b":"2"},"kind":"ConfigMap","metadata":{"annotations":{"argocd.argoproj.io/tracking-id":"app:/ConfigMap:ns/cm"},"labels":{"app":"web","audited":"yes"},"name":"cm","namespace":"ns"}}'
  managedFields:
  - manager: argocd-controller
    operation: Update
    apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1:
      f:data: {f:a: {}, f:b: {}}
      f:metadata:
        f:annotations:
          .: {}
          f:argocd.argoproj.io/tracking-id: {}
        f:labels:
          .: {}
          f:app: {}
  - manager: kubectl-client-side-apply
    operation: Update
    apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1:
      f:metadata:
        f:annotations:
          f:kubectl.kubernetes.io/last-applied-configuration: {}
        f:labels:
          f:audited: {}
  - manager: argocd-controller
    operation: Apply
    apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1:
      f:metadata:
        f:labels:
          f:quota: {}
data: {a: "1", b: "2"}
`

// TestSyncPrunes (issue 32, A4; seeds 20056, 20086): a selfHeal
// Application with ServerSideDiff=true syncing client-side, OutOfSync for
// /data/b. Its sync is kubectl apply with the live
// last-applied-configuration as the 3-way patch's original: the label the
// person's kubectl apply listed there is deleted though the server-side
// diff does not show it (left alone, the reason saying a sync deletes
// it); the label argocd-controller applied server-side is shown (the
// dry-run apply prunes it) but the sync keeps it (reported, saying so).
func TestSyncPrunes(t *testing.T) {
	// Git keeps a labels map: without one, the 3-way patch from
	// last-applied-configuration (which has labels) deletes the whole
	// map, quota with it (clientSideSyncResult).
	rep := explainSSDWith(t, "", csaThenTwoWriters, `
apiVersion: v1
kind: ConfigMap
metadata: {name: cm, namespace: ns, labels: {app: cm}}
data: {a: "1", b: "3"}
`, "spec:\n", "spec:\n  syncPolicy: {automated: {selfHeal: true}}\n")
	if st := statusOf(t, rep); !st.Drift {
		t.Fatalf("status %+v, want OutOfSync", st)
	}
	for p, want := range map[string]struct {
		kind   model.VerdictKind
		phrase string
	}{
		"/data/b":                  {model.Reverted, ""},
		"/metadata/labels/audited": {model.LeftAlone, SyncDeletesPhrase},
		"/metadata/labels/quota":   {model.Reported, SyncKeepsPhrase},
	} {
		if v := argoVerdict(t, rep, p); v.Kind != want.kind || !strings.Contains(v.Reason, want.phrase) {
			t.Errorf("%s: %s (%s), want %s saying %q", p, v.Kind, v.Reason, want.kind, want.phrase)
		}
	}
}

// TestSyncPrunesIgnoredFields (issue 32, A12; differential seeds 50256,
// 50291, 50358, 50525, 50589): a field an ignoreDifferences rule hides
// that Git does not have and the live last-applied-configuration lists is
// deleted by the sync of the object OutOfSync for another field, as a
// left-alone one is (syncPrunes): ignoreDifferences only hides it from the
// diff, the sync's 3-way patch deletes it all the same. With
// RespectIgnoreDifferences=true the sync's target takes the ignored live
// value (argo-cd controller/sync.go normalizeTargetResources), so it
// stays. With ServerSideApply=true the sync first runs a client-side
// apply as kubectl-client-side-apply when that manager has fields
// (gitops-engine pkg/sync/sync_context.go applyObject,
// needsClientSideApplyMigration, performClientSideApplyMigration), whose
// 3-way patch deletes the field too. ClientSideApplyMigration=false turns
// that step off, yet the server-side apply still prunes it: kubectl apply
// --server-side hands the fields of the Update manager owning
// last-applied-configuration (kubectl-client-side-apply) to
// argocd-controller and applies again (k8s.io/kubectl
// pkg/cmd/apply/apply.go migrateToSSAIfNecessary; serverSideSyncResult).
func TestSyncPrunesIgnoredFields(t *testing.T) {
	const rule = "spec:\n  ignoreDifferences: [{kind: ConfigMap, jsonPointers: [/metadata/labels/audited]}]\n"
	for _, c := range []struct {
		name, syncPolicy string
		deletes          bool
	}{
		{"client-side sync", "  syncPolicy: {automated: {selfHeal: true}}\n", true},
		{"RespectIgnoreDifferences", "  syncPolicy: {automated: {selfHeal: true}, syncOptions: [RespectIgnoreDifferences=true]}\n", false},
		{"ServerSideApply, client-side apply migration", "  syncPolicy: {automated: {selfHeal: true}, syncOptions: [ServerSideApply=true]}\n", true},
		{"ServerSideApply, ClientSideApplyMigration=false", "  syncPolicy: {automated: {selfHeal: true}, syncOptions: [ServerSideApply=true, ClientSideApplyMigration=false]}\n", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep := explainSSDWith(t, "", csaThenTwoWriters, `
apiVersion: v1
kind: ConfigMap
metadata: {name: cm, namespace: ns, labels: {app: web, quota: q1}}
data: {a: "1", b: "3"}
`, "spec:\n", rule+c.syncPolicy)
			if st := statusOf(t, rep); !st.Drift {
				t.Fatalf("status %+v, want OutOfSync", st)
			}
			v := argoVerdict(t, rep, "/metadata/labels/audited")
			if v.Kind != model.Ignored || strings.Contains(v.Reason, SyncDeletesPhrase) != c.deletes {
				t.Errorf("audited: %s (%s), want ignored, saying a sync deletes it: %v", v.Kind, v.Reason, c.deletes)
			}
		})
	}
}

// TestSyncPrunesListGitSets (issue 32, A13; differential seeds 52096,
// 50239): an aggregated ClusterRole whose Git manifest says rules: [],
// created without last-applied-configuration; the aggregation controller
// wrote /rules/0. Argo CD's diff shows /rules, and its client-side sync,
// though no last-applied-configuration lists the item, sets the list Git
// names (a strategic merge patch replaces a list without merge key:
// kubectl pkg/cmd/apply/patcher.go, CreateThreeWayMergePatch): self-heal
// emptied /rules on Argo CD v3.2.11. Reverted, not "a sync does not
// remove it".
func TestSyncPrunesListGitSets(t *testing.T) {
	const live = `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: agg
  annotations: {argocd.argoproj.io/tracking-id: "app:rbac.authorization.k8s.io/ClusterRole:ns/agg"}
  managedFields:
  - manager: argocd
    operation: Update
    apiVersion: rbac.authorization.k8s.io/v1
    fieldsType: FieldsV1
    fieldsV1:
      f:aggregationRule: {.: {}, f:clusterRoleSelectors: {}}
      f:metadata: {f:annotations: {.: {}, f:argocd.argoproj.io/tracking-id: {}}}
  - manager: clusterrole-aggregation-controller
    operation: Apply
    apiVersion: rbac.authorization.k8s.io/v1
    fieldsType: FieldsV1
    fieldsV1:
      f:rules: {}
aggregationRule:
  clusterRoleSelectors: [{matchLabels: {rbac.drift.test/aggregate-to-monitoring: "true"}}]
rules:
- {apiGroups: [""], resources: [pods, services, endpoints], verbs: [get, list, watch]}
`
	const git = `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: agg}
aggregationRule:
  clusterRoleSelectors: [{matchLabels: {rbac.drift.test/aggregate-to-monitoring: "true"}}]
rules: []
`
	rep := explainSSDWith(t, "", live, git, "    argocd.argoproj.io/compare-options: ServerSideDiff=true\n", "",
		"spec:\n", "spec:\n  syncPolicy: {automated: {selfHeal: true}, syncOptions: [RespectIgnoreDifferences=true]}\n")
	if st := statusOf(t, rep); !st.Drift {
		t.Fatalf("status %+v, want OutOfSync", st)
	}
	if v := argoVerdict(t, rep, "/rules/0"); v.Kind != model.Reverted {
		t.Errorf("/rules/0: %s (%s), want reverted", v.Kind, v.Reason)
	}
}

// TestClientSideSyncKeepsLastApplied (issue 32, A23; differential seed
// 54139): an IngressClass of a ServerSideDiff Application with label
// tracking, synced client-side, then applied server-side as
// argocd-controller with another parameters.name (kubectl's migration
// moved the client-side sync's fields, last-applied-configuration
// included, into argocd-controller's Apply entry). The dry-run of Git's
// manifest prunes the annotation, so Argo CD's diff shows
// /metadata/annotations; self-heal's client-side sync writes the
// annotation again with the manifest it applies, the same as live's
// (Argo CD v3.2.11: self-heal changed only /spec/parameters/name).
func TestClientSideSyncKeepsLastApplied(t *testing.T) {
	const live = `
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata:
  name: nginx
  labels: {app.kubernetes.io/component: controller, app.kubernetes.io/instance: app}
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: |
      {"apiVersion":"networking.k8s.io/v1","kind":"IngressClass","metadata":{"annotations":{},"labels":{"app.kubernetes.io/component":"controller","app.kubernetes.io/instance":"app"},"name":"nginx"},"spec":{"controller":"k8s.io/ingress-nginx","parameters":{"apiGroup":"k8s.example.com","kind":"IngressParameters","name":"external-lb"}}}
  managedFields:
  - manager: argocd-controller
    operation: Apply
    apiVersion: networking.k8s.io/v1
    fieldsType: FieldsV1
    fieldsV1:
      f:metadata:
        f:annotations: {.: {}, f:kubectl.kubernetes.io/last-applied-configuration: {}}
        f:labels: {.: {}, f:app.kubernetes.io/component: {}, f:app.kubernetes.io/instance: {}}
      f:spec:
        f:controller: {}
        f:parameters: {.: {}, f:apiGroup: {}, f:kind: {}, f:name: {}, f:scope: {}}
spec:
  controller: k8s.io/ingress-nginx
  parameters: {apiGroup: k8s.example.com, kind: IngressParameters, name: internal-lb, scope: Cluster}
`
	const git = `
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata:
  name: nginx
  labels: {app.kubernetes.io/component: controller}
spec:
  controller: k8s.io/ingress-nginx
  parameters: {apiGroup: k8s.example.com, kind: IngressParameters, name: external-lb}
`
	const cm = `
apiVersion: v1
kind: ConfigMap
metadata: {name: argocd-cm, namespace: argocd}
data: {application.resourceTrackingMethod: label}
`
	rep := explainSSDWith(t, cm, live, git, "spec:\n", `spec:
  syncPolicy: {automated: {selfHeal: true}, syncOptions: [RespectIgnoreDifferences=true]}
`)
	if v := argoVerdict(t, rep, "/metadata/annotations"); v.Kind != model.Reported {
		t.Errorf("/metadata/annotations: %s (%s), want reported (the sync writes the same last-applied-configuration)", v.Kind, v.Reason)
	}

	// Inferred mode (no -f): the target is last-applied-configuration
	// itself, whose sync writes the same annotation (seed 54139 inferred,
	// session 15: was reverted).
	parser, err := parityParser()
	if err != nil {
		t.Fatal(err)
	}
	app := strings.Replace(ssdApp, "spec:\n", `spec:
  syncPolicy: {automated: {selfHeal: true}, syncOptions: [RespectIgnoreDifferences=true]}
`, 1)
	a, err := New(Options{Inputs: []Input{{Object: objectOf(t, app)}, {Object: objectOf(t, cm)}}, GVKParser: parser})
	if err != nil {
		t.Fatal(err)
	}
	inferred, err := drift.Explain(context.Background(), drift.Request{Live: objectOf(t, live), Engine: string(Engine), Adapters: []model.Adapter{a}})
	if err != nil {
		t.Fatal(err)
	}
	if v := argoVerdict(t, inferred, "/metadata/annotations"); v.Kind != model.Reported {
		t.Errorf("inferred: /metadata/annotations: %s (%s), want reported", v.Kind, v.Reason)
	}
	if v := argoVerdict(t, rep, "/spec/parameters/name"); v.Kind != model.Reverted {
		t.Errorf("/spec/parameters/name: %s (%s), want reverted", v.Kind, v.Reason)
	}

	// Git changed since the last sync: the annotation the sync writes
	// differs from live's, and the sync changes it.
	rep = explainSSDWith(t, cm, live, strings.Replace(git, "component: controller", "component: edge", 1), "spec:\n", `spec:
  syncPolicy: {automated: {selfHeal: true}}
`)
	if v := argoVerdict(t, rep, "/metadata/annotations"); v.Kind != model.Reverted {
		t.Errorf("Git changed: /metadata/annotations: %s (%s), want reverted", v.Kind, v.Reason)
	}
}

// A NetworkPolicy a client-side sync created from Git's manifest, which
// has no labels; then a person's kubectl apply of it with a label audited
// (last-applied-configuration is now the person's, without the tracking
// annotation, which its 3-way patch deleted), then kubectl label hotfix.
// Differential seed 60988 left it so.
const netpolHandApplied = `
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: web
  namespace: ns
  labels: {audited: "yes", hotfix: manual}
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: '{"apiVersion":"networking.k8s.io/v1","kind":"NetworkPolicy","metadata":{"annotations":{},"labels":{"audited":"yes"},"name":"web","namespace":"ns"},"spec":{"podSelector":{"matchLabels":{"app":"web"}},"policyTypes":["Ingress"]}}'
  managedFields:
  - manager: argocd-controller
    operation: Update
    apiVersion: networking.k8s.io/v1
    fieldsType: FieldsV1
    fieldsV1: {f:spec: {f:podSelector: {}, f:policyTypes: {}}}
  - manager: kubectl-client-side-apply
    operation: Update
    apiVersion: networking.k8s.io/v1
    fieldsType: FieldsV1
    fieldsV1: {f:metadata: {f:annotations: {.: {}, f:kubectl.kubernetes.io/last-applied-configuration: {}}, f:labels: {.: {}, f:audited: {}}}}
  - manager: kubectl-label
    operation: Update
    apiVersion: networking.k8s.io/v1
    fieldsType: FieldsV1
    fieldsV1: {f:metadata: {f:labels: {f:hotfix: {}}}}
spec:
  podSelector: {matchLabels: {app: web}}
  policyTypes: [Ingress]
`

// TestSyncDeletesTheMapLastAppliedLists (differential seeds 60988,
// 60459, Argo CD v3.2.11): the object is OutOfSync (its tracking
// annotation is gone); self-heal's 3-way patch deletes the labels map the
// person's last-applied-configuration lists and Git leaves out, so
// hotfix, which no last-applied-configuration lists, goes with it.
func TestSyncDeletesTheMapLastAppliedLists(t *testing.T) {
	const git = `
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: web, namespace: ns}
spec:
  podSelector: {matchLabels: {app: web}}
  policyTypes: [Ingress]
`
	app := strings.Replace(selfHealApp, "{group: batch, kind: CronJob, managedFieldsManagers: [kubectl-patch]}",
		"{group: networking.k8s.io, kind: NetworkPolicy, jsonPointers: [/metadata/labels/audited]}", 1)
	app = strings.Replace(app, "    syncOptions: [RespectIgnoreDifferences=true]\n", "", 1)
	// Argo CD's server-side diff: the dry-run apply as argocd-controller
	// leaves the person's labels (the client-side 3-way diff would show
	// /metadata/labels).
	app = strings.Replace(app, "metadata: {name: app, namespace: argocd}", "metadata: {name: app, namespace: argocd, annotations: {argocd.argoproj.io/compare-options: ServerSideDiff=true}}", 1)
	app += "status:\n  resources:\n  - {group: networking.k8s.io, version: v1, kind: NetworkPolicy, namespace: ns, name: web, status: OutOfSync}\n"
	rep := explainApp(t, app, netpolHandApplied, git)
	if st := statusOf(t, rep); !st.Drift {
		t.Fatalf("status %+v, want OutOfSync (the tracking annotation)", st)
	}
	for _, p := range []string{"/metadata/labels/hotfix", "/metadata/labels/audited"} {
		v := argoVerdict(t, rep, p)
		if v.Kind == model.Reported || v.Kind == model.Reverted || !strings.Contains(v.Reason, SyncDeletesPhrase) {
			t.Errorf("%s: %s %q, want not in Argo CD's diff, and deleted by a sync", p, v.Kind, v.Reason)
		}
	}
}
