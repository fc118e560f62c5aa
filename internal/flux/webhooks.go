package flux

import (
	"context"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-drift/kubectl-drift/internal/diff"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

var mutatingWebhookGVK = schema.GroupVersionKind{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "MutatingWebhookConfiguration"}

// readWebhooks decides, with -f, whether any mutating admission webhook
// could rewrite this object when kustomize-controller applies it (an
// UPDATE): without one, a value only kustomize-controller's own apply
// wrote that differs from the manifest can only come from an older
// manifest, and the next apply writes the new one (make differential seed
// 40131: a label Git changed, -f said unknown, the controller changed it).
// Asked only when such a field exists; a webhook's selectors and match
// conditions are not evaluated (it may match), nor is a list that cannot be
// read (then it stays unknown).
func (a *Adapter) readWebhooks(ctx context.Context, j *judgment, rep *model.Report) {
	if j.helm || j.merged != nil || j.desired == nil || j.live == nil || a.reader == nil ||
		!slices.ContainsFunc(rep.Drifts, func(d model.FieldDrift) bool { return d.Change == model.Changed && onlyFluxApplies(d.Managers) }) {
		return
	}
	list, ok := a.mutatingWebhooks(ctx)
	if !ok {
		return
	}
	gvk := j.live.GroupVersionKind()
	for i := range list {
		if webhookMayMutate(&list[i], gvk) {
			return
		}
	}
	j.noMutatingWebhook = true
}

// mutatingWebhooks lists the cluster's MutatingWebhookConfigurations once
// per adapter (a scan judges many objects: one LIST, not one per object);
// a failed read (Forbidden) is remembered too, and ok is false.
func (a *Adapter) mutatingWebhooks(ctx context.Context) (list []unstructured.Unstructured, ok bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.webhooksRead {
		a.webhooksRead = true
		var err error
		a.webhooks, err = a.reader.List(ctx, mutatingWebhookGVK, "", "")
		a.webhooksOK = err == nil
	}
	return a.webhooks, a.webhooksOK
}

// webhookMayMutate says whether a rule of a MutatingWebhookConfiguration
// may intercept an UPDATE of an object of gvk (k8s.io/apiserver
// pkg/admission/plugin/webhook/predicates/rules Matcher: operations,
// apiGroups, apiVersions, resources). The resource is the kind's plural as
// built-in kinds name it (meta.UnsafeGuessKindToResource); for other
// groups any rule of the group may match, whatever its resources.
func webhookMayMutate(cfg *unstructured.Unstructured, gvk schema.GroupVersionKind) bool {
	webhooks, _, _ := unstructured.NestedSlice(cfg.Object, "webhooks")
	plural, _ := meta.UnsafeGuessKindToResource(gvk)
	for _, w := range webhooks {
		wm, _ := w.(map[string]any)
		rules, _, _ := unstructured.NestedSlice(wm, "rules")
		for _, r := range rules {
			rm, _ := r.(map[string]any)
			if !anyOf(rm, "operations", "UPDATE") || !anyOf(rm, "apiGroups", gvk.Group) || !anyOf(rm, "apiVersions", gvk.Version) {
				continue
			}
			if !diff.IsBuiltinGroup(gvk.Group) || anyOf(rm, "resources", plural.Resource) {
				return true
			}
		}
	}
	return false
}

// anyOf says whether the string list at key holds want or the wildcard
// "*" (a resource "*" or "*/sub" covers every resource).
func anyOf(m map[string]any, key, want string) bool {
	vs, _, _ := unstructured.NestedStringSlice(m, key)
	for _, v := range vs {
		if v == "*" || v == want || strings.HasPrefix(v, "*/") && key == "resources" {
			return true
		}
	}
	return false
}
