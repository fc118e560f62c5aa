package argocd

import (
	"bytes"
	"crypto/md5" //nolint:gosec // an ordering key, as in Kubernetes' endpoints util; not security
	"sort"

	"github.com/davecgh/go-spew/spew"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// normalizeEndpoints mirrors gitops-engine normalizeEndpoint: ports without
// a protocol get TCP, and subsets, their addresses and ports are sorted the
// way Kubernetes' endpoints util SortSubsets sorts them, so the endpoints
// controller's ordering is not drift.
func normalizeEndpoints(un *unstructured.Unstructured) {
	//nolint:staticcheck // Endpoints is deprecated, Argo CD still normalizes it.
	var ep corev1.Endpoints
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(un.Object, &ep); err != nil {
		return
	}
	for s := range ep.Subsets {
		for p := range ep.Subsets[s].Ports {
			if ep.Subsets[s].Ports[p].Protocol == "" {
				ep.Subsets[s].Ports[p].Protocol = corev1.ProtocolTCP
			}
		}
	}
	sortSubsets(ep.Subsets)
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&ep)
	if err != nil {
		return
	}
	un.Object = obj
}

func sortSubsets(subsets []corev1.EndpointSubset) {
	for i := range subsets {
		ss := &subsets[i]
		sort.Slice(ss.Addresses, func(a, b int) bool { return lessAddress(&ss.Addresses[a], &ss.Addresses[b]) })
		sort.Slice(ss.NotReadyAddresses, func(a, b int) bool {
			return lessAddress(&ss.NotReadyAddresses[a], &ss.NotReadyAddresses[b])
		})
		sort.Slice(ss.Ports, func(a, b int) bool {
			return bytes.Compare(deepHash(ss.Ports[a]), deepHash(ss.Ports[b])) < 0
		})
	}
	sort.Slice(subsets, func(a, b int) bool { return bytes.Compare(deepHash(subsets[a]), deepHash(subsets[b])) < 0 })
}

func lessAddress(a, b *corev1.EndpointAddress) bool {
	if c := bytes.Compare([]byte(a.IP), []byte(b.IP)); c != 0 {
		return c < 0
	}
	if b.TargetRef == nil {
		return false
	}
	if a.TargetRef == nil {
		return true
	}
	return a.TargetRef.UID < b.TargetRef.UID
}

// deepHash is Kubernetes' hashutil.DeepHashObject with md5.
func deepHash(obj any) []byte {
	h := md5.New() //nolint:gosec // see import
	printer := spew.ConfigState{Indent: " ", SortKeys: true, DisableMethods: true, SpewKeys: true}
	// hash.Hash's Write never returns an error (its documented contract).
	_, _ = printer.Fprintf(h, "%#v", obj)
	return h.Sum(nil)
}
