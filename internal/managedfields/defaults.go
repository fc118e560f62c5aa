package managedfields

import (
	"encoding/json"
	"slices"
	"strconv"

	"github.com/kubectl-drift/kubectl-drift/internal/model/jsonpointer"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// LastAppliedAnnotation is where client-side apply (kubectl apply, Argo CD's
// default sync) keeps the configuration it applied.
const LastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// ClientSideDefault reports whether the field at pointer in obj (the object
// the index was parsed from) is a default the API server filled in rather
// than a value anybody wrote: every owner is a client-side applier writing
// through an Update (a GitOps engine, or the manager that wrote the
// last-applied annotation, e.g. kubectl-client-side-apply), and the
// last-applied configuration does not name the field.
//
// An Update that creates an object or a subtree is charged with every
// default the API server fills in within it: a Deployment created by
// `kubectl apply --field-manager=argocd-controller` has argocd-controller
// owning revisionHistoryLimit, strategy, dnsPolicy, imagePullPolicy...
// (testdata/deployment-csa-then-image-set.yaml). Server-side apply is never
// charged with defaults, so Apply owners always mean intent.
func (ix *Index) ClientSideDefault(obj *unstructured.Unstructured, pointer string) bool {
	if ix.Empty() || obj == nil {
		return false
	}
	tokens, err := jsonpointer.Parse(pointer)
	if err != nil {
		return false
	}
	owners := ix.Owners(obj, pointer)
	if len(owners) == 0 {
		return false
	}
	la, appliers := ix.lastApplied(obj)
	for _, o := range owners {
		if o.Operation != "Update" || !(IsGitOpsManager(o.Manager) || slices.Contains(appliers, o.Manager)) {
			return false
		}
	}
	return la == nil || !ix.namedIn(la, obj, tokens)
}

// InLastApplied reports whether the field at pointer in obj is named in
// obj's last-applied-configuration: client-side apply (and Argo CD's 3-way
// diff, gitops-engine pkg/diff ThreeWayDiff) removes such a field once the
// applied configuration no longer has it.
func (ix *Index) InLastApplied(obj *unstructured.Unstructured, pointer string) bool {
	if obj == nil {
		return false
	}
	tokens, err := jsonpointer.Parse(pointer)
	if err != nil {
		return false
	}
	la, _ := ix.lastApplied(obj)
	return la != nil && ix.namedIn(la, obj, tokens)
}

// lastApplied decodes obj's last-applied-configuration and names the
// managers that own the annotation. Nothing is cached: an Index is shared
// read-only, and callers ask about a few added fields per object.
func (ix *Index) lastApplied(obj *unstructured.Unstructured) (map[string]any, []string) {
	raw := obj.GetAnnotations()[LastAppliedAnnotation]
	if raw == "" {
		return nil, nil
	}
	var la map[string]any
	if json.Unmarshal([]byte(raw), &la) != nil {
		return nil, nil
	}
	var appliers []string
	for _, o := range ix.Owners(obj, jsonpointer.Join("metadata", "annotations", LastAppliedAnnotation)) {
		appliers = append(appliers, o.Manager)
	}
	return la, appliers
}

// namedIn reports whether the field of obj at tokens is also in la. List
// items are matched as the API server identifies them: by key for
// associative lists, by value for sets, by index otherwise.
func (ix *Index) namedIn(la any, obj *unstructured.Unstructured, tokens []string) bool {
	var live any = obj.Object
	for i, t := range tokens {
		switch x := la.(type) {
		case map[string]any:
			next, ok := x[t]
			if !ok {
				return false
			}
			la = next
			m, _ := live.(map[string]any)
			live = m[t]
		case []any:
			l, _ := live.([]any)
			idx, err := strconv.Atoi(t)
			if err != nil || idx < 0 || idx >= len(l) {
				return false
			}
			lt := ix.ListType(obj, jsonpointer.Join(tokens[:i]...))
			want := itemElement(lt, l[idx], idx)
			match := -1
			for j, item := range x {
				if itemElement(lt, item, j).Equals(want) {
					match = j
					break
				}
			}
			if match < 0 {
				return false
			}
			la, live = x[match], l[idx]
		default:
			return false
		}
	}
	return la != nil
}
