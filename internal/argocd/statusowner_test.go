package argocd

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// untrackedCM is a ConfigMap whose tracking marks a kubectl client-side
// apply deleted: Argo CD's sync left its managedFields entry.
const untrackedCM = `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: shop
  managedFields:
  - {manager: argocd-controller, operation: Update, apiVersion: v1, fieldsType: FieldsV1, fieldsV1: {"f:data": {"f:size": {}}}}
  - {manager: kubectl-client-side-apply, operation: Update, apiVersion: v1, fieldsType: FieldsV1, fieldsV1: {"f:data": {"f:color": {}}}}
data: {color: red, size: large}
`

// listingApp is an Application whose status.resources lists
// ConfigMap shop/settings (and the annotation+label cases' label value).
func listingApp(t *testing.T, ns, name string) *unstructured.Unstructured {
	return testutil.Object(t, `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: `+name+`, namespace: `+ns+`}
spec:
  destination: {server: https://kubernetes.default.svc, namespace: shop}
  syncPolicy: {automated: {selfHeal: true}}
status:
  resources:
  - {version: v1, kind: ConfigMap, namespace: shop, name: settings, status: OutOfSync}
`)
}

func argoCM(t *testing.T, method string) *unstructured.Unstructured {
	return testutil.Object(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: argocd-cm, namespace: argocd}\ndata: {application.resourceTrackingMethod: "+method+"}\n")
}

func TestOwnerFromStatusResources(t *testing.T) {
	for _, tc := range []struct {
		name, method string
		labels       map[string]string
		objects      []*unstructured.Unstructured
		findUntrack  bool
		noArgoEntry  bool
		want, via    string
		gets         int
		lists        int
	}{
		{name: "annotation tracking, annotation gone: one LIST", method: "annotation",
			objects: []*unstructured.Unstructured{listingApp(t, "argocd", "shop")}, want: "argocd/shop", via: "status.resources", gets: 1, lists: 1},
		{name: "label tracking, label gone: one LIST", method: "label",
			objects: []*unstructured.Unstructured{listingApp(t, "team", "shop")}, want: "team/shop", via: "status.resources", gets: 1, lists: 1},
		{name: "annotation+label, label kept: GET of the labelled Application, no LIST", method: "annotation+label",
			labels:  map[string]string{DefaultInstanceLabelKey: "shop"},
			objects: []*unstructured.Unstructured{listingApp(t, "argocd", "other"), listingApp(t, "argocd", "shop")}, want: "argocd/shop", via: "label", gets: 2, lists: 0},
		{name: "no Argo CD managedFields entry: no LIST, no owner", method: "annotation", noArgoEntry: true,
			objects: []*unstructured.Unstructured{listingApp(t, "argocd", "shop")}, gets: 1, lists: 0},
		{name: "--engine argocd: LIST without an Argo CD entry", method: "annotation", noArgoEntry: true, findUntrack: true,
			objects: []*unstructured.Unstructured{listingApp(t, "argocd", "shop")}, want: "argocd/shop", via: "status.resources", gets: 1, lists: 1},
		{name: "not listed by any Application", method: "annotation", gets: 1, lists: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			live := testutil.Object(t, untrackedCM)
			if tc.noArgoEntry {
				testutil.KeepManagers(live, func(m string) bool { return !IsManager(m) })
			}
			live.SetLabels(tc.labels)
			r := &testutil.Reader{Objects: append(tc.objects, argoCM(t, tc.method))}
			a, err := New(Options{Reader: r, OneObject: true, FindUntracked: tc.findUntrack})
			if err != nil {
				t.Fatal(err)
			}
			a.Load(context.Background())
			app := a.ReadOwner(context.Background(), live)
			o := a.Owner(live)
			got := ""
			if o != nil {
				got = o.Namespace + "/" + o.Name
				if !o.Found || app == nil || !strings.Contains(o.Via, tc.via) {
					t.Errorf("owner %+v (Application read: %v), want found via %q", o, app != nil, tc.via)
				}
			}
			if got != tc.want {
				t.Errorf("owner %q, want %q", got, tc.want)
			}
			if r.Gets != tc.gets || len(r.Lists) != tc.lists {
				t.Errorf("reads: %d GET, %d LIST; want %d, %d", r.Gets, len(r.Lists), tc.gets, tc.lists)
			}
		})
	}
}

func TestOwnerMarked(t *testing.T) {
	live := testutil.Object(t, untrackedCM)
	long := strings.Repeat("a", 60) + "-x-yz"
	for _, tc := range []struct {
		method, owner, ownerNS string
		ann, label             string
	}{
		{method: "annotation", owner: "shop", ownerNS: "argocd", ann: "shop:/ConfigMap:shop/settings"},
		{method: "label", owner: "shop", ownerNS: "team", label: "team_shop"},
		{method: "annotation+label", owner: long, ownerNS: "argocd", ann: long + ":/ConfigMap:shop/settings", label: strings.Repeat("a", 60) + "-x"},
	} {
		t.Run(tc.method, func(t *testing.T) {
			a, err := New(Options{})
			if err != nil {
				t.Fatal(err)
			}
			s := DefaultSettings()
			s.TrackingMethod = tc.method
			o := a.ownerMarked(live, &model.Owner{Namespace: tc.ownerNS, Name: tc.owner}, nil, s)
			if got := o.GetAnnotations()[AnnotationTrackingID]; got != tc.ann {
				t.Errorf("annotation %q, want %q", got, tc.ann)
			}
			if got := o.GetLabels()[DefaultInstanceLabelKey]; got != tc.label {
				t.Errorf("label %q, want %q", got, tc.label)
			}
			if live.GetAnnotations()[AnnotationTrackingID] != "" || live.GetLabels() != nil {
				t.Error("ownerMarked changed live")
			}
		})
	}
}
