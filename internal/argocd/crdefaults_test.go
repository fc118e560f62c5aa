package argocd

import (
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// backupSchema is the part of the API server's OpenAPI v3 document of
// diff.drift.test/v1 that types a Backup (the differential corpus's CRD,
// e2e/differential/corpus_more.go Setup), as apiextensions-apiserver
// publishes a structural schema: the defaults kept, metadata a $ref to
// ObjectMeta, whose built-in definition carries openapi-gen's zero-value
// defaults the API server never applies to a custom resource.
func backupSchema(t *testing.T) SchemaFunc {
	t.Helper()
	const doc = `{
 "test.drift.diff.v1.Backup": {"type": "object",
   "x-kubernetes-group-version-kind": [{"group": "diff.drift.test", "kind": "Backup", "version": "v1"}],
   "properties": {
     "apiVersion": {"type": "string"}, "kind": {"type": "string"},
     "metadata": {"allOf": [{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}]},
     "spec": {"type": "object", "required": ["schedule"], "properties": {
       "schedule": {"type": "string"}, "suspend": {"type": "boolean"},
       "replicas": {"type": "integer", "format": "int32"},
       "retention": {"type": "integer", "default": 7},
       "template": {"type": "object", "properties": {
         "metadata": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
         "spec": {"type": "object", "properties": {
           "restartPolicy": {"type": "string"}, "serviceAccountName": {"type": "string"},
           "terminationGracePeriodSeconds": {"type": "integer", "format": "int64", "default": 30},
           "containers": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
             "items": {"type": "object", "required": ["name"], "properties": {
               "name": {"type": "string"}, "image": {"type": "string"},
               "imagePullPolicy": {"type": "string", "default": "IfNotPresent"}}}}}}}}}}}},
 "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta": {"type": "object", "properties": {
   "name": {"type": "string"}, "namespace": {"type": "string"},
   "generateName": {"type": "string", "default": ""},
   "labels": {"type": "object", "additionalProperties": {"type": "string", "default": ""}}}}
}`
	var models map[string]*spec.Schema
	if err := json.Unmarshal([]byte(doc), &models); err != nil {
		t.Fatal(err)
	}
	return func(gv schema.GroupVersion) (map[string]*spec.Schema, error) { return models, nil }
}

// A Backup a client-side sync created (retention, the pod template's grace
// period and the container's pull policy defaulted by the API server from
// the CRD's structural schema), then server-side applied by deploy-bot
// with a serviceAccountName: the API server decodes an apply request to a
// custom resource through the CRD's defaulting (apiextensions-apiserver
// pkg/apiserver/schema/defaulting), so deploy-bot owns the defaulted
// fields of what it applied too (differential seeds 50500, 50556, 50578).
const backupSSAByBot = `
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
    operation: Update
    apiVersion: diff.drift.test/v1
    fieldsType: FieldsV1
    fieldsV1:
      f:metadata:
        f:annotations:
          .: {}
          f:argocd.argoproj.io/tracking-id: {}
          f:kubectl.kubernetes.io/last-applied-configuration: {}
      f:spec:
        .: {}
        f:schedule: {}
        f:template:
          .: {}
          f:spec:
            .: {}
            f:containers: {}
  - manager: deploy-bot
    operation: Apply
    apiVersion: diff.drift.test/v1
    fieldsType: FieldsV1
    fieldsV1:
      f:spec:
        f:retention: {}
        f:template:
          f:spec:
            f:serviceAccountName: {}
            f:terminationGracePeriodSeconds: {}
            f:containers:
              'k:{"name":"restic"}': {.: {}, f:name: {}, f:imagePullPolicy: {}}
spec:
  schedule: 0 2 * * *
  retention: RETENTION
  template:
    spec:
      serviceAccountName: backup
      terminationGracePeriodSeconds: 30
      containers:
      - {name: restic, image: "restic/restic:0.17.0", imagePullPolicy: IfNotPresent}
`

const backupGit = `
apiVersion: diff.drift.test/v1
kind: Backup
metadata: {name: web, namespace: ns}
spec:
  schedule: 0 2 * * *
  template:
    spec:
      containers:
      - {name: restic, image: "restic/restic:0.17.0"}
`

// TestCustomResourceStructuralDefaults (issue 32, A15): a custom resource's
// field Git leaves out whose live value is the default of its CRD's
// structural schema is the API server's default, as a built-in kind's
// scheme default is (dropDefaulted): not listed, though the manager whose
// server-side apply the server defaulted owns it. Argo CD's diff does not
// show it. The defaults are applied as the API server applies them
// (apiextensions-apiserver pkg/apiserver/schema/defaulting/algorithm.go
// Default), from the served schema; metadata's built-in definition is not
// the CRD's and adds nothing. A value other than the default
// (retention 9) is listed, and so is the field deploy-bot applied.
func TestCustomResourceStructuralDefaults(t *testing.T) {
	for _, c := range []struct {
		retention string
		listed    map[string]bool
	}{
		{"7", map[string]bool{"/spec/retention": false}},
		{"9", map[string]bool{"/spec/retention": true}},
	} {
		live := strings.Replace(backupSSAByBot, "RETENTION", c.retention, 1)
		rep := explainWithSchema(t, live, backupGit, backupSchema(t))
		want := map[string]bool{
			"/spec/template/spec/serviceAccountName":            true,
			"/spec/template/spec/terminationGracePeriodSeconds": false,
			"/spec/template/spec/containers/0/imagePullPolicy":  false,
			"/metadata/generateName":                            false,
		}
		for p, l := range c.listed {
			want[p] = l
		}
		got := map[string]bool{}
		for _, d := range rep.Drifts {
			got[d.Path] = true
		}
		for p, l := range want {
			if got[p] != l {
				t.Errorf("retention %s: %s listed %v, want %v (drifts %v)", c.retention, p, got[p], l, got)
			}
		}
	}
}

// TestCRDConversionStrategyDefault (issue 32, A11; differential seed
// 50157): a CustomResourceDefinition Git writes without spec.conversion
// has conversion.strategy None live, the default apiextensions sets
// (apiextensions-apiserver pkg/apis/apiextensions/v1/defaults.go
// SetDefaults_CustomResourceDefinitionSpec), owned by the manager whose
// apply the server defaulted. It is the server's default: not listed. A
// strategy Webhook is.
func TestCRDConversionStrategyDefault(t *testing.T) {
	const live = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: caches.diff.drift.test
  annotations:
    argocd.argoproj.io/tracking-id: app:apiextensions.k8s.io/CustomResourceDefinition:ns/caches.diff.drift.test
  managedFields:
  - manager: argocd-controller
    operation: Update
    apiVersion: apiextensions.k8s.io/v1
    fieldsType: FieldsV1
    fieldsV1:
      f:metadata: {f:annotations: {.: {}, f:argocd.argoproj.io/tracking-id: {}}}
      f:spec: {f:group: {}, f:scope: {}, f:names: {f:kind: {}, f:plural: {}}}
  - manager: ops
    operation: Apply
    apiVersion: apiextensions.k8s.io/v1
    fieldsType: FieldsV1
    fieldsV1:
      f:spec: {f:conversion: {.: {}, f:strategy: {}}}
spec:
  group: diff.drift.test
  scope: Namespaced
  names: {kind: Cache, plural: caches, singular: cache, listKind: CacheList}
  conversion: {strategy: STRATEGY}
`
	const git = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: caches.diff.drift.test}
spec:
  group: diff.drift.test
  scope: Namespaced
  names: {kind: Cache, plural: caches, singular: cache, listKind: CacheList}
`
	for strategy, want := range map[string]bool{"None": false, "Webhook": true} {
		rep := explainWithSchema(t, strings.Replace(live, "STRATEGY", strategy, 1), git, nil)
		listed := false
		for _, d := range rep.Drifts {
			if d.Path == "/spec/conversion/strategy" || d.Path == "/spec/conversion" {
				listed = true
			}
		}
		if listed != want {
			t.Errorf("strategy %s: listed %v, want %v (%+v)", strategy, listed, want, rep.Drifts)
		}
	}
}
