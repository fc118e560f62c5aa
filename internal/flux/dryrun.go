package flux

import (
	"context"
	"errors"
	"fmt"

	"github.com/fluxcd/pkg/ssa/normalize"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ssaDryRun is the request kustomize-controller (fluxcd/pkg ssa
// manager_apply.go dryRunApply) and helm-controller (ssa jsondiff
// unstructured.go Unstructured) make before deciding about drift: a
// server-side apply with dryRun=All, force and their field manager. It
// needs patch RBAC and persists nothing.
func (a *Adapter) ssaDryRun(ctx context.Context, obj *unstructured.Unstructured, manager string) (*unstructured.Unstructured, error) {
	c, err := a.kubeClient()
	if err != nil {
		return nil, err
	}
	out := obj.DeepCopy()
	// Flux sends what it built, without server-owned metadata.
	unstructured.RemoveNestedField(out.Object, "metadata", "managedFields")
	unstructured.RemoveNestedField(out.Object, "metadata", "resourceVersion")
	unstructured.RemoveNestedField(out.Object, "metadata", "uid")
	unstructured.RemoveNestedField(out.Object, "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(out.Object, "status")
	if err := normalize.Unstructured(out); err != nil {
		return nil, err
	}
	//nolint:staticcheck // client.Apply with an unstructured object is what Flux itself sends.
	if err := c.Patch(ctx, out, client.Apply, client.DryRunAll, client.ForceOwnership, client.FieldOwner(manager)); err != nil {
		return nil, err
	}
	if err := normalize.DryRunUnstructured(out); err != nil {
		return nil, err
	}
	return out, nil
}

// kubeClient returns the adapter's write-capable client (dry-runs only),
// created on first use.
func (a *Adapter) kubeClient() (client.Client, error) {
	if a.restConfig == nil {
		return nil, errors.New("no cluster connection")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.client == nil {
		var opts client.Options
		if a.restMapper != nil {
			m, err := a.restMapper()
			if err != nil {
				return nil, fmt.Errorf("creating client: %w", err)
			}
			opts.Mapper = m
		}
		c, err := client.New(a.restConfig, opts)
		if err != nil {
			return nil, fmt.Errorf("creating client: %w", err)
		}
		a.client = c
	}
	return a.client, nil
}
