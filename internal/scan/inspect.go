package scan

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/kubectl-drift/kubectl-drift/internal/drift"
	"github.com/kubectl-drift/kubectl-drift/internal/engine"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/redact"
)

// lightObject is the part of an object the first pass needs: who owns it
// (labels, annotations) and which managers wrote it. Decoding only this
// skips building maps for spec, data and the FieldsV1 sets of the clean
// majority of objects; only candidates are decoded in full.
type lightObject struct {
	Metadata struct {
		Name          string            `json:"name"`
		Namespace     string            `json:"namespace"`
		UID           string            `json:"uid"`
		Labels        map[string]string `json:"labels"`
		Annotations   map[string]string `json:"annotations"`
		ManagedFields []struct {
			Manager     string `json:"manager"`
			Operation   string `json:"operation"`
			Subresource string `json:"subresource"`
		} `json:"managedFields"`
	} `json:"metadata"`
}

// Inspector does the per-object work of a scan: decide whether an object is
// GitOps-owned, whether any non-GitOps manager wrote it, and if so which
// leaf fields it owns. It holds no per-object state and is safe for
// concurrent use.
type Inspector struct {
	// Adapters decide ownership (Owner) and judge drift (Judge); only
	// those of the selected engine(s).
	Adapters []model.Adapter
	// IncludeControllers also reports fields owned only by built-in
	// controllers (kube-controller-manager's revision annotations...),
	// which are bookkeeping, not drift, in nearly every cluster.
	IncludeControllers bool
	// Desired, when set, gives a candidate's desired state (scan --source:
	// its owner rendered from a checkout), compared as explain compares
	// -f. A nil object infers drift from managedFields as without it; an
	// error skips the object with the error's text as a warning (the
	// same text for every object of an owner that failed to render is one
	// warning).
	Desired func(ctx context.Context, live *unstructured.Unstructured) (*unstructured.Unstructured, model.DesiredSource, error)
	// Secrets, when set, masks what Desired read besides each object's own
	// Secret values (a Secret a render substituted): shared by every
	// object, it only ever masks more.
	Secrets *redact.Scrubber
}

// Candidate is an object the first pass kept: GitOps-owned and written by a
// manager that is not the engine.
type Candidate struct {
	Kind   Kind
	Owners []ownerOf
	// Light is the metadata-only object the owners were read from.
	Light *unstructured.Unstructured
	// Clean: no relevant manager wrote it, an owner's engine asked to
	// judge it anyway (engine.InventoryJudge) from its metadata.
	Clean bool
}

type ownerOf struct {
	adapter model.Adapter
	owner   *model.Owner
}

// Precheck decodes raw lightly. It returns the candidate, or nil when the
// object is not GitOps-owned or only GitOps engines (and, unless
// IncludeControllers, built-in controllers and status writers) manage it
// and no owner's engine asks to judge it anyway (engine.InventoryJudge,
// answered from labels and annotations); and whether the object is
// GitOps-owned at all.
func (in *Inspector) Precheck(kind Kind, raw []byte) (cand *Candidate, owned bool, err error) {
	md, err := decodeLight(raw)
	if err != nil {
		return nil, false, fmt.Errorf("decode %s: %w", kind.GVR.GroupResource(), err)
	}
	light := lightUnstructured(kind, &md)
	owners := in.owners(light)
	if len(owners) == 0 {
		return nil, false, nil
	}
	for _, e := range md.managers {
		if in.relevant(e.manager, e.operation, e.subresource) {
			return &Candidate{Kind: kind, Owners: owners, Light: light}, true, nil
		}
	}
	if judgesClean(owners, light) {
		return &Candidate{Kind: kind, Owners: owners, Light: light, Clean: true}, true, nil
	}
	return nil, true, nil
}

// lightMeta is what the first pass reads of an object, from JSON
// (lightObject) or protobuf (protoLight).
type lightMeta struct {
	name, namespace     string
	labels, annotations map[string]any
	managers            []lightManager
}

type lightManager struct{ manager, operation, subresource string }

// decodeLight reads the first pass's metadata from either encoding.
func decodeLight(raw []byte) (lightMeta, error) {
	if isProto(raw) {
		return protoLight(raw)
	}
	var lo lightObject
	if err := json.Unmarshal(raw, &lo); err != nil {
		return lightMeta{}, err
	}
	md := lightMeta{name: lo.Metadata.Name, namespace: lo.Metadata.Namespace}
	if len(lo.Metadata.Labels) > 0 {
		md.labels = stringMap(lo.Metadata.Labels)
	}
	if len(lo.Metadata.Annotations) > 0 {
		md.annotations = stringMap(lo.Metadata.Annotations)
	}
	for _, e := range lo.Metadata.ManagedFields {
		md.managers = append(md.managers, lightManager{e.Manager, e.Operation, e.Subresource})
	}
	return md, nil
}

// judgesClean says whether an owner's engine asks to judge an object no
// relevant manager wrote (drift.JudgesClean): a field deleted live, a
// status its controller recorded.
func judgesClean(owners []ownerOf, obj *unstructured.Unstructured) bool {
	for _, o := range owners {
		if drift.JudgesClean(obj, o.adapter) {
			return true
		}
	}
	return false
}

// PrecheckObject is Precheck for an object already decoded (watch events).
func (in *Inspector) PrecheckObject(kind Kind, obj *unstructured.Unstructured) (cand *Candidate, owned bool) {
	owners := in.owners(obj)
	if len(owners) == 0 {
		return nil, false
	}
	for _, e := range obj.GetManagedFields() {
		if in.relevant(e.Manager, string(e.Operation), e.Subresource) {
			return &Candidate{Kind: kind, Owners: owners, Light: obj}, true
		}
	}
	if judgesClean(owners, obj) {
		return &Candidate{Kind: kind, Owners: owners, Light: obj}, true
	}
	return nil, true
}

func (in *Inspector) owners(obj *unstructured.Unstructured) []ownerOf {
	var owners []ownerOf
	for _, a := range in.Adapters {
		if o := a.Owner(obj); o != nil {
			owners = append(owners, ownerOf{adapter: a, owner: o})
		}
	}
	return owners
}

// relevant says whether a manager's fields can be drift: not a GitOps
// engine, not a status writer (status is never desired state: Argo CD 3
// ignores /status, Flux never applies it), and not a built-in controller
// unless asked.
func (in *Inspector) relevant(manager, operation, subresource string) bool {
	return drift.Relevant(manager, operation, subresource, in.IncludeControllers)
}

func lightUnstructured(kind Kind, m *lightMeta) *unstructured.Unstructured {
	md := map[string]any{"name": m.name}
	if m.namespace != "" {
		md["namespace"] = m.namespace
	}
	if len(m.labels) > 0 {
		md["labels"] = m.labels
	}
	if len(m.annotations) > 0 {
		md["annotations"] = m.annotations
	}
	apiVersion := kind.GVK.Version
	if kind.GVK.Group != "" {
		apiVersion = kind.GVK.Group + "/" + kind.GVK.Version
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": apiVersion,
		"kind":       kind.GVK.Kind,
		"metadata":   md,
	}}
}

func stringMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// Decode fully decodes raw the way the API machinery decodes unstructured
// objects (integers stay int64), and sets apiVersion/kind, which items of
// typed lists lack. raw is JSON or a protobuf object message (decoded
// through its Go type into the same JSON; see decodeProto).
func Decode(kind Kind, raw []byte) (*unstructured.Unstructured, error) {
	if isProto(raw) {
		m, err := decodeProto(kind, raw)
		if err != nil {
			return nil, err
		}
		obj := &unstructured.Unstructured{Object: m}
		obj.SetGroupVersionKind(kind.GVK)
		return obj, nil
	}
	obj := &unstructured.Unstructured{}
	if err := utiljson.Unmarshal(raw, &obj.Object); err != nil {
		return nil, fmt.Errorf("decode %s: %w", kind.GVR.GroupResource(), err)
	}
	if obj.Object == nil {
		return nil, fmt.Errorf("decode %s: not an object", kind.GVR.GroupResource())
	}
	obj.SetGroupVersionKind(kind.GVK)
	return obj, nil
}

// Explain runs the pipeline (drift.Explain, the one explain uses, so that
// scan and explain agree on every object) on a candidate, decoded in full.
// The report is nil when nothing drifted. Only the candidate's owners
// judge; judgeMu serializes them (the adapters share caches). An adapter
// error is a warning: the drift is still reported. A Secret's values never
// leave the scan: drift values at secret paths are masked, and notes and
// warnings that quote one (a jq error) are scrubbed.
func (in *Inspector) Explain(ctx context.Context, judgeMu sync.Locker, cand *Candidate, obj *unstructured.Unstructured) (*model.Report, []string, error) {
	cleanAsked := cand.Clean && in.Desired == nil
	if cleanAsked && !judgesClean(cand.Owners, obj) {
		// Asked again on the decoded object before managedFields are
		// parsed: inference cannot find drift no relevant manager wrote,
		// and most such objects hold what their engine applied (measured:
		// BenchmarkScanCleanArgo).
		return nil, nil, nil
	}
	secrets := in.Secrets
	if secrets == nil {
		secrets = redact.NewScrubber()
	}
	secrets.Add(obj.Object)
	var warns []string
	var desired *unstructured.Unstructured
	var src model.DesiredSource
	if in.Desired != nil {
		var err error
		if desired, src, err = in.Desired(ctx, obj); err != nil {
			return nil, []string{secrets.String(err.Error())}, nil
		}
	}
	req := drift.Request{
		Live:               obj,
		Desired:            desired,
		Source:             src,
		Engine:             engine.Auto,
		IncludeControllers: in.IncludeControllers,
		Inventory:          true,
		CleanAsked:         cleanAsked,
		Secrets:            secrets,
		JudgeLock:          judgeMu,
		JudgeFailed: func(e model.Engine, err error) {
			warns = append(warns, secrets.String(fmt.Sprintf("%s: %s verdicts unknown: %v", drift.ResourceID(obj), e, err)))
		},
	}
	for _, o := range cand.Owners {
		req.Adapters = append(req.Adapters, o.adapter)
		req.Owners = append(req.Owners, *o.owner)
	}
	rep, err := drift.Explain(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	return rep, warns, nil
}

// culprit is the manager a drifted field is attributed to.
func (in *Inspector) culprit(fd model.FieldDrift) model.ManagerRef {
	return drift.Culprit(fd, in.IncludeControllers)
}
