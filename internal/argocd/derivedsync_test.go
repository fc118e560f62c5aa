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

// An HPA a client-side sync created from a manifest without labels
// (annotation tracking), with the metrics the API server defaults.
const hpaSynced = `
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
  namespace: ns
  annotations:
    argocd.argoproj.io/tracking-id: app:autoscaling/HorizontalPodAutoscaler:ns/web
    kubectl.kubernetes.io/last-applied-configuration: '{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","metadata":{"annotations":{"argocd.argoproj.io/tracking-id":"app:autoscaling/HorizontalPodAutoscaler:ns/web"},"name":"web","namespace":"ns"},"spec":{"maxReplicas":5,"minReplicas":1,"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"}}}'
  managedFields:
  - manager: argocd-controller
    operation: Update
    apiVersion: autoscaling/v2
    fieldsType: FieldsV1
    fieldsV1:
      f:metadata: {f:annotations: {.: {}, f:argocd.argoproj.io/tracking-id: {}, f:kubectl.kubernetes.io/last-applied-configuration: {}}}
      f:spec: {f:maxReplicas: {}, f:minReplicas: {}, f:scaleTargetRef: {f:apiVersion: {}, f:kind: {}, f:name: {}}}
spec:
  maxReplicas: 5
  minReplicas: 1
  metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 80}}}]
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
`

// Git's HPA now carries a label scaled, which a jq rule hides.
const hpaGitLabelled = `
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web, namespace: ns, labels: {scaled: "true"}}
spec:
  maxReplicas: 5
  minReplicas: 1
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
`

const hpaRuleApp = testAppHead + `  ignoreDifferences:
  - {group: autoscaling, kind: HorizontalPodAutoscaler, jqPathExpressions: [.metadata.labels.scaled]}
  syncPolicy:
    automated: {selfHeal: true}
    syncOptions: [RespectIgnoreDifferences=true]
`

// TestRespectedSyncAppliesTheNormalizedTarget (class A28, differential
// seed 59114, Argo CD v3.2.11): the rule removes scaled from Git's
// labels and leaves labels: {}, which live lacks, so Argo CD is OutOfSync
// on /metadata/labels. With RespectIgnoreDifferences=true the sync
// applies that normalized target (live has no scaled to put back): the
// object keeps no labels, self-heal changes nothing, the field is
// reported. Without the option the sync applies Git's manifest, adds
// scaled, and the object is Synced after it: reverted.
func TestRespectedSyncAppliesTheNormalizedTarget(t *testing.T) {
	parser, err := parityParser()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		app  string
		want model.VerdictKind
	}{
		{"respected", hpaRuleApp, model.Reported},
		{"not respected", strings.Replace(hpaRuleApp, "    syncOptions: [RespectIgnoreDifferences=true]\n", "", 1), model.Reverted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := Options{Inputs: []Input{{Object: objectOf(t, tc.app)}}, GVKParser: parser}
			rep := explainFile(t, opts, hpaSynced, hpaGitLabelled)
			if st := statusOf(t, rep); !st.Drift {
				t.Fatalf("status %+v, want OutOfSync (Argo CD's diff is /metadata/labels)", st)
			}
			v := argoVerdict(t, rep, "/metadata/labels")
			if v.Kind != tc.want {
				t.Errorf("/metadata/labels: %s %q, want %s", v.Kind, v.Reason, tc.want)
			}
			if tc.want == model.Reported && !strings.Contains(v.Reason, "normalizeTargetResources") {
				t.Errorf("reason %q does not say the sync applies the normalized target", v.Reason)
			}
		})
	}
}

// TestRespectedServerSideSyncAppliesTheNormalizedTarget: a
// ServerSideApply=true sync applies the same normalized target (argo-cd
// controller/sync.go sets it before gitops-engine's sync context), so
// the label stays out there too.
func TestRespectedServerSideSyncAppliesTheNormalizedTarget(t *testing.T) {
	parser, err := parityParser()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, options string
		want          model.VerdictKind
	}{
		{"respected", "[ServerSideApply=true, RespectIgnoreDifferences=true]", model.Reported},
		{"not respected", "[ServerSideApply=true]", model.Reverted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			app := strings.Replace(hpaRuleApp, "[RespectIgnoreDifferences=true]", tc.options, 1)
			opts := Options{Inputs: []Input{{Object: objectOf(t, app)}}, GVKParser: parser}
			rep := explainFile(t, opts, hpaSynced, hpaGitLabelled)
			if v := argoVerdict(t, rep, "/metadata/labels"); v.Kind != tc.want {
				t.Errorf("/metadata/labels: %s %q, want %s", v.Kind, v.Reason, tc.want)
			}
		})
	}
}

// A ClusterRoleBinding a client-side sync created (label tracking), then
// re-applied by hand with a label team (kubectl apply: the
// last-applied-configuration is now the person's, and the patch deleted
// the instance label the manifest lacked), as differential seed 60824 left
// it.
const bindingHandApplied = `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: view-monitoring
  labels: {team: sre}
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: '{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding","metadata":{"annotations":{},"labels":{"team":"sre"},"name":"view-monitoring"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"view"},"subjects":[{"kind":"ServiceAccount","name":"monitoring","namespace":"ns"}]}'
  managedFields:
  - manager: argocd-controller
    operation: Update
    apiVersion: rbac.authorization.k8s.io/v1
    fieldsType: FieldsV1
    fieldsV1: {f:roleRef: {}, f:subjects: {}}
  - manager: kubectl-client-side-apply
    operation: Update
    apiVersion: rbac.authorization.k8s.io/v1
    fieldsType: FieldsV1
    fieldsV1: {f:metadata: {f:annotations: {.: {}, f:kubectl.kubernetes.io/last-applied-configuration: {}}, f:labels: {.: {}, f:team: {}}}}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: view}
subjects: [{kind: ServiceAccount, name: monitoring, namespace: ns}]
`

// Git adds the annotation ticket, which a jq rule hides.
const bindingGitTicket = `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: view-monitoring
  annotations: {ticket: OPS-7}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: view}
subjects: [{kind: ServiceAccount, name: monitoring, namespace: ns}]
`

// TestRulesHideEveryMemberGitSets (differential seed 60824, Argo CD
// v3.2.11): the annotations map Git sets holds only ticket, which the
// rule removes; Argo CD's diff does not show the map, but the object is
// OutOfSync for its instance label, and self-heal applied Git's manifest,
// ticket with it. The map is the rule's doing: ignored, and re-applied by
// a sync (without RespectIgnoreDifferences=true).
func TestRulesHideEveryMemberGitSets(t *testing.T) {
	parser, err := parityParser()
	if err != nil {
		t.Fatal(err)
	}
	const cm = `
apiVersion: v1
kind: ConfigMap
metadata: {name: argocd-cm, namespace: argocd}
data: {application.resourceTrackingMethod: label}
`
	app := strings.NewReplacer("group: autoscaling, kind: HorizontalPodAutoscaler, jqPathExpressions: [.metadata.labels.scaled]",
		"group: rbac.authorization.k8s.io, kind: ClusterRoleBinding, jqPathExpressions: [.metadata.annotations.ticket]",
		"    syncOptions: [RespectIgnoreDifferences=true]\n", "").Replace(hpaRuleApp)
	// The person's apply deleted the instance label: Argo CD finds the
	// object in the Application's status.resources.
	app += "status:\n  resources:\n  - {group: rbac.authorization.k8s.io, version: v1, kind: ClusterRoleBinding, name: view-monitoring, status: OutOfSync}\n"
	opts := Options{Inputs: []Input{{Object: objectOf(t, app)}, {Object: objectOf(t, cm)}}, GVKParser: parser}
	rep := explainFile(t, opts, bindingHandApplied, bindingGitTicket)
	if st := statusOf(t, rep); !st.Drift {
		t.Fatalf("status %+v, want OutOfSync (the instance label)", st)
	}
	v := argoVerdict(t, rep, "/metadata/annotations")
	if v.Kind != model.Ignored || v.Rule == nil || !strings.Contains(v.Reason, SyncReappliesPhrase) {
		t.Errorf("/metadata/annotations: %s %q (rule %v), want ignored by the rule, and re-applied by a sync", v.Kind, v.Reason, v.Rule)
	}
}

// TestRespectedSyncWritesStringData (differential seed 62233, Argo CD
// v3.2.11): Git's Secret sets password as stringData; live has only the
// token a rule hides. With RespectIgnoreDifferences=true the sync applies
// the normalized target, which keeps Git's stringData, and the API server
// stores it as data.password: self-heal added it. Reverted, not reported.
func TestRespectedSyncWritesStringData(t *testing.T) {
	const live = `
apiVersion: v1
kind: Secret
metadata:
  name: web
  namespace: ns
  annotations: {argocd.argoproj.io/tracking-id: "app:/Secret:ns/web"}
  managedFields:
  - manager: kubectl-patch
    operation: Update
    apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1:
      f:data: {.: {}, f:token: {}}
data: {token: dG9rZW4tbGl2ZQ==}
type: Opaque
`
	app := testAppHead + `  ignoreDifferences:
  - {kind: Secret, jqPathExpressions: [.data.token]}
  syncPolicy:
    automated: {selfHeal: true}
    syncOptions: [RespectIgnoreDifferences=true]
`
	rep := explainApp(t, app, live, `
apiVersion: v1
kind: Secret
metadata: {name: web, namespace: ns}
data: {token: dG9rZW4tZ2l0}
stringData: {password: s3cr3t-git}
type: Opaque
`)
	if st := statusOf(t, rep); !st.Drift {
		t.Fatalf("status %+v, want OutOfSync (data.password)", st)
	}
	if v := argoVerdict(t, rep, "/data/password"); v.Kind != model.Reverted {
		t.Errorf("/data/password: %s (%s), want reverted (the sync stores stringData as data)", v.Kind, v.Reason)
	}
}
