// Package smd records which structured-merge-diff the Argo CD engine
// links, and why it is not the one in go.mod.
//
// Its subpackages fieldpath, merge, schema, typed and value are a copy of
// sigs.k8s.io/structured-merge-diff/v6 at Version, the version Argo CD
// v3.2.0 to v3.2.12 link (their go.mod). Pruned: the tests, the
// internal/ fixtures and CLI, the smd command, hack/ and the docs; no
// code was changed except the import paths. LICENSE beside this file is
// the module's.
//
// schemaconv is a copy of k8s.io/kube-openapi pkg/schemaconv at
// KubeOpenAPIVersion (openapi.go, proto_models.go, smd.go: what Argo CD
// v3.2 links) and of k8s.io/apimachinery v0.34.0
// pkg/util/managedfields/gvkparser.go, importing this copy's schema and
// typed; its additions are marked "drift:".
//
// Why a copy (issue 32): Argo CD's comparison depends on this library's
// version. managedFieldsManagers rules remove fields with
// typed.TypedValue.RemoveItems (argo-cd util/argo/managedfields/
// managed_fields.go Normalize): at Version, a map or list emptied by the
// removal stays {} or [] (structured-merge-diff PR #306, commit 9c093d1);
// v6.4.2 reverted it (commit f23ab84) and returns null, after which the
// three-way patch deletes the whole field (a probe's httpGet). Argo CD v3.1
// links sigs.k8s.io/structured-merge-diff/v4 v4.7.0, which also returns
// null there. The engine uses this copy for everything whose result depends
// on the library: managedFieldsManagers removal, the structured-merge and
// server-side diff field sets (internal/argocd normalize.go, ssa.go,
// ssd.go), and the schema they are typed with.
package smd

const (
	// Module is the module copied.
	Module = "sigs.k8s.io/structured-merge-diff/v6"
	// Version is the version copied: argo-cd v3.2.x go.mod's.
	Version = "v6.3.1-0.20251003215857-446d8398e19c"
	// GoModVersion is the version of Module that go.mod selected when the
	// copy was last checked against it (pin_test.go fails when go.mod moves,
	// so that the difference is looked at again).
	GoModVersion = "v6.4.2"
	// KubeOpenAPIVersion is the k8s.io/kube-openapi whose pkg/schemaconv
	// schemaconv copies (argo-cd v3.2.x go.mod's).
	KubeOpenAPIVersion = "v0.0.0-20250710124328-f3f2b991d03b"
)
