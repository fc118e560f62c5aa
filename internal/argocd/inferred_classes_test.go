package argocd

import (
	"context"
	"strings"
	"testing"

	"github.com/kubectl-drift/kubectl-drift/internal/drift"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// TestInferredClasses: the inferred classes I1-I4 of docs/verdicts.md
// (session 13) and I5 (session 14: argo-inf2), each on the live object's shape as Argo CD v3.2.11 left it
// in the differential seed named, judged without a desired state as
// explain without -f and scan do. want is Argo CD's own answer in that
// seed, or unknown where it depends on Git, which the object no longer
// records; absent are fields the tool must not list; exit is the exit code.
// labelTrackingCM is an argocd-cm that tracks by the instance label.
const labelTrackingCM = `apiVersion: v1
kind: ConfigMap
metadata: {name: argocd-cm, namespace: argocd}
data: {application.resourceTrackingMethod: label}
`

// annotationLabelCM is an argocd-cm that tracks by annotation and label.
const annotationLabelCM = `apiVersion: v1
kind: ConfigMap
metadata: {name: argocd-cm, namespace: argocd}
data: {application.resourceTrackingMethod: annotation+label}
`

// ssaHealApp syncs with ServerSideApply=true and selfHeal.
const ssaHealApp = `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: dx, namespace: argocd}
spec:
  project: default
  source: {repoURL: "file:///repo", path: apps/dx, targetRevision: HEAD}
  destination: {server: "https://kubernetes.default.svc", namespace: dx}
  syncPolicy:
    automated: {selfHeal: true}
    syncOptions: [ServerSideApply=true]
`

// labelledRoleBinding is differential seed 57046's RoleBinding (I9): a
// label kubectl patch wrote; each case sets its last-applied-configuration
// (LAST_APPLIED).
const labelledRoleBinding = `apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: web
  namespace: dx
  annotations:
    argocd.argoproj.io/tracking-id: "dx:rbac.authorization.k8s.io/RoleBinding:dx/web"
    kubectl.kubernetes.io/last-applied-configuration: 'LAST_APPLIED'
  labels: {binding: extra}
  managedFields:
  - {manager: argocd-controller, operation: Update, apiVersion: rbac.authorization.k8s.io/v1, fieldsType: FieldsV1, fieldsV1: {"f:metadata": {"f:annotations": {".": {}, "f:argocd.argoproj.io/tracking-id": {}}}, "f:roleRef": {}, "f:subjects": {}}}
  - {manager: kubectl-patch, operation: Update, apiVersion: rbac.authorization.k8s.io/v1, fieldsType: FieldsV1, fieldsV1: {"f:metadata": {"f:labels": {".": {}, "f:binding": {}}}}}
  - {manager: kubectl-client-side-apply, operation: Update, apiVersion: rbac.authorization.k8s.io/v1, fieldsType: FieldsV1, fieldsV1: {"f:metadata": {"f:annotations": {"f:kubectl.kubernetes.io/last-applied-configuration": {}}}}}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: reader}
subjects: [{kind: ServiceAccount, name: web, namespace: dx}]
`

// editedServiceAccount is differential seed 54026's ServiceAccount (I6):
// Git's only annotation changed by kubectl edit, which patched
// last-applied-configuration too.
const editedServiceAccount = `apiVersion: v1
kind: ServiceAccount
metadata:
  name: web
  namespace: dx
  labels: {app.kubernetes.io/instance: dx}
  annotations:
    eks.amazonaws.com/role-arn: arn:aws:iam::1:role/admin
    kubectl.kubernetes.io/last-applied-configuration: '{"apiVersion":"v1","automountServiceAccountToken":false,"kind":"ServiceAccount","metadata":{"annotations":{"eks.amazonaws.com/role-arn":"arn:aws:iam::1:role/admin"},"labels":{"app.kubernetes.io/instance":"dx"},"name":"web","namespace":"dx"}}'
  managedFields:
  - {manager: argocd-controller, operation: Update, apiVersion: v1, fieldsType: FieldsV1, fieldsV1: {"f:automountServiceAccountToken": {}, "f:metadata": {"f:annotations": {}, "f:labels": {".": {}, "f:app.kubernetes.io/instance": {}}}}}
  - {manager: kubectl-edit, operation: Update, apiVersion: v1, fieldsType: FieldsV1, fieldsV1: {"f:metadata": {"f:annotations": {"f:eks.amazonaws.com/role-arn": {}, "f:kubectl.kubernetes.io/last-applied-configuration": {}}}}}
automountServiceAccountToken: false
`

func TestInferredClasses(t *testing.T) {
	const app = `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: dx, namespace: argocd}
spec:
  project: default
  source: {repoURL: "file:///repo", path: apps/dx, targetRevision: HEAD}
  destination: {server: "https://kubernetes.default.svc", namespace: dx}
`
	cases := []struct {
		name, app, live string
		// cm, when set, is an argocd-cm beside the Application.
		cm     string
		want   map[string]model.VerdictKind
		absent []string
		exit   int
		// status, when set, is the object's Argo CD status the report
		// must give (Synced, OutOfSync, Unknown).
		status string
	}{{
		// I1, I3 (seed 50207): kubectl auth reconcile wrote the Role as
		// "argocd" (no last-applied-configuration); a person labelled it.
		// Argo CD: Synced, no diff.
		name: "rbac-auth-reconcile", app: app, live: `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: reader
  namespace: dx
  annotations: {argocd.argoproj.io/tracking-id: "dx:rbac.authorization.k8s.io/Role:dx/reader"}
  labels: {app: reader, app.kubernetes.io/part-of: shop}
  managedFields:
  - {manager: argocd, operation: Update, apiVersion: rbac.authorization.k8s.io/v1, fieldsType: FieldsV1, fieldsV1: {"f:metadata": {"f:annotations": {".": {}, "f:argocd.argoproj.io/tracking-id": {}}, "f:labels": {".": {}, "f:app": {}}}, "f:rules": {}}}
  - {manager: kubectl-label, operation: Update, apiVersion: rbac.authorization.k8s.io/v1, fieldsType: FieldsV1, fieldsV1: {"f:metadata": {"f:labels": {"f:app.kubernetes.io/part-of": {}}}}}
rules:
- {apiGroups: [""], resources: [configmaps], verbs: [get]}
`,
		// A label a person added (Argo CD leaves it alone) or changed
		// (seed 50027: in Argo CD's diff): Git decides.
		want:   map[string]model.VerdictKind{"/metadata/labels/app.kubernetes.io~1part-of": model.Unknown},
		absent: []string{"/rules", "/metadata/labels/app", "/metadata/annotations/argocd.argoproj.io~1tracking-id"},
		exit:   1,
	}, {
		// I4 (seed 50023): ingressClassName patched, then a person's
		// kubectl apply of Git's manifest with a label set it back (Argo
		// CD: not in its diff) and added the label (in its diff).
		name: "foreign-last-applied", app: app, live: `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
  namespace: dx
  annotations:
    argocd.argoproj.io/tracking-id: "dx:networking.k8s.io/Ingress:dx/web"
    kubectl.kubernetes.io/last-applied-configuration: '{"apiVersion":"networking.k8s.io/v1","kind":"Ingress","metadata":{"labels":{"exposure":"public"},"name":"web","namespace":"dx"},"spec":{"ingressClassName":"nginx"}}'
  labels: {exposure: public}
  managedFields:
  - {manager: argocd-controller, operation: Update, apiVersion: networking.k8s.io/v1, fieldsType: FieldsV1, fieldsV1: {"f:metadata": {"f:annotations": {".": {}, "f:argocd.argoproj.io/tracking-id": {}}}}}
  - {manager: kubectl-client-side-apply, operation: Update, apiVersion: networking.k8s.io/v1, fieldsType: FieldsV1, fieldsV1: {"f:metadata": {"f:annotations": {"f:kubectl.kubernetes.io/last-applied-configuration": {}}, "f:labels": {".": {}, "f:exposure": {}}}, "f:spec": {"f:ingressClassName": {}}}}
spec: {ingressClassName: nginx}
`,
		want: map[string]model.VerdictKind{"/spec/ingressClassName": model.Unknown, "/metadata/labels/exposure": model.Unknown},
		exit: 1,
	}, {
		// I4, edited (seed 50370): a server-side Application; Argo CD's
		// last-applied (with its tracking annotation) patched by kubectl
		// edit of Git's annotation (in Argo CD's diff); ingressClassName,
		// which Git lacks, patched in (not in its diff).
		name: "argo-last-applied-edited", app: app + "  syncPolicy: {syncOptions: [ServerSideApply=true]}\n", live: `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
  namespace: dx
  annotations:
    argocd.argoproj.io/tracking-id: "dx:networking.k8s.io/Ingress:dx/web"
    cert-manager.io/cluster-issuer: letsencrypt-staging
    kubectl.kubernetes.io/last-applied-configuration: '{"apiVersion":"networking.k8s.io/v1","kind":"Ingress","metadata":{"annotations":{"argocd.argoproj.io/tracking-id":"dx:networking.k8s.io/Ingress:dx/web","cert-manager.io/cluster-issuer":"letsencrypt-staging"},"name":"web","namespace":"dx"},"spec":{"rules":[{"host":"api.example.com"}]}}'
  managedFields:
  - {manager: argocd-controller, operation: Apply, apiVersion: networking.k8s.io/v1, fieldsType: FieldsV1, fieldsV1: {"f:metadata": {"f:annotations": {"f:argocd.argoproj.io/tracking-id": {}}}, "f:spec": {"f:rules": {}}}}
  - {manager: kubectl-patch, operation: Update, apiVersion: networking.k8s.io/v1, fieldsType: FieldsV1, fieldsV1: {"f:spec": {"f:ingressClassName": {}}}}
  - {manager: kubectl-edit, operation: Update, apiVersion: networking.k8s.io/v1, fieldsType: FieldsV1, fieldsV1: {"f:metadata": {"f:annotations": {"f:cert-manager.io/cluster-issuer": {}, "f:kubectl.kubernetes.io/last-applied-configuration": {}}}}}
spec:
  ingressClassName: nginx
  rules: [{host: api.example.com}]
`,
		want: map[string]model.VerdictKind{"/spec/ingressClassName": model.LeftAlone, "/metadata/annotations/cert-manager.io~1cluster-issuer": model.Reported},
		exit: 1,
	}, {
		// I2 (seed 50159): a label a jq rule hides, after a person's
		// kubectl apply; Argo CD records the object OutOfSync, and
		// self-heal's sync changed the label.
		name: "ignored-on-outofsync", app: app + `  ignoreDifferences:
  - {group: "", kind: ConfigMap, jqPathExpressions: [.metadata.labels.app]}
status:
  resources:
  - {version: v1, kind: ConfigMap, namespace: dx, name: cfg, status: OutOfSync}
`, live: `apiVersion: v1
kind: ConfigMap
metadata:
  name: cfg
  namespace: dx
  annotations:
    argocd.argoproj.io/tracking-id: "dx:/ConfigMap:dx/cfg"
    kubectl.kubernetes.io/last-applied-configuration: '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"labels":{"app":"edge"},"name":"cfg","namespace":"dx"},"data":{"a":"1"}}'
  labels: {app: edge}
  managedFields:
  - {manager: argocd-controller, operation: Update, apiVersion: v1, fieldsType: FieldsV1, fieldsV1: {"f:data": {".": {}, "f:a": {}}, "f:metadata": {"f:annotations": {".": {}, "f:argocd.argoproj.io/tracking-id": {}}}}}
  - {manager: kubectl-client-side-apply, operation: Update, apiVersion: v1, fieldsType: FieldsV1, fieldsV1: {"f:metadata": {"f:annotations": {"f:kubectl.kubernetes.io/last-applied-configuration": {}}, "f:labels": {".": {}, "f:app": {}}}}}
data: {a: "1"}
`,
		want: map[string]model.VerdictKind{"/metadata/labels/app": model.Unknown},
		exit: 1,
	}, {
		// A resource Argo CD synced server-side by its own sync-options
		// annotation in Git (the Application has no ServerSideApply): no
		// last-applied-configuration, as on an RBAC object, but its
		// argocd-controller Apply entry says the structured-merge diff
		// decides, which leaves a label only another manager set (the
		// scan fixture's cfg-labelled, internal/scan/testdata/capture.sh).
		name: "server-side-by-annotation", app: app, live: `apiVersion: v1
kind: ConfigMap
metadata:
  name: cfg
  namespace: dx
  annotations: {argocd.argoproj.io/tracking-id: "dx:/ConfigMap:dx/cfg"}
  labels: {team: oncall}
  managedFields:
  - {manager: argocd-controller, operation: Apply, apiVersion: v1, fieldsType: FieldsV1, fieldsV1: {"f:data": {"f:a": {}}, "f:metadata": {"f:annotations": {"f:argocd.argoproj.io/tracking-id": {}}}}}
  - {manager: kubectl-label, operation: Update, apiVersion: v1, fieldsType: FieldsV1, fieldsV1: {"f:metadata": {"f:labels": {".": {}, "f:team": {}}}}}
data: {a: "1"}
`,
		// Was left-alone (right here: Git lacks the label); class I5 (seeds
		// 52019, 52060, 52079) showed the same managedFields when another
		// manager changed a label Git sets: Git decides.
		want: map[string]model.VerdictKind{"/metadata/labels/team": model.Unknown},
		exit: 1,
		// Nothing records Argo CD's comparison (no status.resources): a
		// computed Synced would claim what the unknown field may deny.
		status: "Unknown",
	}, {
		// I5 (seed 52019): a server-side Application; kubectl auth
		// reconcile wrote the ClusterRole as "argocd" (Update, no
		// last-applied-configuration); helm's forced server-side apply
		// changed Git's label app.kubernetes.io/name and took it from
		// "argocd". Argo CD: OutOfSync on the label, self-heal reverted it.
		name: "ssa-rbac-label-taken", app: app + `  syncPolicy: {automated: {selfHeal: true}, syncOptions: [ServerSideApply=true]}
status:
  resources:
  - {group: rbac.authorization.k8s.io, version: v1, kind: ClusterRole, name: dx-clusterrole, status: OutOfSync}
`, live: `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: dx-clusterrole
  labels: {app.kubernetes.io/instance: dx, app.kubernetes.io/name: metrics-admin}
  managedFields:
  - {manager: helm, operation: Apply, apiVersion: rbac.authorization.k8s.io/v1, fieldsType: FieldsV1, fieldsV1: {"f:metadata": {"f:labels": {"f:app.kubernetes.io/name": {}}}}}
  - {manager: argocd, operation: Update, apiVersion: rbac.authorization.k8s.io/v1, fieldsType: FieldsV1, fieldsV1: {"f:metadata": {"f:labels": {".": {}, "f:app.kubernetes.io/instance": {}}}, "f:rules": {}}}
rules:
- {apiGroups: [metrics.k8s.io], resources: [pods, nodes], verbs: [get, list]}
`,
		want:   map[string]model.VerdictKind{"/metadata/labels/app.kubernetes.io~1name": model.Unknown},
		exit:   1,
		status: "OutOfSync",
	}, {
		// I5 (seed 52060): a server-side Application; a person's client-
		// side apply, a server-side apply of platform-operator and a patch
		// left no annotation, and publishNotReadyAddresses, which Git lacks,
		// platform-operator's. Argo CD: not in its diff (the tracking
		// annotation is).
		name: "ssa-field-another-manager", app: app + `  syncPolicy: {syncOptions: [ServerSideApply=true]}
status:
  resources:
  - {version: v1, kind: Service, namespace: dx, name: web, status: OutOfSync}
`, live: `apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: dx
  managedFields:
  - {manager: platform-operator, operation: Apply, apiVersion: v1, fieldsType: FieldsV1, fieldsV1: {"f:spec": {"f:publishNotReadyAddresses": {}}}}
  - {manager: argocd-controller, operation: Update, apiVersion: v1, fieldsType: FieldsV1, fieldsV1: {"f:metadata": {"f:annotations": {}}, "f:spec": {"f:clusterIP": {}, "f:internalTrafficPolicy": {}, "f:ports": {}, "f:selector": {}, "f:sessionAffinity": {}, "f:type": {}}}}
spec:
  clusterIP: None
  clusterIPs: [None]
  internalTrafficPolicy: Cluster
  ipFamilies: [IPv4]
  ipFamilyPolicy: SingleStack
  ports: [{port: 5432, protocol: TCP, targetPort: 5432}]
  publishNotReadyAddresses: true
  selector: {app: db}
  sessionAffinity: None
  type: ClusterIP
`,
		want: map[string]model.VerdictKind{"/spec/publishNotReadyAddresses": model.Unknown},
		exit: 1,
	}, {
		// I5 (seed 52079): a client-side Application; a server-side apply
		// as argocd-controller of one annotation dropped the rest of Argo
		// CD's fields and its last-applied-configuration, and a JSON patch
		// changed Git's label app.kubernetes.io/name. Argo CD's 2-way diff
		// shows the label.
		name: "no-last-applied-label-patched", app: app + `  syncPolicy: {automated: {selfHeal: true}}
status:
  resources:
  - {group: admissionregistration.k8s.io, version: v1, kind: MutatingWebhookConfiguration, name: dx-mutatingwebhook, status: OutOfSync}
`, live: `apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: dx-mutatingwebhook
  annotations: {cert-manager.io/inject-ca-from: injector/serving-cert}
  labels: {app.kubernetes.io/name: injector-v2}
  managedFields:
  - {manager: argocd-controller, operation: Apply, apiVersion: admissionregistration.k8s.io/v1, fieldsType: FieldsV1, fieldsV1: {"f:metadata": {"f:annotations": {"f:cert-manager.io/inject-ca-from": {}}}}}
  - {manager: kubectl-patch, operation: Update, apiVersion: admissionregistration.k8s.io/v1, fieldsType: FieldsV1, fieldsV1: {"f:metadata": {"f:labels": {"f:app.kubernetes.io/name": {}}}}}
`,
		want: map[string]model.VerdictKind{"/metadata/labels/app.kubernetes.io~1name": model.Unknown},
		exit: 1,
	}, {
		// I6 (seed 54026): label tracking, a rule trusting kubectl-edit,
		// a kubectl edit of Git's only annotation (which patched
		// last-applied-configuration too). Argo CD's normalization takes
		// the annotation out of live and Git; Git's manifest is left
		// without annotations and the 3-way patch from last-applied
		// deletes them all: its diff shows /metadata/annotations.
		name: "managers-rule-empties-annotations", cm: labelTrackingCM, app: app + `  ignoreDifferences:
  - {kind: ServiceAccount, managedFieldsManagers: [kubectl-edit]}
`, live: editedServiceAccount,
		want: map[string]model.VerdictKind{"/metadata/annotations/eks.amazonaws.com~1role-arn": model.Unknown},
		exit: 1,
	}, {
		// I10 (seed 58280, a LimitRange's labels): the same, with an
		// annotation kubectl annotate added beside it, which
		// last-applied-configuration does not list: when Argo CD shows
		// the whole map, it shows this one with it.
		name: "managers-rule-empties-annotations-beside-another", cm: labelTrackingCM, app: app + `  ignoreDifferences:
  - {kind: ServiceAccount, managedFieldsManagers: [kubectl-edit]}
`, live: strings.Replace(strings.Replace(editedServiceAccount,
			"    eks.amazonaws.com/role-arn: arn:aws:iam::1:role/admin\n", "    eks.amazonaws.com/role-arn: arn:aws:iam::1:role/admin\n    debug: \"on\"\n", 1),
			"  managedFields:\n", "  managedFields:\n  - {manager: kubectl-annotate, operation: Update, apiVersion: v1, fieldsType: FieldsV1, fieldsV1: {\"f:metadata\": {\"f:annotations\": {\"f:debug\": {}}}}}\n", 1),
		want: map[string]model.VerdictKind{"/metadata/annotations/eks.amazonaws.com~1role-arn": model.Unknown, "/metadata/annotations/debug": model.Unknown},
		exit: 1,
	}, {
		// I6's other side: Git has another annotation that no trusted
		// manager owns, so Git's manifest keeps the map and the rule
		// hides the edited one (ignored, as before).
		name: "managers-rule-keeps-annotations", cm: labelTrackingCM, app: app + `  ignoreDifferences:
  - {kind: ServiceAccount, managedFieldsManagers: [kubectl-edit]}
`, live: `apiVersion: v1
kind: ServiceAccount
metadata:
  name: web
  namespace: dx
  labels: {app.kubernetes.io/instance: dx}
  annotations:
    eks.amazonaws.com/role-arn: arn:aws:iam::1:role/admin
    team: payments
    kubectl.kubernetes.io/last-applied-configuration: '{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"annotations":{"eks.amazonaws.com/role-arn":"arn:aws:iam::1:role/admin","team":"payments"},"labels":{"app.kubernetes.io/instance":"dx"},"name":"web","namespace":"dx"}}'
  managedFields:
  - {manager: argocd-controller, operation: Update, apiVersion: v1, fieldsType: FieldsV1, fieldsV1: {"f:metadata": {"f:annotations": {"f:team": {}}, "f:labels": {".": {}, "f:app.kubernetes.io/instance": {}}}}}
  - {manager: kubectl-edit, operation: Update, apiVersion: v1, fieldsType: FieldsV1, fieldsV1: {"f:metadata": {"f:annotations": {"f:eks.amazonaws.com/role-arn": {}, "f:kubectl.kubernetes.io/last-applied-configuration": {}}}}}
`,
		want: map[string]model.VerdictKind{"/metadata/annotations/eks.amazonaws.com~1role-arn": model.Ignored},
		exit: 0,
	}, {
		// I9 (seed 57046): a person's client-side apply of a RoleBinding
		// label that a jsonPointer rule hides, its last-applied-
		// configuration listing the label. Argo CD normalizes live's
		// labels to {}; its predicted state (the 3-way patch deletes the
		// label Git lacks) has none: its diff shows /metadata/labels.
		// Had Git set the label, the rule would hide it: unknown.
		name: "pointer-rule-empties-labels", app: app + `  ignoreDifferences:
  - {group: rbac.authorization.k8s.io, kind: RoleBinding, jsonPointers: [/metadata/labels/binding]}
`, live: strings.Replace(labelledRoleBinding, "LAST_APPLIED", `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"annotations":{},"labels":{"binding":"extra"},"name":"web","namespace":"dx"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"reader"},"subjects":[{"kind":"ServiceAccount","name":"web","namespace":"dx"}]}`, 1),
		want: map[string]model.VerdictKind{"/metadata/labels/binding": model.Unknown},
		exit: 1,
	}, {
		// I12 (seed 65680): a Secret a kubectl apply --server-side as
		// argocd-controller stripped of Argo CD's last sync (its
		// migration pruned last-applied-configuration, the instance
		// label and Git's password); kubectl patch changed token under
		// a managers rule trusting kubectl-patch. Argo CD's normalized
		// live has no data and its diff showed /data (Git's password):
		// whether it shows the map depends on Git, which the object
		// does not record.
		name: "managers-rule-empties-data-no-last-sync", cm: labelTrackingCM, app: strings.Replace(ssaHealApp, "[ServerSideApply=true]", "[ServerSideApply=true, RespectIgnoreDifferences=true]", 1) + `  ignoreDifferences:
  - {kind: Secret, managedFieldsManagers: [kubectl-patch]}
status:
  resources:
  - {version: v1, kind: Secret, namespace: dx, name: web, status: OutOfSync}
`, live: `apiVersion: v1
kind: Secret
metadata:
  name: web
  namespace: dx
  annotations: {vault: synced}
  labels: {rotated: "yes"}
  managedFields:
  - {manager: argocd-controller, operation: Apply, apiVersion: v1, fieldsType: FieldsV1, fieldsV1: {"f:metadata": {"f:annotations": {"f:vault": {}}}}}
  - {manager: kubectl-patch, operation: Update, apiVersion: v1, fieldsType: FieldsV1, fieldsV1: {"f:data": {"f:token": {}}, "f:metadata": {"f:labels": {"f:rotated": {}}}}}
type: Opaque
data: {token: dG9rZW4tbGl2ZQ==}
`,
		want: map[string]model.VerdictKind{"/data/token": model.Unknown},
		exit: 1,
	}, {
		// I9's other side: last-applied-configuration (Argo CD's sync)
		// does not list the label, so the patch keeps it and both sides
		// normalize to {}: ignored.
		name: "pointer-rule-keeps-labels", app: app + `  ignoreDifferences:
  - {group: rbac.authorization.k8s.io, kind: RoleBinding, jsonPointers: [/metadata/labels/binding]}
`, live: strings.Replace(labelledRoleBinding, "LAST_APPLIED", `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"annotations":{"argocd.argoproj.io/tracking-id":"dx:rbac.authorization.k8s.io/RoleBinding:dx/web"},"name":"web","namespace":"dx"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"reader"},"subjects":[{"kind":"ServiceAccount","name":"web","namespace":"dx"}]}`, 1),
		want: map[string]model.VerdictKind{"/metadata/labels/binding": model.Ignored},
		exit: 0,
	}, {
		// I7 (seed 55285): two kubectl apply --server-side of a label by
		// another manager: kubectl's migration handed every field of
		// argocd-controller's Update entry, last-applied-configuration
		// with it, to that manager's Apply entry; the annotation is
		// still Argo CD's last sync. Argo CD: Synced, no diff (before:
		// Git's fields reported, as if a person had edited them).
		name: "ssa-migrated-last-applied", app: app, live: `apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata:
  name: edge
  annotations:
    argocd.argoproj.io/tracking-id: "dx:networking.k8s.io/IngressClass:dx/edge"
    kubectl.kubernetes.io/last-applied-configuration: '{"apiVersion":"networking.k8s.io/v1","kind":"IngressClass","metadata":{"annotations":{"argocd.argoproj.io/tracking-id":"dx:networking.k8s.io/IngressClass:dx/edge"},"labels":{"app.kubernetes.io/component":"controller"},"name":"edge"},"spec":{"controller":"k8s.io/ingress-nginx","parameters":{"apiGroup":"k8s.example.com","kind":"IngressParameters","name":"external-lb"}}}'
  labels: {app.kubernetes.io/component: controller, edge: "true", hotfix: manual}
  managedFields:
  - {manager: platform-operator, operation: Apply, apiVersion: networking.k8s.io/v1, fieldsType: FieldsV1, fieldsV1: {"f:metadata": {"f:annotations": {"f:kubectl.kubernetes.io/last-applied-configuration": {}}, "f:labels": {"f:app.kubernetes.io/component": {}, "f:edge": {}}}, "f:spec": {"f:controller": {}, "f:parameters": {"f:apiGroup": {}, "f:kind": {}, "f:name": {}, "f:scope": {}}}}}
  - {manager: kubectl-label, operation: Update, apiVersion: networking.k8s.io/v1, fieldsType: FieldsV1, fieldsV1: {"f:metadata": {"f:labels": {"f:hotfix": {}}}}}
  - {manager: argocd-controller, operation: Update, apiVersion: networking.k8s.io/v1, fieldsType: FieldsV1, fieldsV1: {"f:metadata": {"f:annotations": {".": {}, "f:argocd.argoproj.io/tracking-id": {}}, "f:labels": {".": {}}}}}
spec:
  controller: k8s.io/ingress-nginx
  parameters: {apiGroup: k8s.example.com, kind: IngressParameters, name: external-lb, scope: Cluster}
`,
		want:   map[string]model.VerdictKind{"/metadata/labels/hotfix": model.LeftAlone, "/metadata/labels/edge": model.LeftAlone},
		absent: []string{"/spec/controller", "/metadata/labels/app.kubernetes.io~1component", "/metadata/annotations/argocd.argoproj.io~1tracking-id", "/spec/parameters/kind", "/spec/parameters/scope"},
		exit:   0,
		status: "Synced",
	}, {
		// I8 (session 15, seed 55212): a StatefulSet of a
		// ServerSideApply=true, selfHeal Application, untouched. Argo CD's
		// diff against its last sync shows the claim template's apiVersion
		// and kind (the API server's conversion writes them); its
		// self-heal, a server-side apply, prunes them and the server sets
		// them again: OutOfSync before and after. Reported (before:
		// reverted; serverSideSyncKeeps skipped a last-applied target).
		name: "ssa-claim-template-last-applied", cm: annotationLabelCM, app: ssaHealApp, live: `{"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"annotations": {"argocd.argoproj.io/tracking-id": "dx:apps/StatefulSet:dx/web", "kubectl.kubernetes.io/last-applied-configuration": "{\"apiVersion\":\"apps/v1\",\"kind\":\"StatefulSet\",\"metadata\":{\"annotations\":{\"argocd.argoproj.io/tracking-id\":\"dx:apps/StatefulSet:dx/web\"},\"labels\":{\"app\":\"db\",\"app.kubernetes.io/instance\":\"dx\"},\"name\":\"web\",\"namespace\":\"dx\"},\"spec\":{\"replicas\":1,\"selector\":{\"matchLabels\":{\"app\":\"db\"}},\"serviceName\":\"db\",\"template\":{\"metadata\":{\"labels\":{\"app\":\"db\"}},\"spec\":{\"containers\":[{\"image\":\"postgres:16\",\"name\":\"db\",\"volumeMounts\":[{\"mountPath\":\"/var/lib/postgresql/data\",\"name\":\"data\"}]}]}},\"volumeClaimTemplates\":[{\"metadata\":{\"name\":\"data\"},\"spec\":{\"accessModes\":[\"ReadWriteOnce\"],\"resources\":{\"requests\":{\"storage\":\"1Gi\"}}}}]}}\n"}, "labels": {"app": "db", "app.kubernetes.io/instance": "dx"}, "name": "web", "namespace": "dx", "managedFields": [{"apiVersion": "apps/v1", "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {"f:annotations": {".": {}, "f:argocd.argoproj.io/tracking-id": {}, "f:kubectl.kubernetes.io/last-applied-configuration": {}}, "f:labels": {".": {}, "f:app": {}, "f:app.kubernetes.io/instance": {}}}, "f:spec": {"f:persistentVolumeClaimRetentionPolicy": {".": {}, "f:whenDeleted": {}, "f:whenScaled": {}}, "f:podManagementPolicy": {}, "f:replicas": {}, "f:revisionHistoryLimit": {}, "f:selector": {}, "f:serviceName": {}, "f:template": {"f:metadata": {"f:labels": {".": {}, "f:app": {}}}, "f:spec": {"f:containers": {"k:{\"name\":\"db\"}": {".": {}, "f:image": {}, "f:imagePullPolicy": {}, "f:name": {}, "f:resources": {}, "f:terminationMessagePath": {}, "f:terminationMessagePolicy": {}, "f:volumeMounts": {".": {}, "k:{\"mountPath\":\"/var/lib/postgresql/data\"}": {".": {}, "f:mountPath": {}, "f:name": {}}}}}, "f:dnsPolicy": {}, "f:restartPolicy": {}, "f:schedulerName": {}, "f:securityContext": {}, "f:terminationGracePeriodSeconds": {}}}, "f:updateStrategy": {"f:rollingUpdate": {".": {}, "f:maxUnavailable": {}, "f:partition": {}}, "f:type": {}}, "f:volumeClaimTemplates": {}}}, "manager": "argocd-controller", "operation": "Update"}]}, "spec": {"persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain", "whenScaled": "Retain"}, "podManagementPolicy": "OrderedReady", "replicas": 1, "revisionHistoryLimit": 10, "selector": {"matchLabels": {"app": "db"}}, "serviceName": "db", "template": {"metadata": {"labels": {"app": "db"}}, "spec": {"containers": [{"image": "postgres:16", "imagePullPolicy": "IfNotPresent", "name": "db", "resources": {}, "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File", "volumeMounts": [{"mountPath": "/var/lib/postgresql/data", "name": "data"}]}], "dnsPolicy": "ClusterFirst", "restartPolicy": "Always", "schedulerName": "default-scheduler", "securityContext": {}, "terminationGracePeriodSeconds": 30}}, "updateStrategy": {"rollingUpdate": {"maxUnavailable": 1, "partition": 0}, "type": "RollingUpdate"}, "volumeClaimTemplates": [{"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}, "volumeMode": "Filesystem"}, "status": {"phase": "Pending"}}]}}`,
		want: map[string]model.VerdictKind{
			"/spec/volumeClaimTemplates/0/apiVersion": model.Reported,
			"/spec/volumeClaimTemplates/0/kind":       model.Reported,
		},
		exit:   1,
		status: "OutOfSync",
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			parser, err := parityParser()
			if err != nil {
				t.Fatal(err)
			}
			inputs := []Input{{Object: testutil.Object(t, c.app)}}
			if c.cm != "" {
				inputs = append(inputs, Input{Object: testutil.Object(t, c.cm)})
			}
			a, err := New(Options{Inputs: inputs, GVKParser: parser})
			if err != nil {
				t.Fatal(err)
			}
			rep, err := drift.Explain(context.Background(), drift.Request{
				Live: testutil.Object(t, c.live), Engine: string(Engine), Adapters: []model.Adapter{a}})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]*model.Verdict{}
			for _, d := range rep.Drifts {
				got[d.Path] = verdictOf(d, Engine)
			}
			for p, want := range c.want {
				if v := got[p]; v == nil || v.Kind != want {
					t.Errorf("%s: got %+v, want %s", p, v, want)
				} else if want == model.Unknown && v.Reason == "" {
					t.Errorf("%s: unknown without a reason", p)
				}
			}
			for _, p := range c.absent {
				if v, ok := got[p]; ok {
					t.Errorf("%s listed (%+v): Argo CD wrote it", p, v)
				}
			}
			for _, n := range rep.Notes {
				if n.Reason == "outofsync-in-status" && len(c.want) > 0 && strings.Contains(n.Message, "equals Argo CD's last sync") {
					// A field Git decides may be what Argo CD shows
					// (seed 52019): the object need not equal its last sync.
					t.Errorf("note says the object equals Argo CD's last sync beside fields Git decides: %s", n.Message)
				}
			}
			if c.status != "" {
				var got string
				for _, st := range rep.Status {
					if st.Engine == Engine {
						got = st.Status
					}
				}
				if got != c.status {
					t.Errorf("object status %q, want %q", got, c.status)
				}
			}
			if code := rep.ExitCode(); code != c.exit {
				t.Errorf("exit %d, want %d (fields %v)", code, c.exit, got)
			}
		})
	}
}
