package flux

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// kustomize-controller reconciles what its inventory lists, labels or not
// (make differential seed 4048: a client-side kubectl apply dropped the
// ownership labels, and the next apply put them back with the Git values).
// An object the controller never wrote is not looked up at all.
func TestOwnerFromTheInventoryWhenLabelsAreGone(t *testing.T) {
	ks := obj(t, kustomization+`status:
  inventory:
    entries:
    - {id: prod_cfg__ConfigMap, v: v1}
`)
	reader := &testutil.Reader{Objects: []*unstructured.Unstructured{ks}}
	a := newTestAdapter(t, reader)
	live := obj(t, `
apiVersion: v1
kind: ConfigMap
metadata:
  name: cfg
  namespace: prod
  labels: {config: x}
  managedFields:
  - {manager: kustomize-controller, operation: Apply, apiVersion: v1, fieldsType: FieldsV1, fieldsV1: {f:data: {f:LOG_LEVEL: {}}}}
  - {manager: kubectl-client-side-apply, operation: Update, apiVersion: v1, fieldsType: FieldsV1, fieldsV1: {f:metadata: {f:labels: {f:config: {}}}}}
data: {LOG_LEVEL: debug}
`)
	desired := obj(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: cfg, namespace: prod}, data: {LOG_LEVEL: info}}`)
	d := drift("/data/LOG_LEVEL", model.Changed, "debug", "kubectl-edit/Update")
	d.Desired = "info"
	rep := judge(t, a, live, desired, d)
	if len(rep.Owners) != 1 || rep.Owners[0].Ref() != "Kustomization flux-system/apps" || !strings.Contains(rep.Owners[0].Via, "inventory") {
		t.Fatalf("owner = %+v, want Kustomization flux-system/apps via its inventory", rep.Owners)
	}
	if v := verdictAt(t, rep, "/data/LOG_LEVEL"); v.Kind != model.Reverted {
		t.Errorf("%s %q", v.Kind, v.Reason)
	}

	// Never written by kustomize-controller: no owner, and no LIST.
	stranger := live.DeepCopy()
	stranger.SetManagedFields(stranger.GetManagedFields()[1:])
	b := newTestAdapter(t, &testutil.Reader{})
	if o := b.ownerOf(context.Background(), stranger); o != nil {
		t.Errorf("owner of an object Flux never wrote: %+v", o)
	}
	if b.inventory != nil {
		t.Error("the inventories were read for an object Flux never wrote")
	}
}

// helm-controller reconciles its Helm release, not the objects its labels
// mark (make differential ENGINE=flux-helm seed 60903: a second client-side
// apply dropped the whole labels map, the tool found no owner and exited 1
// while helm-controller's drift detection judged the object). The release
// the meta.helm.sh annotations name leads to its HelmRelease: by the
// release the spec names (targetNamespace-name here) and by the one its
// history recorded; one LIST, and none for an object helm-controller never
// wrote.
func TestOwnerFromTheHelmReleaseWhenLabelsAreGone(t *testing.T) {
	hrs := []*unstructured.Unstructured{
		obj(t, `{apiVersion: helm.toolkit.fluxcd.io/v2, kind: HelmRelease, metadata: {name: web, namespace: flux-system},
  spec: {targetNamespace: prod, interval: 10m, chart: {spec: {chart: web, sourceRef: {kind: HelmRepository, name: charts}}}}}`),
		obj(t, `{apiVersion: helm.toolkit.fluxcd.io/v2, kind: HelmRelease, metadata: {name: api, namespace: team},
  spec: {releaseName: api-v2, interval: 10m, chart: {spec: {chart: api, sourceRef: {kind: HelmRepository, name: charts}}}},
  status: {history: [{name: api-v1, namespace: team, version: 3, chartName: api, chartVersion: 1.0.0, configDigest: x, firstDeployed: "2026-12-01T00:00:00Z", lastDeployed: "2026-12-01T00:00:00Z", status: deployed, digest: y}]}}`),
	}
	live := func(release, ns, manager string) *unstructured.Unstructured {
		return obj(t, `
apiVersion: v1
kind: ConfigMap
metadata:
  name: cfg
  namespace: `+ns+`
  annotations: {meta.helm.sh/release-name: `+release+`, meta.helm.sh/release-namespace: `+ns+`}
  managedFields:
  - {manager: `+manager+`, operation: Apply, apiVersion: v1, fieldsType: FieldsV1, fieldsV1: {f:data: {f:LOG_LEVEL: {}}}}
data: {LOG_LEVEL: debug}
`)
	}
	for _, c := range []struct {
		release, ns, want string
	}{
		{"prod-web", "prod", "HelmRelease flux-system/web"}, // the default release name of a targetNamespace
		{"api-v2", "team", "HelmRelease team/api"},          // spec.releaseName
		{"api-v1", "team", "HelmRelease team/api"},          // the release its history last recorded
		{"web", "prod", ""},                                 // a release no HelmRelease manages
	} {
		reader := &testutil.Reader{Objects: hrs}
		a := newTestAdapter(t, reader)
		o := a.ownerOf(context.Background(), live(c.release, c.ns, HelmManager))
		got := ""
		if o != nil {
			got = o.Ref()
			if !strings.Contains(o.Via, "meta.helm.sh") {
				t.Errorf("%s: via %q does not say how it was found", c.release, o.Via)
			}
		}
		if got != c.want {
			t.Errorf("release %s/%s: owner %q, want %q", c.ns, c.release, got, c.want)
		}
	}
	b := newTestAdapter(t, &testutil.Reader{Objects: hrs})
	if o := b.ownerOf(context.Background(), live("prod-web", "prod", "helm")); o != nil {
		t.Errorf("owner of an object helm-controller never wrote: %+v", o)
	}
	if b.releases != nil {
		t.Error("the HelmReleases were read for an object helm-controller never wrote")
	}
}
