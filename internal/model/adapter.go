package model

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Reader is the read-only view of a cluster that adapters get. It never
// writes: the tool works with get/list-only RBAC.
type Reader interface {
	// Get reads one object. A NotFound or Forbidden error is returned as the
	// API server's StatusError so callers can tell them apart.
	Get(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error)
	// List reads every object of a kind (paginated), in one namespace or in
	// all when namespace is "". labelSelector may be "".
	List(ctx context.Context, gvk schema.GroupVersionKind, namespace, labelSelector string) ([]unstructured.Unstructured, error)
}

// JudgeInput is what an adapter needs to judge one resource.
type JudgeInput struct {
	// Live is the object as the API server has it, with managedFields.
	Live *unstructured.Unstructured
	// Desired is the desired state, or nil when it was inferred from
	// managedFields (then Report.DesiredSource says so).
	Desired *unstructured.Unstructured
	// Report already holds the field drifts; the adapter adds its owner,
	// one verdict per drift and notes about its rules.
	Report *Report
	// ManagedFields is Live's parsed managedFields (a
	// *managedfields.Index) when the pipeline parsed them already, so an
	// adapter does not parse them again (issue 35: the second parse was a
	// tenth of a drifted object's cost in scan); nil: parse Live's.
	ManagedFields any
}

// Adapter translates one engine's objects and semantics into the model.
// Commands hold a list of adapters and never import their internals.
type Adapter interface {
	// Engine names the engine.
	Engine() Engine
	// Owner returns the engine object that the labels/annotations of obj
	// name as its reconciler, or nil. It does not read the cluster.
	Owner(obj *unstructured.Unstructured) *Owner
	// Judge adds this engine's owner, verdicts and rule notes to in.Report.
	// A rule that cannot be evaluated becomes an error note, not an error;
	// an error return means nothing of this engine could be evaluated.
	Judge(ctx context.Context, in JudgeInput) error
	// Rules returns every rule the adapter knows (from files and/or cluster).
	Rules(ctx context.Context) ([]Rule, error)
}
