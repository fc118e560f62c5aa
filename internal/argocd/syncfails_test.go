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
	if v.Kind != model.Reported || !strings.Contains(v.Reason, "a sync fails") {
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
