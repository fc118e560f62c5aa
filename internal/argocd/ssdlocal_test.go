package argocd

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-drift/kubectl-drift/internal/drift"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// testAppHead is the head of the Applications the unit tests judge with
// (app in argocd, deploying Git's path . to namespace ns); each test's
// Application appends its rules and sync policy to the spec.
const testAppHead = `
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: app, namespace: argocd}
spec:
  destination: {server: https://kubernetes.default.svc, namespace: ns}
  source: {repoURL: https://example.test/repo.git, path: .}
`

// ssdApp is an Application with ServerSideDiff=true (and its tracking
// annotation's target), as the differential cases of issue 32 draw it.
const ssdApp = `
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: app
  namespace: argocd
  annotations:
    argocd.argoproj.io/compare-options: ServerSideDiff=true
spec:
  destination: {server: https://kubernetes.default.svc, namespace: ns}
  source: {repoURL: https://example.test/repo.git, path: .}
`

// A ConfigMap a client-side sync created (argocd-controller as an Update
// with last-applied-configuration), whose key b kubectl edit changed after.
const csaSyncedThenEdited = `
apiVersion: v1
kind: ConfigMap
metadata:
  name: cm
  namespace: ns
  annotations:
    argocd.argoproj.io/tracking-id: app:/ConfigMap:ns/cm
    kubectl.kubernetes.io/last-applied-configuration: '{"apiVersion":"v1","data":{"a":"1","b":"2"},"kind":"ConfigMap","metadata":{"annotations":{"argocd.argoproj.io/tracking-id":"app:/ConfigMap:ns/cm"},"name":"cm","namespace":"ns"}}'
  managedFields:
  - manager: argocd-controller
    operation: Update
    apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1:
      f:data: {f:a: {}}
      f:metadata:
        f:annotations:
          .: {}
          f:argocd.argoproj.io/tracking-id: {}
          f:kubectl.kubernetes.io/last-applied-configuration: {}
  - manager: kubectl-edit
    operation: Update
    apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1:
      f:data: {f:b: {}}
data: {a: "1", b: "20"}
`

// The same ConfigMap synced by server-side apply (argocd-controller as an
// Apply owns a and b), b not edited.
const ssaSynced = `
apiVersion: v1
kind: ConfigMap
metadata:
  name: cm
  namespace: ns
  annotations:
    argocd.argoproj.io/tracking-id: app:/ConfigMap:ns/cm
  managedFields:
  - manager: argocd-controller
    operation: Apply
    apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1:
      f:data: {f:a: {}, f:b: {}}
      f:metadata:
        f:annotations:
          f:argocd.argoproj.io/tracking-id: {}
data: {a: "1", b: "2"}
`

const gitWithoutB = `
apiVersion: v1
kind: ConfigMap
metadata: {name: cm, namespace: ns}
data: {a: "1"}
`

func objectOf(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	js, err := yaml.YAMLToJSON([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(js); err != nil {
		t.Fatal(err)
	}
	return u
}

// explainSSD runs explain -f (no --server-dry-run) with the ServerSideDiff
// Application.
func explainSSD(t *testing.T, live, desired string) *model.Report {
	t.Helper()
	return explainSSDWith(t, "", live, desired)
}

// explainSSDWith is explainSSD with argocd-cm (none when "") and the
// Application changed by the given replacements (old, new pairs).
func explainSSDWith(t *testing.T, cm, live, desired string, appEdits ...string) *model.Report {
	t.Helper()
	parser, err := parityParser()
	if err != nil {
		t.Fatal(err)
	}
	app := ssdApp
	for i := 0; i+1 < len(appEdits); i += 2 {
		app = strings.Replace(app, appEdits[i], appEdits[i+1], 1)
	}
	inputs := []Input{{Object: objectOf(t, app)}}
	if cm != "" {
		inputs = append(inputs, Input{Object: objectOf(t, cm)})
	}
	return explainFile(t, Options{Inputs: inputs, GVKParser: parser}, live, desired)
}

// explainApp runs explain -f with the Application app and the parity
// tests' schema.
func explainApp(t *testing.T, app, live, desired string) *model.Report {
	t.Helper()
	parser, err := parityParser()
	if err != nil {
		t.Fatal(err)
	}
	return explainFile(t, Options{Inputs: []Input{{Object: objectOf(t, app)}}, GVKParser: parser}, live, desired)
}

// explainFile runs explain -f (desired from a file) with an adapter of
// opts.
func explainFile(t *testing.T, opts Options, live, desired string) *model.Report {
	t.Helper()
	a, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := drift.Explain(context.Background(), drift.Request{Live: objectOf(t, live), Desired: objectOf(t, desired),
		Source: model.SourceFile, Engine: string(Engine), Adapters: []model.Adapter{a}})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestLocalServerSideDiff (issue 32, A3): with ServerSideDiff=true Argo CD
// compares Git's manifest applied as argocd-controller in a server-side
// dry-run (gitops-engine pkg/diff/diff.go serverSideDiff). A field Git no
// longer has is taken out only when argocd-controller applied it last
// time (server-side apply prunes an applier's own fields): after a
// client-side sync (argocd-controller an Update manager) a key Git drops
// stays, Synced (differential seeds 20008, 20055, 20074: Argo CD Synced,
// the client-side 3-way diff the tool ran without --server-dry-run said
// reverted); after a server-side sync it is removed, OutOfSync.
func TestLocalServerSideDiff(t *testing.T) {
	rep := explainSSD(t, csaSyncedThenEdited, gitWithoutB)
	if st := statusOf(t, rep); st.Drift {
		t.Errorf("client-side synced, b dropped from Git: status %+v, want Synced (notes %+v)", st, rep.Notes)
	}
	for _, d := range rep.Drifts {
		if v := verdictOf(d, Engine); v != nil && (v.Kind == model.Reported || v.Kind == model.Reverted) {
			t.Errorf("%s: %s (%s), Argo CD's server-side diff keeps it", d.Path, v.Kind, v.Reason)
		}
	}
	if !hasNoteLike(rep, "server-side-diff", "computed in memory") {
		t.Errorf("no note saying the dry-run is computed in memory: %+v", rep.Notes)
	}

	rep = explainSSD(t, ssaSynced, gitWithoutB)
	if st := statusOf(t, rep); !st.Drift {
		t.Errorf("server-side synced, b dropped from Git: status %+v, want OutOfSync", st)
	}
	if v := argoVerdict(t, rep, "/data/b"); v.Kind != model.Reported && v.Kind != model.Reverted {
		t.Errorf("/data/b: %+v, want reported or reverted (argocd-controller's apply prunes it)", v)
	}
}

func hasNoteLike(rep *model.Report, reason, text string) bool {
	for _, n := range rep.Notes {
		if n.Reason == reason && strings.Contains(n.Message, text) {
			return true
		}
	}
	return false
}

// A ConfigMap with label tracking whose client-side-sync fields kubectl
// migrated to argocd-controller's Apply entry (a kubectl apply
// --server-side --field-manager=argocd-controller of one key: k8s.io/kubectl
// pkg/cmd/apply/apply.go migrateToSSAIfNecessary moves the fields of the
// Update manager owning last-applied-configuration into the applier's).
const ssaMigrated = `
apiVersion: v1
kind: ConfigMap
metadata:
  name: cm
  namespace: ns
  labels: {app.kubernetes.io/instance: app}
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: '{"apiVersion":"v1","data":{"a":"1"},"kind":"ConfigMap","metadata":{"labels":{"app.kubernetes.io/instance":"app"},"name":"cm","namespace":"ns"}}'
  managedFields:
  - manager: argocd-controller
    operation: Apply
    apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1:
      f:data: {f:a: {}, f:b: {}}
      f:metadata:
        f:annotations:
          .: {}
          f:kubectl.kubernetes.io/last-applied-configuration: {}
        f:labels:
          .: {}
          f:app.kubernetes.io/instance: {}
data: {a: "1", b: "2"}
`

// TestLocalServerSideDiffMetadata (seed 20118, A5): the in-memory apply
// keeps argocd-controller's metadata fields (the API server strips only
// name, namespace, uid and the like from an applier's set, not what lies
// under metadata): Argo CD's diff is /metadata/annotations (the apply
// prunes last-applied-configuration, which argocd-controller no longer
// declares) and /data/b; the labels, name, uid are no field.
func TestLocalServerSideDiffMetadata(t *testing.T) {
	rep := explainSSDWith(t, ssdAppLabel, ssaMigrated, `
apiVersion: v1
kind: ConfigMap
metadata: {name: cm, namespace: ns}
data: {a: "1"}
`)
	if st := statusOf(t, rep); !st.Drift {
		t.Fatalf("status %+v, want OutOfSync", st)
	}
	shown := map[string]model.VerdictKind{}
	for _, d := range rep.Drifts {
		if v := verdictOf(d, Engine); v != nil {
			shown[d.Path] = v.Kind
		}
	}
	for _, p := range []string{"/metadata/annotations", "/data/b"} {
		if k := shown[p]; k != model.Reported {
			t.Errorf("%s: %q, want reported (fields %v)", p, k, shown)
		}
	}
	for p, k := range shown {
		if strings.HasPrefix(p, "/metadata/") && p != "/metadata/annotations" && (k == model.Reported || k == model.Reverted) {
			t.Errorf("%s: %s, Argo CD's diff does not show it", p, k)
		}
	}
}

const ssdAppLabel = `
apiVersion: v1
kind: ConfigMap
metadata: {name: argocd-cm, namespace: argocd}
data: {application.resourceTrackingMethod: label}
`

// A CronJob whose fields argocd-controller owns as an Apply (kubectl
// migrated its client-side sync), the container's resources: {} with
// them: the API server encodes that struct whether set or not.
const cronJobMigrated = `
apiVersion: batch/v1
kind: CronJob
metadata:
  name: cj
  namespace: ns
  annotations:
    argocd.argoproj.io/tracking-id: app:batch/CronJob:ns/cj
  managedFields:
  - manager: argocd-controller
    operation: Apply
    apiVersion: batch/v1
    fieldsType: FieldsV1
    fieldsV1:
      f:metadata:
        f:annotations:
          f:argocd.argoproj.io/tracking-id: {}
      f:spec:
        f:schedule: {}
        f:jobTemplate:
          f:spec:
            f:template:
              f:spec:
                f:restartPolicy: {}
                f:containers:
                  k:{"name":"app"}:
                    .: {}
                    f:name: {}
                    f:image: {}
                    f:resources: {}
spec:
  schedule: "*/5 * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers:
          - name: app
            image: busybox
            resources: {}
status: {}
`

// TestLocalServerSideDiffRoundTrip (seed 20118): the apply prunes the
// container's resources: {} (argocd-controller applied it last, Git
// leaves it out), and the API server's decode and encode put it back, so
// Argo CD's diff does not show it.
func TestLocalServerSideDiffRoundTrip(t *testing.T) {
	rep := explainSSD(t, cronJobMigrated, `
apiVersion: batch/v1
kind: CronJob
metadata: {name: cj, namespace: ns}
spec:
  schedule: "*/5 * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers:
          - {name: app, image: busybox}
`)
	wantSynced(t, rep)
}

// TestServerRoundTripStatefulSetClaimTemplates (seeds 50005, 50018,
// 50124): the API server returns a StatefulSet's volumeClaimTemplates with
// apiVersion and kind, which its conversion to apps/v1 sets
// (k8s.io/kubernetes pkg/apis/apps/v1/conversion.go); Argo CD's
// server-side dry-run has them, so the in-memory one must too.
func TestServerRoundTripStatefulSetClaimTemplates(t *testing.T) {
	applied := objectOf(t, `
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: ns}
spec:
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers:
      - {name: db, image: postgres}
  volumeClaimTemplates:
  - metadata: {name: data}
    spec:
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 1Gi}}
`)
	got, err := serverRoundTrip(applied)
	if err != nil {
		t.Fatal(err)
	}
	for f, want := range map[string]string{"apiVersion": "v1", "kind": "PersistentVolumeClaim"} {
		tpl, _, _ := unstructured.NestedSlice(got.Object, "spec", "volumeClaimTemplates")
		if len(tpl) != 1 || tpl[0].(map[string]any)[f] != want {
			t.Errorf("volumeClaimTemplates[0].%s: %v, want %q", f, tpl, want)
		}
	}
	if got.GetAPIVersion() != "apps/v1" || got.GetKind() != "StatefulSet" {
		t.Errorf("round trip gave %s %s, want apps/v1 StatefulSet", got.GetAPIVersion(), got.GetKind())
	}
}

// TestServerRoundTripCRDDefaults (seed 60659): a CustomResourceDefinition
// an apply left without spec.conversion gets strategy None back, as its
// API server defaults it; its status is left as the apply left it.
func TestServerRoundTripCRDDefaults(t *testing.T) {
	applied := objectOf(t, `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: caches.drift.test}
spec:
  group: drift.test
  names: {kind: Cache, plural: caches}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
status:
  storedVersions: [v1]
`)
	got, err := serverRoundTrip(applied)
	if err != nil {
		t.Fatal(err)
	}
	if s, _, _ := unstructured.NestedString(got.Object, "spec", "conversion", "strategy"); s != "None" {
		t.Errorf("spec.conversion.strategy %q, want None", s)
	}
	if s, _, _ := unstructured.NestedString(got.Object, "spec", "names", "singular"); s != "cache" {
		t.Errorf("spec.names.singular %q, want cache", s)
	}
	if !reflect.DeepEqual(got.Object["status"], applied.Object["status"]) {
		t.Errorf("status %v, want it as applied %v", got.Object["status"], applied.Object["status"])
	}
	vs, _, _ := unstructured.NestedSlice(got.Object, "spec", "versions")
	if len(vs) != 1 || vs[0].(map[string]any)["name"] != "v1" {
		t.Errorf("spec.versions %v, want the applied v1", vs)
	}
}

// A StatefulSet whose server-side sync made argocd-controller own the
// rollingUpdate.maxUnavailable kube-apiserver v1.37 defaults
// (MaxUnavailableStatefulSet), as differential seed 60294 left it.
const statefulSetMaxUnavailable = `
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
  namespace: ns
  annotations: {argocd.argoproj.io/tracking-id: app:apps/StatefulSet:ns/db}
  managedFields:
  - manager: argocd-controller
    operation: Apply
    apiVersion: apps/v1
    fieldsType: FieldsV1
    fieldsV1:
      f:metadata: {f:annotations: {f:argocd.argoproj.io/tracking-id: {}}}
      f:spec:
        f:replicas: {}
        f:selector: {}
        f:serviceName: {}
        f:template: {f:metadata: {f:labels: {f:app: {}}}, f:spec: {f:containers: {"k:{\"name\":\"db\"}": {.: {}, f:image: {}, f:name: {}}}}}
        f:updateStrategy: {f:rollingUpdate: {f:maxUnavailable: {}, f:partition: {}}, f:type: {}}
spec:
  replicas: 1
  serviceName: db
  podManagementPolicy: OrderedReady
  revisionHistoryLimit: 10
  persistentVolumeClaimRetentionPolicy: {whenDeleted: Retain, whenScaled: Retain}
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers:
      - name: db
        image: postgres
        imagePullPolicy: Always
        resources: {}
        terminationMessagePath: /dev/termination-log
        terminationMessagePolicy: File
      dnsPolicy: ClusterFirst
      restartPolicy: Always
      schedulerName: default-scheduler
      securityContext: {}
      terminationGracePeriodSeconds: 30
  updateStrategy: {type: RollingUpdate, rollingUpdate: {partition: 0, maxUnavailable: 1}}
`

// TestLocalServerSideDiffServerDefaults (seed 60294): Git leaves
// maxUnavailable out, the in-memory apply prunes it, and Argo CD's
// 1.34 defaulting does not set it (the gate is off there); the cluster's
// API server sets it again, so Argo CD's diff does not show it.
func TestLocalServerSideDiffServerDefaults(t *testing.T) {
	rep := explainSSD(t, statefulSetMaxUnavailable, `
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: ns}
spec:
  replicas: 1
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers:
      - {name: db, image: postgres}
`)
	wantSynced(t, rep)
}

// wantSynced: no field is drift for Argo CD (Argo CD's diff shows none)
// and the object is Synced.
func wantSynced(t *testing.T, rep *model.Report) {
	t.Helper()
	for _, d := range rep.Drifts {
		if v := verdictOf(d, Engine); v != nil && (v.Kind == model.Reported || v.Kind == model.Reverted) {
			t.Errorf("%s: %s (%s), Argo CD's diff does not show it", d.Path, v.Kind, v.Reason)
		}
	}
	if st := statusOf(t, rep); st.Drift {
		t.Errorf("status %+v, want Synced", st)
	}
}

// TestServerSideDiffRejectedIsAComparisonError (differential seed 65213,
// Argo CD v3.2.11): argocd-controller's apply owns an IngressClass's
// parameters (a kubectl apply --server-side as argocd-controller took the
// client-side sync's fields over), and Git drops the required
// parameters.name. Argo CD's server-side diff dry-runs Git's manifest as
// argocd-controller, which prunes the name, and the API server rejects
// it: a ComparisonError, sync status Unknown, no diff and no self-heal.
// The tool computes that dry-run's rejection: status Unknown, no drift,
// the fields left alone. With the name in Git the diff runs (the label
// is OutOfSync).
func TestServerSideDiffRejectedIsAComparisonError(t *testing.T) {
	const live = `
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata:
  name: nginx
  labels: {app.kubernetes.io/component: controller}
  annotations: {argocd.argoproj.io/tracking-id: "app:networking.k8s.io/IngressClass:/nginx"}
  managedFields:
  - manager: argocd-controller
    operation: Apply
    apiVersion: networking.k8s.io/v1
    fieldsType: FieldsV1
    fieldsV1:
      f:metadata:
        f:annotations: {f:argocd.argoproj.io/tracking-id: {}}
        f:labels: {f:app.kubernetes.io/component: {}}
      f:spec:
        f:controller: {}
        f:parameters: {.: {}, f:apiGroup: {}, f:kind: {}, f:name: {}, f:scope: {}}
spec:
  controller: k8s.io/ingress-nginx
  parameters: {apiGroup: k8s.example.com, kind: IngressParameters, name: external-lb, scope: Cluster}
`
	git := `
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata:
  name: nginx
  labels: {app.kubernetes.io/component: controller, edge: "true"}
spec:
  controller: k8s.io/ingress-nginx
  parameters: {apiGroup: k8s.example.com, kind: IngressParameters}
`
	app := ssdApp + "  syncPolicy:\n    automated: {selfHeal: true}\n"
	rep := explainApp(t, app, live, git)
	if st := statusOf(t, rep); st.Drift || st.Status != "Unknown" {
		t.Errorf("status %+v, want Unknown without drift (a ComparisonError)", st)
	}
	if !hasNote(rep, "comparison-error") {
		t.Errorf("no comparison-error note: %+v", rep.Notes)
	}
	for _, p := range []string{"/spec/parameters/name", "/metadata/labels/edge"} {
		if v := argoVerdict(t, rep, p); v.Kind != model.LeftAlone {
			t.Errorf("%s: %s (%s), want left alone (Argo CD compares nothing)", p, v.Kind, v.Reason)
		}
	}
	rep = explainApp(t, app, live, strings.Replace(git, "kind: IngressParameters}", "kind: IngressParameters, name: external-lb}", 1))
	if st := statusOf(t, rep); !st.Drift || hasNote(rep, "comparison-error") {
		t.Errorf("Git with the name: status %+v (notes %+v), want OutOfSync on the label", st, rep.Notes)
	}
}
