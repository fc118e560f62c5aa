package argocd

import (
	"strings"
	"testing"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// backupOpenAPIV2 types a Backup for the in-memory apply (the parser the
// cluster's OpenAPI v2 document gives), with its CRD's structural
// defaults.
const backupOpenAPIV2 = `{"swagger": "2.0", "info": {"title": "t", "version": "v"}, "paths": {}, "definitions": {
 "test.drift.diff.v1.Backup": {"type": "object",
   "x-kubernetes-group-version-kind": [{"group": "diff.drift.test", "kind": "Backup", "version": "v1"}],
   "properties": {
     "apiVersion": {"type": "string"}, "kind": {"type": "string"},
     "metadata": {"$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"},
     "spec": {"type": "object", "properties": {
       "schedule": {"type": "string"}, "retention": {"type": "integer", "default": 7},
       "template": {"type": "object", "properties": {
         "spec": {"type": "object", "properties": {
           "terminationGracePeriodSeconds": {"type": "integer", "format": "int64", "default": 30},
           "containers": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
             "items": {"type": "object", "required": ["name"], "properties": {
               "name": {"type": "string"}, "image": {"type": "string"},
               "imagePullPolicy": {"type": "string", "default": "IfNotPresent"}}}}}}}}}}}},
 "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta": {"type": "object", "properties": {
   "name": {"type": "string"}, "namespace": {"type": "string"}, "generation": {"type": "integer"},
   "managedFields": {"type": "array", "items": {"type": "object", "properties": {
     "manager": {"type": "string"}, "operation": {"type": "string"}, "apiVersion": {"type": "string"},
     "time": {"type": "string"}, "fieldsType": {"type": "string"},
     "fieldsV1": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}},
   "labels": {"type": "object", "additionalProperties": {"type": "string"}},
   "annotations": {"type": "object", "additionalProperties": {"type": "string"}}}}
}}`

// A Backup a client-side sync created (the CRD defaulted the grace period
// and the pull policy), then written by a kubectl apply --server-side
// --field-manager=argocd-controller of spec.retention alone: kubectl's
// migration moved the Update entry's fields, the defaults and
// last-applied-configuration with them, into argocd-controller's Apply
// entry (differential seed 50886).
const backupMigrated = `
apiVersion: diff.drift.test/v1
kind: Backup
metadata:
  name: web
  namespace: ns
  annotations:
    argocd.argoproj.io/tracking-id: app:diff.drift.test/Backup:ns/web
    kubectl.kubernetes.io/last-applied-configuration: '{"apiVersion":"diff.drift.test/v1","kind":"Backup","metadata":{"annotations":{"argocd.argoproj.io/tracking-id":"app:diff.drift.test/Backup:ns/web"},"name":"web","namespace":"ns"},"spec":{"schedule":"0 2 * * *","template":{"spec":{"containers":[{"image":"restic/restic:0.17.0","name":"restic"}]}}}}'
  managedFields:
  - manager: argocd-controller
    operation: Apply
    apiVersion: diff.drift.test/v1
    fieldsType: FieldsV1
    fieldsV1:
      f:metadata:
        f:annotations:
          f:argocd.argoproj.io/tracking-id: {}
          f:kubectl.kubernetes.io/last-applied-configuration: {}
      f:spec:
        f:schedule: {}
        f:retention: {}
        f:template:
          f:spec:
            f:terminationGracePeriodSeconds: {}
            f:containers:
              'k:{"name":"restic"}': {.: {}, f:name: {}, f:image: {}, f:imagePullPolicy: {}}
spec:
  schedule: 0 2 * * *
  retention: 30
  template:
    spec:
      terminationGracePeriodSeconds: 30
      containers:
      - {name: restic, image: "restic/restic:0.17.0", imagePullPolicy: IfNotPresent}
`

// TestLocalServerSideDiffCRDefaults (issue 32, A17; differential seed
// 50886): the server-side diff's dry-run of Git's manifest prunes the
// fields argocd-controller's Apply entry owns and Git lacks, and the API
// server, decoding the result, sets the CRD's structural defaults again
// (apiextensions-apiserver pkg/apiserver/schema/defaulting): Argo CD's
// diff does not show the grace period or the pull policy. The in-memory
// apply does the same. The dry-run also prunes
// last-applied-configuration, so Argo CD is OutOfSync with a diff that
// shows nothing but retention, which the jsonPointers rule hides.
func TestLocalServerSideDiffCRDefaults(t *testing.T) {
	parser, err := GVKParserFromOpenAPIV2([]byte(backupOpenAPIV2))
	if err != nil {
		t.Fatal(err)
	}
	app := strings.Replace(ssdApp, "spec:\n", "spec:\n  syncPolicy: {automated: {selfHeal: true}}\n  ignoreDifferences: [{group: diff.drift.test, kind: Backup, jsonPointers: [/spec/retention]}]\n", 1)
	rep := explainFile(t, Options{Inputs: []Input{{Object: objectOf(t, app)}}, GVKParser: parser, Schema: backupSchema(t)}, backupMigrated, backupGit)
	for _, d := range rep.Drifts {
		if v := verdictOf(d, Engine); v != nil && (v.Kind == model.Reported || v.Kind == model.Reverted) {
			t.Errorf("%s: %s (%s), want no field of Argo CD's diff", d.Path, v.Kind, v.Reason)
		}
	}
	if st := statusOf(t, rep); !st.Drift {
		t.Errorf("status %+v, want OutOfSync (last-applied-configuration pruned)", st)
	}
	if hasNote(rep, "server-side-diff") && hasNoteLike(rep, "server-side-diff", "could not run") {
		t.Errorf("the in-memory apply fell back: %+v", rep.Notes)
	}
}

// TestAPIServerDefaultNotListed (issue 32, A19; differential seed 50562):
// kube-apiserver v1.37 defaults a StatefulSet's
// rollingUpdate.maxUnavailable to 1 (MaxUnavailableStatefulSet, on from
// 1.37; off in the 1.34 Argo CD links, whose defaults dropDefaulted runs).
// A server-side apply of a label by platform-operator took it over (the
// server defaults the apply's body). Argo CD neither shows nor changes it,
// and whoever deletes it gets it back: not listed. Another value is.
func TestAPIServerDefaultNotListed(t *testing.T) {
	const live = `
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
  namespace: ns
  labels: {tier: gold}
  annotations: {argocd.argoproj.io/tracking-id: "app:apps/StatefulSet:ns/db"}
  managedFields:
  - manager: platform-operator
    operation: Apply
    apiVersion: apps/v1
    fieldsType: FieldsV1
    fieldsV1:
      f:metadata: {f:labels: {f:tier: {}}}
      f:spec: {f:updateStrategy: {f:rollingUpdate: {f:maxUnavailable: {}}}}
spec:
  serviceName: db
  selector: {matchLabels: {app: db}}
  updateStrategy: {type: RollingUpdate, rollingUpdate: {partition: 0, maxUnavailable: MAXU}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: db, image: "postgres:16"}]}
`
	const git = `
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: ns}
spec:
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: db, image: "postgres:16"}]}
`
	for maxu, listed := range map[string]bool{"1": false, "2": true} {
		rep := explainSSDWith(t, "", strings.Replace(live, "MAXU", maxu, 1), git,
			"    argocd.argoproj.io/compare-options: ServerSideDiff=true\n", "",
			"spec:\n", "spec:\n  syncPolicy: {automated: {selfHeal: true}, syncOptions: [ServerSideApply=true]}\n")
		got := false
		for _, d := range rep.Drifts {
			got = got || d.Path == "/spec/updateStrategy/rollingUpdate/maxUnavailable"
		}
		if got != listed {
			t.Errorf("maxUnavailable %s: listed %v, want %v (drifts %+v)", maxu, got, listed, rep.Drifts)
		}
	}
}
