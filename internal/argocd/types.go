// Package argocd is the Argo CD adapter: it reads Applications,
// ApplicationSet templates, argocd-cm and argocd-cmd-params-cm through its own
// small typed structs, mirrors Argo CD's normalization and diff semantics with
// the libraries Argo itself uses (gojq, json-patch, structured-merge-diff,
// gobwas/glob), and turns them into the common drift model.
//
// It never imports github.com/argoproj/argo-cd: that module pins k8s.io to
// v0.34 and drags in ~1,300 packages (DESIGN.md). Fidelity is proven instead
// by the parity corpus in testdata/parity, whose goldens are written by Argo
// CD's own code (hack/argoparity).
package argocd

import (
	"strings"
)

// Well-known names, as Argo CD spells them (common/common.go).
const (
	// AnnotationTrackingID is the v3 default tracking annotation.
	AnnotationTrackingID = "argocd.argoproj.io/tracking-id"
	// AnnotationCompareOptions holds IgnoreExtraneous, ServerSideDiff=true...
	AnnotationCompareOptions = "argocd.argoproj.io/compare-options"
	// AnnotationSyncOptions holds Prune=false, ServerSideApply=true...
	AnnotationSyncOptions = "argocd.argoproj.io/sync-options"
	// DefaultInstanceLabelKey is application.instanceLabelKey's default.
	DefaultInstanceLabelKey = "app.kubernetes.io/instance"
	// DefaultNamespace is the control-plane namespace of a default install.
	DefaultNamespace = "argocd"
	// SSAManager is the field manager of Argo CD's syncs.
	SSAManager = "argocd-controller"
	// LastAppliedAnnotation drives the 3-way diff.
	LastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"
)

// Tracking methods of application.resourceTrackingMethod.
const (
	TrackingAnnotation         = "annotation"
	TrackingLabel              = "label"
	TrackingAnnotationAndLabel = "annotation+label"
)

// Application is the part of argoproj.io/v1alpha1 Application that decides
// drift verdicts (pkg/apis/application/v1alpha1/types.go).
type Application struct {
	APIVersion string            `json:"apiVersion,omitempty"`
	Kind       string            `json:"kind,omitempty"`
	Metadata   ObjectMeta        `json:"metadata"`
	Spec       ApplicationSpec   `json:"spec"`
	Status     ApplicationStatus `json:"status,omitempty"`
}

// ApplicationStatus is what the application-controller recorded at its
// last comparison: the sync status of each resource it manages.
type ApplicationStatus struct {
	Resources []ResourceStatus `json:"resources,omitempty"`
}

// ResourceStatus is one status.resources entry (argo-cd
// pkg/apis/application/v1alpha1 ResourceStatus): Status is Synced,
// OutOfSync or Unknown.
type ResourceStatus struct {
	Group     string `json:"group,omitempty"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	Status    string `json:"status,omitempty"`
}

// syncStatusOf is the sync status the controller recorded for the object,
// "" when the Application lists no such resource.
func (app *Application) syncStatusOf(group, kind, namespace, name string) string {
	for _, r := range app.Status.Resources {
		if r.Group == group && r.Kind == kind && r.Namespace == namespace && r.Name == name {
			return r.Status
		}
	}
	return ""
}

// ObjectMeta is the metadata we need from Argo CD objects.
type ObjectMeta struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
	// ResourceVersion tells a changed Application from the one read
	// (UpdateOwner); "" for one read from a file.
	ResourceVersion string            `json:"resourceVersion,omitempty"`
	Labels          map[string]string `json:"labels,omitempty"`
	Annotations     map[string]string `json:"annotations,omitempty"`
}

// ApplicationSpec holds destination, ignore rules and sync policy.
type ApplicationSpec struct {
	Project           string                      `json:"project,omitempty"`
	Destination       Destination                 `json:"destination,omitempty"`
	IgnoreDifferences []ResourceIgnoreDifferences `json:"ignoreDifferences,omitempty"`
	SyncPolicy        *SyncPolicy                 `json:"syncPolicy,omitempty"`
}

// Destination is where an Application deploys.
type Destination struct {
	Server    string `json:"server,omitempty"`
	Name      string `json:"name,omitempty"`
	Namespace string `json:"namespace,omitempty"`
}

// ResourceIgnoreDifferences is one spec.ignoreDifferences entry. Group and
// Kind are gobwas globs; Name and Namespace match exactly, empty = any.
type ResourceIgnoreDifferences struct {
	Group                 string   `json:"group,omitempty"`
	Kind                  string   `json:"kind"`
	Name                  string   `json:"name,omitempty"`
	Namespace             string   `json:"namespace,omitempty"`
	JSONPointers          []string `json:"jsonPointers,omitempty"`
	JQPathExpressions     []string `json:"jqPathExpressions,omitempty"`
	ManagedFieldsManagers []string `json:"managedFieldsManagers,omitempty"`
}

// SyncPolicy is spec.syncPolicy.
type SyncPolicy struct {
	Automated   *SyncPolicyAutomated `json:"automated,omitempty"`
	SyncOptions []string             `json:"syncOptions,omitempty"`
}

// SyncPolicyAutomated is spec.syncPolicy.automated.
type SyncPolicyAutomated struct {
	Prune    bool  `json:"prune,omitempty"`
	SelfHeal bool  `json:"selfHeal,omitempty"`
	Enabled  *bool `json:"enabled,omitempty"`
}

// AutoSync mirrors SyncPolicy.IsAutomatedSyncEnabled (types.go): automated
// present and enabled not set to false.
func (a *Application) AutoSync() bool {
	p := a.Spec.SyncPolicy
	return p != nil && p.Automated != nil && (p.Automated.Enabled == nil || *p.Automated.Enabled)
}

// SelfHeal reports automated sync with selfHeal: drift is written back.
func (a *Application) SelfHeal() bool {
	return a.AutoSync() && a.Spec.SyncPolicy.Automated.SelfHeal
}

// HasSyncOption reports whether syncOptions holds opt, compared exactly as
// SyncOptions.HasOption does (types.go).
func (a *Application) HasSyncOption(opt string) bool {
	if a.Spec.SyncPolicy == nil {
		return false
	}
	for _, o := range a.Spec.SyncPolicy.SyncOptions {
		if o == opt {
			return true
		}
	}
	return false
}

// HasCompareOption reports whether the compare-options annotation holds opt.
func (a *Application) HasCompareOption(opt string) bool {
	return hasAnnotationOption(a.Metadata.Annotations, AnnotationCompareOptions, opt)
}

// InstanceName is the name tracking ids use: <ns>_<name> for apps outside
// the control-plane namespace (types.go Application.InstanceName).
func (a *Application) InstanceName(controlNS string) string {
	if a.Metadata.Namespace == "" || a.Metadata.Namespace == controlNS {
		return a.Metadata.Name
	}
	return a.Metadata.Namespace + "_" + a.Metadata.Name
}

// hasAnnotationOption mirrors gitops-engine pkg/sync/resource
// HasAnnotationOption: the value is a comma-separated list.
func hasAnnotationOption(ann map[string]string, key, opt string) bool {
	for _, o := range strings.Split(ann[key], ",") {
		if strings.TrimSpace(o) == opt {
			return true
		}
	}
	return false
}

// OverrideIgnoreDiff is the value of resource.customizations.ignoreDifferences.*.
type OverrideIgnoreDiff struct {
	JSONPointers          []string `json:"jsonPointers,omitempty"`
	JQPathExpressions     []string `json:"jqPathExpressions,omitempty"`
	ManagedFieldsManagers []string `json:"managedFieldsManagers,omitempty"`
}

// KnownTypeField is one resource.customizations.knownTypeFields entry.
type KnownTypeField struct {
	Field string `json:"field,omitempty"`
	Type  string `json:"type,omitempty"`
}

// ResourceOverride is what argocd-cm says about one group/kind key.
type ResourceOverride struct {
	IgnoreDifferences     OverrideIgnoreDiff `json:"ignoreDifferences,omitempty"`
	IgnoreResourceUpdates OverrideIgnoreDiff `json:"ignoreResourceUpdates,omitempty"`
	KnownTypeFields       []KnownTypeField   `json:"knownTypeFields,omitempty"`
}

// FilteredResource is one resource.exclusions / resource.inclusions entry.
type FilteredResource struct {
	APIGroups []string `json:"apiGroups,omitempty"`
	Kinds     []string `json:"kinds,omitempty"`
	Clusters  []string `json:"clusters,omitempty"`
}

// CompareOptions is resource.compareoptions (util/settings ArgoCDDiffOptions).
type CompareOptions struct {
	IgnoreAggregatedRoles              bool   `json:"ignoreAggregatedRoles,omitempty"`
	IgnoreResourceStatusField          string `json:"ignoreResourceStatusField,omitempty"`
	IgnoreDifferencesOnResourceUpdates bool   `json:"ignoreDifferencesOnResourceUpdates,omitempty"`
}

// DefaultCompareOptions are Argo CD 3.x's defaults (settings.go
// GetDefaultDiffOptions): status ignored for all, ignoreDifferences also used
// for resource updates.
func DefaultCompareOptions() CompareOptions {
	return CompareOptions{IgnoreResourceStatusField: "all", IgnoreDifferencesOnResourceUpdates: true}
}
