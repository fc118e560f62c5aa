package argocd

import (
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// The Application of differential seed 20089: selfHeal,
// RespectIgnoreDifferences=true and a managedFieldsManagers rule.
const selfHealApp = testAppHead + `  ignoreDifferences:
  - {group: batch, kind: CronJob, managedFieldsManagers: [kubectl-patch]}
  syncPolicy:
    automated: {selfHeal: true}
    syncOptions: [RespectIgnoreDifferences=true]
`

// A CronJob Argo CD created by a client-side sync (schedule "0 3 * * *"),
// whose schedule kubectl patch then changed, as seed 20089 left it.
const cronJobPatched = `
apiVersion: batch/v1
kind: CronJob
metadata:
  name: web
  namespace: ns
  annotations:
    argocd.argoproj.io/tracking-id: app:batch/CronJob:ns/web
    kubectl.kubernetes.io/last-applied-configuration: '{"apiVersion":"batch/v1","kind":"CronJob","metadata":{"annotations":{"argocd.argoproj.io/tracking-id":"app:batch/CronJob:ns/web"},"name":"web","namespace":"ns"},"spec":{"jobTemplate":{"spec":{"template":{"spec":{"containers":[{"args":["echo","backup"],"image":"busybox:1.36","name":"backup"}],"restartPolicy":"OnFailure"}}}},"schedule":"0 3 * * *"}}'
  managedFields:
  - manager: argocd-controller
    operation: Update
    apiVersion: batch/v1
    fieldsType: FieldsV1
    fieldsV1:
      f:metadata:
        f:annotations:
          .: {}
          f:argocd.argoproj.io/tracking-id: {}
          f:kubectl.kubernetes.io/last-applied-configuration: {}
      f:spec:
        f:jobTemplate:
          f:spec:
            f:template:
              f:spec:
                f:containers:
                  'k:{"name":"backup"}': {.: {}, f:args: {}, f:image: {}, f:name: {}}
                f:restartPolicy: {}
  - manager: kubectl-patch
    operation: Update
    apiVersion: batch/v1
    fieldsType: FieldsV1
    fieldsV1:
      f:spec: {f:schedule: {}}
spec:
  schedule: 0 4 * * *
  jobTemplate:
    spec:
      template:
        spec:
          containers:
          - {name: backup, image: "busybox:1.36", args: [echo, backup]}
          restartPolicy: OnFailure
`

const cronJobGitNoSchedule = `
apiVersion: batch/v1
kind: CronJob
metadata: {name: web, namespace: ns}
spec:
  jobTemplate:
    spec:
      template:
        spec:
          containers:
          - {name: backup, image: "busybox:1.36", args: [echo, backup]}
          restartPolicy: OnFailure
`

// cronJobSchema is the part of the API server's OpenAPI v3 document of
// batch/v1 the check reads: CronJobSpec requires jobTemplate and schedule
// (as kube-apiserver v1.37.2 serves it, with openapi-gen's zero-value
// defaults: "default": "" on schedule), reached through an allOf $ref as
// v3 wraps typed references.
func cronJobSchema(t *testing.T) SchemaFunc {
	t.Helper()
	const doc = `{
 "io.k8s.api.batch.v1.CronJob": {"type": "object",
   "properties": {"spec": {"default": {}, "allOf": [{"$ref": "#/components/schemas/io.k8s.api.batch.v1.CronJobSpec"}]}},
   "x-kubernetes-group-version-kind": [{"group": "batch", "kind": "CronJob", "version": "v1"}]},
 "io.k8s.api.batch.v1.CronJobSpec": {"type": "object", "required": ["schedule", "jobTemplate"],
   "properties": {"schedule": {"default": "", "type": "string"}, "suspend": {"type": "boolean"},
     "jobTemplate": {"default": {}, "type": "object"}, "timeZone": {"type": "string"}}}
}`
	var models map[string]*spec.Schema
	if err := json.Unmarshal([]byte(doc), &models); err != nil {
		t.Fatal(err)
	}
	return func(gv schema.GroupVersion) (map[string]*spec.Schema, error) { return models, nil }
}

func explainWithSchema(t *testing.T, live, desired string, schemaOf SchemaFunc) *model.Report {
	t.Helper()
	parser, err := parityParser()
	if err != nil {
		t.Fatal(err)
	}
	return explainFile(t, Options{Inputs: []Input{{Object: objectOf(t, selfHealApp)}}, GVKParser: parser, Schema: schemaOf}, live, desired)
}

// TestSyncFailsOnARequiredField (seed 20089): Git drops a CronJob's
// required schedule. Argo CD v3.2.11 shows /spec/schedule (OutOfSync), and
// every self-heal attempt fails ("spec.schedule: Required value"): the
// field is reported, not reverted. A field the schema does not require
// (timeZone) is still reverted.
func TestSyncFailsOnARequiredField(t *testing.T) {
	rep := explainWithSchema(t, cronJobPatched, cronJobGitNoSchedule, cronJobSchema(t))
	v := argoVerdict(t, rep, "/spec/schedule")
	if v.Kind != model.Reported || !strings.Contains(v.Reason, "every sync fails (the object it writes lacks /spec/schedule") {
		t.Fatalf("/spec/schedule: %+v, want reported with the failing sync named (notes %+v)", v, rep.Notes)
	}
	if st := statusOf(t, rep); st.Status != "OutOfSync" {
		t.Errorf("status %+v, want OutOfSync", st)
	}
	if !hasNote(rep, "sync-fails") {
		t.Errorf("no sync-fails note: %+v", rep.Notes)
	}

	// timeZone, not required: the sync deletes it and succeeds.
	live := strings.Replace(strings.Replace(cronJobPatched, `"schedule":"0 3 * * *"}}`, `"schedule":"0 3 * * *","timeZone":"UTC"}}`, 1),
		"  schedule: 0 4 * * *\n", "  schedule: 0 4 * * *\n  timeZone: UTC\n", 1)
	git := strings.Replace(cronJobGitNoSchedule, "spec:\n  jobTemplate:", "spec:\n  schedule: 0 3 * * *\n  jobTemplate:", 1)
	rep = explainWithSchema(t, live, git, cronJobSchema(t))
	if v := argoVerdict(t, rep, "/spec/timeZone"); v.Kind != model.Reverted {
		t.Errorf("/spec/timeZone: %+v, want reverted", v)
	}
	if hasNote(rep, "sync-fails") {
		t.Errorf("sync-fails note on a sync that succeeds: %+v", rep.Notes)
	}
}

// backupCreatedByApply is a Backup another manager's server-side apply
// created with a label and Argo CD's tracking annotation only (Argo CD's
// own first sync of a manifest without schedule had failed): no spec, no
// last-applied-configuration.
const backupCreatedByApply = `
apiVersion: diff.drift.test/v1
kind: Backup
metadata:
  name: web
  namespace: ns
  labels: {app: ops}
  annotations: {argocd.argoproj.io/tracking-id: "app:diff.drift.test/Backup:ns/web"}
  managedFields:
  - manager: ops
    operation: Apply
    apiVersion: diff.drift.test/v1
    fieldsType: FieldsV1
    fieldsV1: {f:metadata: {f:labels: {f:app: {}}, f:annotations: {f:argocd.argoproj.io/tracking-id: {}}}}
`

// TestSyncFailsOnARequiredFieldOfAParentItCreates (seed 57128, A26): Git's
// Backup has a spec without its required schedule and the live object has
// no spec at all; the sync's patch deletes nothing (no last-applied-
// configuration) but writes a spec the API server rejects: Argo CD v3.2.11
// showed /spec, /metadata/labels/app and the tracking annotation, and every
// self-heal sync failed ("spec.schedule: Required value"). With schedule
// in Git the sync succeeds and the fields are reverted.
func TestSyncFailsOnARequiredFieldOfAParentItCreates(t *testing.T) {
	git := `
apiVersion: diff.drift.test/v1
kind: Backup
metadata: {name: web, namespace: ns, labels: {app: postgres}}
spec:
  replicas: 1
  template:
    spec:
      containers: [{name: restic, image: "restic/restic:0.17.0"}]
`
	rep := explainWithSchema(t, backupCreatedByApply, git, backupSchema(t))
	for _, p := range []string{"/spec", "/metadata/labels/app"} {
		if v := argoVerdict(t, rep, p); v.Kind != model.Reported || !strings.Contains(v.Reason, "/spec/schedule") {
			t.Errorf("%s: %+v, want reported, the failing sync naming /spec/schedule (notes %+v)", p, v, rep.Notes)
		}
	}
	if !hasNote(rep, "sync-fails") {
		t.Errorf("no sync-fails note: %+v", rep.Notes)
	}

	// A required field with a default (retention, were it required) or
	// one Git sets: the sync succeeds.
	rep = explainWithSchema(t, backupCreatedByApply, strings.Replace(git, "spec:\n", "spec:\n  schedule: \"0 2 * * *\"\n", 1), backupSchema(t))
	if v := argoVerdict(t, rep, "/spec"); v.Kind != model.Reverted {
		t.Errorf("/spec with schedule in Git: %+v, want reverted", v)
	}
	if hasNote(rep, "sync-fails") {
		t.Errorf("sync-fails note on a sync that succeeds: %+v", rep.Notes)
	}
}

// TestServerSideSyncFailsInItsMigration (differential seed 61921, Argo CD
// v3.2.11): with ServerSideApply=true the sync first applies Git's
// manifest client-side when kubectl-client-side-apply owns fields (a
// person's kubectl apply); that 3-way patch deletes the required schedule
// and the sync fails, every self-heal. Without that manager the sync is
// a server-side apply only, which keeps the schedule Git no longer sets
// (another manager owns it): no sync-fails.
func TestServerSideSyncFailsInItsMigration(t *testing.T) {
	parser, err := parityParser()
	if err != nil {
		t.Fatal(err)
	}
	app := strings.Replace(selfHealApp, "[RespectIgnoreDifferences=true]", "[RespectIgnoreDifferences=true, ServerSideApply=true]", 1)
	opts := Options{Inputs: []Input{{Object: objectOf(t, app)}}, GVKParser: parser, Schema: cronJobSchema(t)}
	personApplied := strings.Replace(cronJobPatched, "  - manager: kubectl-patch\n", `  - manager: kubectl-client-side-apply
    operation: Update
    apiVersion: batch/v1
    fieldsType: FieldsV1
    fieldsV1:
      f:metadata: {f:labels: {.: {}, f:audited: {}}}
  - manager: kubectl-patch
`, 1)
	personApplied = strings.Replace(personApplied, "  namespace: ns\n", "  namespace: ns\n  labels: {audited: \"yes\"}\n", 1)
	// Git also moves the image: the object is OutOfSync, and synced.
	git := strings.Replace(cronJobGitNoSchedule, "busybox:1.36", "busybox:1.37", 1)
	rep := explainFile(t, opts, personApplied, git)
	if st := statusOf(t, rep); !st.Drift {
		t.Fatalf("status %+v, want OutOfSync (the image)", st)
	}
	if !hasNote(rep, "sync-fails") {
		t.Errorf("kubectl-client-side-apply owns fields: no sync-fails note: %+v", rep.Notes)
	}
	// The person's label: the failed sync deletes nothing.
	if v := argoVerdict(t, rep, "/metadata/labels/audited"); strings.Contains(v.Reason, SyncDeletesPhrase) {
		t.Errorf("/metadata/labels/audited: %s %q, want no sync deleting it (the sync fails)", v.Kind, v.Reason)
	}
	rep = explainFile(t, opts, cronJobPatched, git)
	if hasNote(rep, "sync-fails") {
		t.Errorf("no client-side apply migration: a sync-fails note: %+v", rep.Notes)
	}
}

// A Job a client-side sync created (annotation tracking; argocd-controller's Update owns what
// the API server defaulted, completions and parallelism among them; the
// generated selector and template labels no one), as differential seed
// 64984 left it.
const jobCreatedClientSide = `
apiVersion: batch/v1
kind: Job
metadata:
  name: web
  namespace: ns
  uid: 748a1cb3-a7d1-4119-a43e-8dd86e91c846
  labels: {app: migrate}
  annotations:
    argocd.argoproj.io/tracking-id: app:batch/Job:ns/web
    kubectl.kubernetes.io/last-applied-configuration: '{"apiVersion":"batch/v1","kind":"Job","metadata":{"annotations":{"argocd.argoproj.io/tracking-id":"app:batch/Job:ns/web"},"labels":{"app":"migrate"},"name":"web","namespace":"ns"},"spec":{"backoffLimit":2,"suspend":true,"template":{"spec":{"containers":[{"command":["sh","-c","echo migrate"],"image":"busybox:1.36","name":"migrate"}],"restartPolicy":"Never"}}}}'
  managedFields:
  - manager: argocd-controller
    operation: Update
    apiVersion: batch/v1
    fieldsType: FieldsV1
    fieldsV1:
      f:metadata:
        f:annotations: {.: {}, f:argocd.argoproj.io/tracking-id: {}, f:kubectl.kubernetes.io/last-applied-configuration: {}}
        f:labels: {.: {}, f:app: {}}
      f:spec:
        f:backoffLimit: {}
        f:completionMode: {}
        f:completions: {}
        f:manualSelector: {}
        f:parallelism: {}
        f:podReplacementPolicy: {}
        f:suspend: {}
        f:template:
          f:spec:
            f:containers:
              k:{"name":"migrate"}:
                .: {}
                f:command: {}
                f:image: {}
                f:imagePullPolicy: {}
                f:name: {}
                f:resources: {}
                f:terminationMessagePath: {}
                f:terminationMessagePolicy: {}
            f:dnsPolicy: {}
            f:restartPolicy: {}
            f:schedulerName: {}
            f:securityContext: {}
            f:terminationGracePeriodSeconds: {}
spec:
  backoffLimit: 2
  completionMode: NonIndexed
  completions: 1
  manualSelector: false
  parallelism: 1
  podReplacementPolicy: TerminatingOrFailed
  selector:
    matchLabels: {batch.kubernetes.io/controller-uid: 748a1cb3-a7d1-4119-a43e-8dd86e91c846}
  suspend: true
  template:
    metadata:
      labels:
        batch.kubernetes.io/controller-uid: 748a1cb3-a7d1-4119-a43e-8dd86e91c846
        batch.kubernetes.io/job-name: web
        controller-uid: 748a1cb3-a7d1-4119-a43e-8dd86e91c846
        job-name: web
    spec:
      containers:
      - command: [sh, -c, echo migrate]
        image: busybox:1.36
        imagePullPolicy: IfNotPresent
        name: migrate
        resources: {}
        terminationMessagePath: /dev/termination-log
        terminationMessagePolicy: File
      dnsPolicy: ClusterFirst
      restartPolicy: Never
      schedulerName: default-scheduler
      securityContext: {}
      terminationGracePeriodSeconds: 30
`

// jobGit is the Job's manifest in Git; extra goes into its spec.
func jobGit(extra string) string {
	return `
apiVersion: batch/v1
kind: Job
metadata: {name: web, namespace: ns, labels: {app: migrate}}
spec:
` + extra + `  backoffLimit: 2
  suspend: true
  template:
    spec:
      containers: [{name: migrate, image: "busybox:1.36", command: [sh, -c, echo migrate]}]
      restartPolicy: Never
`
}

// TestServerSideSyncFailsOnAnImmutableField (differential seed 64984,
// A38, Argo CD v3.2.11): Git writes a Job's default parallelism and adds
// activeDeadlineSeconds, in a ServerSideApply=true app. The server-side
// sync hands argocd-controller's Update fields to its apply, which prunes
// the defaulted completions; with parallelism set the defaulting no
// longer writes it, and the API server rejects the update
// ("spec.completions: field is immutable") on every self-heal attempt:
// activeDeadlineSeconds is reported, not reverted. Without parallelism in
// Git the defaulting writes both again and the sync succeeds.
func TestServerSideSyncFailsOnAnImmutableField(t *testing.T) {
	app := strings.Replace(ssaSelfHealApp, "[ServerSideApply=true]", "[ServerSideApply=true, RespectIgnoreDifferences=true]", 1)
	rep := explainApp(t, app, jobCreatedClientSide, jobGit("  activeDeadlineSeconds: 600\n  parallelism: 1\n"))
	if st := statusOf(t, rep); !st.Drift {
		t.Fatalf("status %+v, want OutOfSync", st)
	}
	if v := argoVerdict(t, rep, "/spec/activeDeadlineSeconds"); v.Kind != model.Reported {
		t.Errorf("activeDeadlineSeconds: %s (%s), want reported (every sync fails)", v.Kind, v.Reason)
	}
	var msg string
	for _, n := range rep.Notes {
		if n.Reason == "sync-fails" {
			msg = n.Message
		}
	}
	if !strings.Contains(msg, "spec.completions: Invalid value: field is immutable") || !strings.Contains(msg, "server-side apply") {
		t.Errorf("sync-fails note %q, want the server-side apply's spec.completions immutable", msg)
	}
	rep = explainApp(t, app, jobCreatedClientSide, jobGit("  activeDeadlineSeconds: 600\n"))
	if hasNote(rep, "sync-fails") {
		t.Errorf("Git without parallelism: a sync-fails note: %+v", rep.Notes)
	}
	if v := argoVerdict(t, rep, "/spec/activeDeadlineSeconds"); v.Kind != model.Reverted {
		t.Errorf("Git without parallelism: activeDeadlineSeconds %s (%s), want reverted", v.Kind, v.Reason)
	}
}

// TestClientSideSyncFailsOnAnImmutableField: Git moves the image of a
// Job's pod template. A Job's template is immutable (only a suspended
// Job's scheduling directives may change), so Argo CD's client-side sync
// is rejected on every self-heal attempt and the image is reported, not
// reverted.
func TestClientSideSyncFailsOnAnImmutableField(t *testing.T) {
	app := strings.Replace(ssaSelfHealApp, "[ServerSideApply=true]", "[Validate=true]", 1)
	rep := explainApp(t, app, jobCreatedClientSide, strings.Replace(jobGit(""), "busybox:1.36", "busybox:1.37", 1))
	if v := argoVerdict(t, rep, "/spec/template/spec/containers/0/image"); v.Kind != model.Reported || !strings.Contains(v.Reason, "spec.template.spec: Invalid value: field is immutable") {
		t.Errorf("image: %s (%s), want reported, the template being immutable", v.Kind, v.Reason)
	}
	rep = explainApp(t, app, jobCreatedClientSide, jobGit("  activeDeadlineSeconds: 600\n"))
	if hasNote(rep, "sync-fails") {
		t.Errorf("activeDeadlineSeconds only: a sync-fails note: %+v", rep.Notes)
	}
	// A suspended Job that never started may change its containers'
	// resources on kube-apiserver v1.36+ (MutablePodResourcesForSuspendedJobs,
	// off in the 1.34 this process emulates for Argo CD's defaulting).
	resources := strings.Replace(jobGit(""), "command: [sh, -c, echo migrate]", "command: [sh, -c, echo migrate], resources: {limits: {memory: 64Mi}}", 1)
	rep = explainApp(t, app, jobCreatedClientSide, resources)
	if hasNote(rep, "sync-fails") {
		t.Errorf("a suspended Job's resources: a sync-fails note: %+v", rep.Notes)
	}
	if v := argoVerdict(t, rep, "/spec/template/spec/containers/0/resources/limits"); v.Kind != model.Reverted {
		t.Errorf("a suspended Job's resources: %s (%s), want reverted", v.Kind, v.Reason)
	}
}

// TestForcedSyncIsNotCalledFailed: with Force=true on the object, Argo
// CD's kubectl apply deletes and re-creates a Job whose update the server
// rejects, and with Replace=true the write is kubectl replace: neither is
// computed, so no sync is called failed.
func TestForcedSyncIsNotCalledFailed(t *testing.T) {
	app := strings.Replace(ssaSelfHealApp, "[ServerSideApply=true]", "[Validate=true]", 1)
	image := strings.Replace(jobGit(""), "busybox:1.36", "busybox:1.37", 1)
	for name, git := range map[string]string{
		"Force=true":   strings.Replace(image, "labels: {app: migrate}}", "labels: {app: migrate}, annotations: {argocd.argoproj.io/sync-options: Force=true}}", 1),
		"Replace=true": strings.Replace(image, "labels: {app: migrate}}", "labels: {app: migrate}, annotations: {argocd.argoproj.io/sync-options: Replace=true}}", 1),
	} {
		rep := explainApp(t, app, jobCreatedClientSide, git)
		if hasNote(rep, "sync-fails") {
			t.Errorf("%s: a sync-fails note: %+v", name, rep.Notes)
		}
	}
}

// TestServerSideSyncFailsOnARequiredFieldOfACustomResource (differential
// seed 66810, Argo CD v3.2.11): argocd-controller's apply owns a Backup's
// schedule (kubectl's migration took the client-side sync's fields
// over), and Git drops it and moves the image, in a ServerSideApply=true
// selfHeal app. The server-side sync prunes the schedule, which the CRD's
// schema requires: every self-heal sync fails ("spec.schedule: Required
// value"), and the image is reported, not reverted. With the schedule in
// Git the sync succeeds.
func TestServerSideSyncFailsOnARequiredFieldOfACustomResource(t *testing.T) {
	parser, err := GVKParserFromOpenAPIV2([]byte(backupOpenAPIV2))
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Inputs: []Input{{Object: objectOf(t, ssaSelfHealApp)}}, GVKParser: parser, Schema: backupSchema(t)}
	moved := strings.Replace(backupGit, "restic/restic:0.17.0", "restic/restic:0.18.0", 1)
	rep := explainFile(t, opts, backupMigrated, strings.Replace(moved, "  schedule: 0 2 * * *\n", "", 1))
	if v := argoVerdict(t, rep, "/spec/template/spec/containers/0/image"); v.Kind != model.Reported || !strings.Contains(v.Reason, "lacks /spec/schedule") {
		t.Errorf("image: %s (%s), want reported, every sync failing on the schedule", v.Kind, v.Reason)
	}
	if !hasNote(rep, "sync-fails") {
		t.Errorf("no sync-fails note: %+v", rep.Notes)
	}
	rep = explainFile(t, opts, backupMigrated, moved)
	if hasNote(rep, "sync-fails") {
		t.Errorf("Git with the schedule: a sync-fails note: %+v", rep.Notes)
	}
	if v := argoVerdict(t, rep, "/spec/template/spec/containers/0/image"); v.Kind != model.Reverted {
		t.Errorf("Git with the schedule: image %s (%s), want reverted", v.Kind, v.Reason)
	}
}
