// Package render renders Argo CD Applications from a local checkout the way
// Argo CD's repo-server generates their manifests (argo-cd
// reposerver/repository/repository.go GenerateManifests): each source's
// type is detected as util/app/discovery does, a directory is read as
// findManifests reads it, a kustomization is edited as util/kustomize
// Build edits it and built with kustomize's own library (krusty), a chart
// is templated with Helm's library as util/helm runs `helm template`; then
// the tracking marks are set (util/argo/resource_tracking.go SetAppInstance)
// and, as the application controller does before it compares
// (controller/state.go DeduplicateTargetObjects), namespaced objects
// without a namespace get the destination namespace. It implements
// internal/render's Renderer.
//
// A Git source is read at its targetRevision from the local git history
// when the checkout is a git repository that has it (render.Env.ReadAt),
// else from the working tree, with a warning. It never imports github.com/argoproj/argo-cd (see
// internal/argocd's package comment): the few Application fields that
// rendering reads have their own small structs here.
package render

import (
	"context"
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-drift/kubectl-drift/internal/render"
)

// Group is Argo CD's API group; ApplicationKind the kind rendered.
const (
	Group           = "argoproj.io"
	ApplicationKind = "Application"
)

// Tracking is how Argo CD marks what it applies (argocd-cm
// application.resourceTrackingMethod, application.instanceLabelKey and
// installationID).
type Tracking struct {
	Method         string
	LabelKey       string
	InstallationID string
}

// Options are what the Argo CD engine package gives the renderer, so that
// the tracking rules have one home (internal/argocd).
type Options struct {
	// Owner names the Application a live object's tracking marks name.
	Owner func(live *unstructured.Unstructured) (namespace, name string, ok bool)
	// Tracking reads the tracking settings from argocd-cm's data (nil data:
	// Argo CD's defaults).
	Tracking func(data map[string]string) Tracking
	// Namespace is Argo CD's control-plane namespace, where argocd-cm is
	// and where an Application's instance name is its plain name.
	Namespace string
}

// Renderer renders Argo CD Applications.
type Renderer struct{ opts Options }

// New returns the Argo CD renderer.
func New(opts Options) *Renderer {
	if opts.Namespace == "" {
		opts.Namespace = "argocd"
	}
	return &Renderer{opts: opts}
}

// Handles says whether obj is an Argo CD Application.
func (*Renderer) Handles(obj *unstructured.Unstructured) bool {
	gvk := obj.GroupVersionKind()
	return gvk.Group == Group && gvk.Kind == ApplicationKind
}

// Owner is the Application the live object's tracking marks name.
func (r *Renderer) Owner(live *unstructured.Unstructured) (render.Ref, bool) {
	if r.opts.Owner == nil {
		return render.Ref{}, false
	}
	ns, name, ok := r.opts.Owner(live)
	if !ok {
		return render.Ref{}, false
	}
	return render.Ref{GVK: schema.GroupVersionKind{Group: Group, Version: "v1alpha1", Kind: ApplicationKind}, Namespace: ns, Name: name}, true
}

// ErrUnsupported marks a source Argo CD renders with something this
// renderer does not run (a config management plugin, jsonnet).
var ErrUnsupported = errors.New("not supported")

// Render returns the objects Argo CD would apply for the Application obj:
// the manifests of each of its sources in order, as GetRepoObjs
// concatenates them, with the tracking marks and namespaces set.
func (r *Renderer) Render(ctx context.Context, env *render.Env, obj *unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	app, sources, refs, err := parseSources(ctx, obj, env, true)
	if err != nil {
		return nil, err
	}
	cm, err := r.argocdCM(ctx, env)
	if err != nil {
		return nil, err
	}
	tracking := r.parseTracking(cm)
	instance := app.instanceName(r.opts.Namespace)
	var out []*unstructured.Unstructured
	for _, ms := range sources {
		s := ms.source
		objs, err := r.renderSource(ctx, app, &s, env, refs, cm)
		if err != nil {
			return nil, fmt.Errorf("%s (%s %s): %w", ms.field, s.RepoURL, s.Path, err)
		}
		for _, o := range flatten(objs) {
			if err := setTracking(o, tracking, instance, app.Spec.Destination.Namespace); err != nil {
				return nil, err
			}
			out = append(out, o)
		}
	}
	setNamespaces(out, app.Spec.Destination.Namespace)
	return out, nil
}

// parseSources reads the fields of an Application rendering needs, and
// its manifestSources; atRevision reads its Git sources at their
// targetRevision (render), else in the working tree (adopt, which edits
// it).
func parseSources(ctx context.Context, obj *unstructured.Unstructured, env *render.Env, atRevision bool) (*application, []manifestSource, map[string]string, error) {
	var app application
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &app); err != nil {
		return nil, nil, nil, fmt.Errorf("not a valid Application: %w", err)
	}
	app.Metadata.Name, app.Metadata.Namespace = obj.GetName(), obj.GetNamespace()
	sources, refs, err := app.manifestSources(env)
	if err != nil || !atRevision {
		return &app, sources, refs, err
	}
	for i := range sources {
		sources[i].source.readAt(ctx, env, &app, sources[i].field)
	}
	for i, s := range app.Spec.Sources {
		// A ref source's files ($name/values.yaml) are read at its own
		// targetRevision.
		if s.Ref != "" && s.gitSource() {
			s.readAt(ctx, env, &app, fmt.Sprintf("spec.sources[%d]", i))
			refs["$"+s.Ref] = s.root(env)
		}
	}
	return &app, sources, refs, nil
}

// manifestSource is a source that gives manifests, the field that holds
// it (spec.source, spec.sources[i]) and that field's JSON pointer.
type manifestSource struct {
	source         appSource
	field, pointer string
}

// manifestSources are the Application's sources that give manifests, in
// order, and the roots of its ref sources by "$name": `$name/...` value
// files resolve in the repository of the source that has ref: name
// (repository.go getReferencedSource; GetRepoObjs builds refSources only
// for multi-source Applications).
func (a *application) manifestSources(env *render.Env) ([]manifestSource, map[string]string, error) {
	if len(a.Spec.Sources) == 0 {
		if a.Spec.Source == nil {
			return nil, nil, errors.New("spec.source or spec.sources is required")
		}
		return []manifestSource{{source: *a.Spec.Source, field: "spec.source", pointer: "/spec/source"}}, map[string]string{}, nil
	}
	refs := map[string]string{}
	var out []manifestSource
	for i, s := range a.Spec.Sources {
		if s.Ref != "" {
			refs["$"+s.Ref] = env.SourceRoot(s.RepoURL)
		}
		// A ref-only source gives no manifests (repository.go
		// GenerateManifest: multiple sources, no path, not a chart).
		if s.Path == "" && s.Chart == "" && s.Ref != "" && !strings.HasPrefix(s.RepoURL, "oci://") {
			continue
		}
		out = append(out, manifestSource{source: s, field: fmt.Sprintf("spec.sources[%d]", i), pointer: fmt.Sprintf("/spec/sources/%d", i)})
	}
	return out, refs, nil
}

// argocdCM reads argocd-cm's data: from the cluster when there is one,
// else from the checkout; nil when there is none (Argo CD's defaults).
func (r *Renderer) argocdCM(ctx context.Context, env *render.Env) (map[string]string, error) {
	gvk := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	cm, err := env.Lookup(ctx, gvk, r.opts.Namespace, "argocd-cm")
	if err != nil && env.Reader != nil && apierrors.IsNotFound(err) {
		offline := *env
		offline.Reader = nil
		cm, err = offline.Lookup(ctx, gvk, r.opts.Namespace, "argocd-cm")
	}
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading argocd-cm (tracking and kustomize settings): %w", err)
	}
	data, _, _ := unstructured.NestedStringMap(cm.Object, "data")
	return data, nil
}

// parseTracking reads the tracking settings of argocd-cm's data.
func (r *Renderer) parseTracking(data map[string]string) Tracking {
	if r.opts.Tracking == nil {
		return Tracking{Method: "annotation", LabelKey: "app.kubernetes.io/instance"}
	}
	return r.opts.Tracking(data)
}

// flatten expands List objects and drops `items: null` lists, as
// GenerateManifests does.
func flatten(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		switch {
		case o == nil:
		case o.IsList():
			_ = o.EachListItem(func(item runtime.Object) error {
				if u, ok := item.(*unstructured.Unstructured); ok {
					out = append(out, u)
				}
				return nil
			})
		case isNullList(o):
		default:
			out = append(out, o)
		}
	}
	return out
}

// isNullList mirrors repository.go isNullList.
func isNullList(o *unstructured.Unstructured) bool {
	if _, ok := o.Object["spec"]; ok {
		return false
	}
	if _, ok := o.Object["status"]; ok {
		return false
	}
	v, ok := o.Object["items"]
	return ok && v == nil
}

const (
	annotationTrackingID     = "argocd.argoproj.io/tracking-id"
	annotationInstallationID = "argocd.argoproj.io/installation-id"
	// labelMaxLength is util/argo/resource_tracking.go LabelMaxLength.
	labelMaxLength = 63
)

// setTracking mirrors util/argo/resource_tracking.go SetAppInstance, which
// GenerateManifests runs on every object but CRDs: the tracking id names
// the object with the destination namespace for one without a namespace.
func setTracking(o *unstructured.Unstructured, t Tracking, instance, destNS string) error {
	gvk := o.GroupVersionKind()
	if gvk.Group == "apiextensions.k8s.io" && gvk.Kind == "CustomResourceDefinition" {
		return nil
	}
	annotate := func() {
		ns := o.GetNamespace()
		if ns == "" {
			ns = destNS
		}
		a := o.GetAnnotations()
		if a == nil {
			a = map[string]string{}
		}
		if t.InstallationID != "" {
			a[annotationInstallationID] = t.InstallationID
		} else {
			delete(a, annotationInstallationID)
		}
		a[annotationTrackingID] = fmt.Sprintf("%s:%s/%s:%s/%s", instance, gvk.Group, gvk.Kind, ns, o.GetName())
		o.SetAnnotations(a)
	}
	label := func(v string) {
		l := o.GetLabels()
		if l == nil {
			l = map[string]string{}
		}
		l[t.LabelKey] = v
		o.SetLabels(l)
	}
	switch t.Method {
	case "label":
		label(instance)
	case "annotation+label":
		annotate()
		v := instance
		if len(v) > labelMaxLength {
			v = strings.TrimRight(v[:labelMaxLength], "-_.")
			if v == "" {
				return errors.New("failed to set app instance label: unable to truncate label to not end with a special character")
			}
		}
		label(v)
	default:
		annotate()
	}
	return nil
}

// clusterScoped are the built-in kinds without a namespace. The controller
// asks the destination cluster's discovery (controller/state.go
// DeduplicateTargetObjects with IsNamespacedOrUnknown); rendering has no
// discovery, so other kinds count as namespaced (unknown kinds do there
// too), except custom kinds whose CRD in the render says Cluster.
var clusterScoped = map[schema.GroupKind]bool{
	{Kind: "Namespace"}: true, {Kind: "Node"}: true, {Kind: "PersistentVolume"}: true, {Kind: "ComponentStatus"}: true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}:                         true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}:                  true,
	{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}:                 true,
	{Group: "apiregistration.k8s.io", Kind: "APIService"}:                             true,
	{Group: "storage.k8s.io", Kind: "StorageClass"}:                                   true,
	{Group: "storage.k8s.io", Kind: "CSIDriver"}:                                      true,
	{Group: "storage.k8s.io", Kind: "CSINode"}:                                        true,
	{Group: "storage.k8s.io", Kind: "VolumeAttachment"}:                               true,
	{Group: "scheduling.k8s.io", Kind: "PriorityClass"}:                               true,
	{Group: "node.k8s.io", Kind: "RuntimeClass"}:                                      true,
	{Group: "networking.k8s.io", Kind: "IngressClass"}:                                true,
	{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration"}:     true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingWebhookConfiguration"}:   true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicy"}:        true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicyBinding"}: true,
	{Group: "admissionregistration.k8s.io", Kind: "MutatingAdmissionPolicy"}:          true,
	{Group: "admissionregistration.k8s.io", Kind: "MutatingAdmissionPolicyBinding"}:   true,
	{Group: "certificates.k8s.io", Kind: "CertificateSigningRequest"}:                 true,
	{Group: "certificates.k8s.io", Kind: "ClusterTrustBundle"}:                        true,
	{Group: "flowcontrol.apiserver.k8s.io", Kind: "FlowSchema"}:                       true,
	{Group: "flowcontrol.apiserver.k8s.io", Kind: "PriorityLevelConfiguration"}:       true,
	{Group: "resource.k8s.io", Kind: "DeviceClass"}:                                   true,
	{Group: "authentication.k8s.io", Kind: "TokenReview"}:                             true,
	{Group: "authorization.k8s.io", Kind: "SelfSubjectAccessReview"}:                  true,
	{Group: "authorization.k8s.io", Kind: "SubjectAccessReview"}:                      true,
	{Group: "authorization.k8s.io", Kind: "SelfSubjectRulesReview"}:                   true,
	{Group: "internal.apiserver.k8s.io", Kind: "StorageVersion"}:                      true,
	{Group: "networking.k8s.io", Kind: "IPAddress"}:                                   true,
	{Group: "networking.k8s.io", Kind: "ServiceCIDR"}:                                 true,
	{Group: "storagemigration.k8s.io", Kind: "StorageVersionMigration"}:               true,
	{Group: "resource.k8s.io", Kind: "ResourceSlice"}:                                 true,
	{Group: "authentication.k8s.io", Kind: "SelfSubjectReview"}:                       true,
}

// setNamespaces gives namespaced objects without a namespace the
// destination namespace.
func setNamespaces(objs []*unstructured.Unstructured, destNS string) {
	if destNS == "" {
		return
	}
	scoped := map[schema.GroupKind]bool{}
	for k, v := range clusterScoped {
		scoped[k] = v
	}
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		if gvk.Group != "apiextensions.k8s.io" || gvk.Kind != "CustomResourceDefinition" {
			continue
		}
		group, _, _ := unstructured.NestedString(o.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(o.Object, "spec", "names", "kind")
		scope, _, _ := unstructured.NestedString(o.Object, "spec", "scope")
		scoped[schema.GroupKind{Group: group, Kind: kind}] = scope == "Cluster"
	}
	for _, o := range objs {
		if o.GetNamespace() == "" && !scoped[o.GroupVersionKind().GroupKind()] {
			o.SetNamespace(destNS)
		}
	}
}
