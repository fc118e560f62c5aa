package kube

import (
	"slices"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/component-base/featuregate"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"k8s.io/kubernetes/pkg/api/pod"
	"k8s.io/kubernetes/pkg/apis/apps"
	appsvalidation "k8s.io/kubernetes/pkg/apis/apps/validation"
	"k8s.io/kubernetes/pkg/apis/batch"
	batchvalidation "k8s.io/kubernetes/pkg/apis/batch/validation"
	"k8s.io/kubernetes/pkg/apis/core"
	corevalidation "k8s.io/kubernetes/pkg/apis/core/validation"
	"k8s.io/kubernetes/pkg/apis/networking"
	networkingvalidation "k8s.io/kubernetes/pkg/apis/networking/validation"
	"k8s.io/kubernetes/pkg/apis/policy"
	policyvalidation "k8s.io/kubernetes/pkg/apis/policy/validation"
	"k8s.io/kubernetes/pkg/apis/rbac"
	rbacvalidation "k8s.io/kubernetes/pkg/apis/rbac/validation"
	"k8s.io/kubernetes/pkg/features"
)

// UpdateRejections are the errors the API server's update validation
// gives for updated, written over old, that it does not give for old
// written over itself: what makes the server reject this write (422
// Invalid), such as a field the kind makes immutable (differential seed
// 64984: a Job's spec.completions, which a server-side sync pruned: "field
// is immutable"). The validation is the kind's ValidateUpdate, with the
// options its strategy gives (kubernetes pkg/registry/*/*/strategy.go,
// v1.37.2), run on the internal types after the server's defaulting. An
// error old already has is one the server tolerates or this computation
// cannot see (status, fields set at create), not this write's doing: it
// is left out. Each error is its field path, type and detail, never the
// rejected value (a Secret's data would be printed). ok is false for a
// kind whose update validation is not known here (a custom resource, a
// Service, whose storage copies allocated values into the update before
// validating it). The options this computes read the API server's gates
// (ServerGateOn); the validation functions read the process's, which the
// Argo CD engine makes emulate the release Argo CD links (1.34): the
// gates that moved since decide newer pod fields (image volumes, env
// files, a hostname override) that no sync here writes, so a rejection
// that depends on one may be missed or wrong.
func UpdateRejections(old, updated *unstructured.Unstructured) (rejections []string, ok bool) {
	if old == nil || updated == nil || old.GroupVersionKind() != updated.GroupVersionKind() {
		return nil, false
	}
	o, ok := internalObject(old)
	if !ok {
		return nil, false
	}
	n, ok := internalObject(updated)
	if !ok {
		return nil, false
	}
	prepareForUpdate(n, o)
	errs, ok := validateUpdate(n, o)
	if !ok {
		return nil, false
	}
	base, _ := validateUpdate(o, o)
	known := make(map[string]bool, len(base))
	for _, e := range base {
		known[rejection(e)] = true
	}
	for _, e := range errs {
		if r := rejection(e); !known[r] && !slices.Contains(rejections, r) {
			rejections = append(rejections, r)
		}
	}
	slices.Sort(rejections)
	return rejections, true
}

// rejection is how a validation error is said: without its value.
func rejection(e *field.Error) string {
	s := e.Field + ": " + e.Type.String()
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// internalObject is obj decoded into its Go type, defaulted as the API
// server defaults it, and converted to the internal version the
// validation reads.
func internalObject(obj *unstructured.Unstructured) (runtime.Object, bool) {
	gvk := obj.GroupVersionKind()
	typed, err := scheme.Scheme.New(gvk)
	if err != nil {
		return nil, false
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, typed); err != nil {
		return nil, false
	}
	legacyscheme.Scheme.Default(typed)
	internal, err := legacyscheme.Scheme.ConvertToVersion(typed, schema.GroupVersion{Group: gvk.Group, Version: runtime.APIVersionInternal})
	if err != nil {
		return nil, false
	}
	return internal, true
}

// prepareForUpdate is what the kind's strategy does to an update before
// validating it (kubernetes pkg/registry/*/*/strategy.go PrepareForUpdate,
// v1.37.2) where the validation reads it: status is the stored one (the
// main resource does not write it), and a DaemonSet's templateGeneration
// is the stored one, plus one when the template changes (differential
// seed 65611: without it a changed image read as "templateGeneration must
// be incremented"). The strategies' drop of fields whose gate is off is
// left out: the process's gates may emulate another release than the
// server's (ServerGateOn), and those fields are alpha ones.
func prepareForUpdate(n, o runtime.Object) {
	switch n := n.(type) {
	case *apps.DaemonSet:
		old := o.(*apps.DaemonSet)
		n.Status = old.Status
		n.Spec.TemplateGeneration = old.Spec.TemplateGeneration
		if !apiequality.Semantic.DeepEqual(old.Spec.Template, n.Spec.Template) {
			n.Spec.TemplateGeneration++
		}
	case *apps.Deployment:
		n.Status = o.(*apps.Deployment).Status
	case *apps.StatefulSet:
		n.Status = o.(*apps.StatefulSet).Status
	case *apps.ReplicaSet:
		n.Status = o.(*apps.ReplicaSet).Status
	case *batch.Job:
		n.Status = o.(*batch.Job).Status
	case *batch.CronJob:
		n.Status = o.(*batch.CronJob).Status
	case *core.PersistentVolumeClaim:
		n.Status = o.(*core.PersistentVolumeClaim).Status
	case *networking.Ingress:
		n.Status = o.(*networking.Ingress).Status
	case *policy.PodDisruptionBudget:
		n.Status = o.(*policy.PodDisruptionBudget).Status
	}
}

// validateUpdate is the kind's update validation, as its registry
// strategy's ValidateUpdate calls it. ok is false for another kind.
func validateUpdate(n, o runtime.Object) (field.ErrorList, bool) {
	switch n := n.(type) {
	case *apps.Deployment:
		old := o.(*apps.Deployment)
		return appsvalidation.ValidateDeploymentUpdate(n, old, pod.GetValidationOptionsFromPodTemplate(&n.Spec.Template, &old.Spec.Template)), true
	case *apps.StatefulSet:
		old := o.(*apps.StatefulSet)
		setOpts := appsvalidation.StatefulSetValidationOptions{
			AllowInvalidServiceName:          true,
			SkipValidateVolumeClaimTemplates: true,
			AllowStatefulSetRecreateStrategy: ServerGateOn(features.StatefulSetRecreateStrategy) || old.Spec.UpdateStrategy.Type == apps.RecreateStatefulSetStrategyType,
		}
		return appsvalidation.ValidateStatefulSetUpdate(n, old, setOpts, pod.GetValidationOptionsFromPodTemplate(&n.Spec.Template, &old.Spec.Template)), true
	case *apps.DaemonSet:
		old := o.(*apps.DaemonSet)
		opts := pod.GetValidationOptionsFromPodTemplate(&n.Spec.Template, &old.Spec.Template)
		opts.AllowInvalidLabelValueInSelector = opts.AllowInvalidLabelValueInSelector || metav1validation.LabelSelectorHasInvalidLabelValue(old.Spec.Selector)
		return appsvalidation.ValidateDaemonSetUpdate(n, old, opts), true
	case *apps.ReplicaSet:
		old := o.(*apps.ReplicaSet)
		return appsvalidation.ValidateReplicaSetUpdate(n, old, pod.GetValidationOptionsFromPodTemplate(&n.Spec.Template, &old.Spec.Template)), true
	case *batch.Job:
		old := o.(*batch.Job)
		return batchvalidation.ValidateJobUpdate(n, old, jobValidationOptions(n, old)), true
	case *batch.CronJob:
		old := o.(*batch.CronJob)
		return batchvalidation.ValidateCronJobUpdate(n, old, pod.GetValidationOptionsFromPodTemplate(&n.Spec.JobTemplate.Spec.Template, &old.Spec.JobTemplate.Spec.Template)), true
	}
	return validateOtherUpdate(n, o)
}

// validateOtherUpdate is validateUpdate for the kinds without a pod
// template.
func validateOtherUpdate(n, o runtime.Object) (field.ErrorList, bool) {
	switch n := n.(type) {
	case *core.ConfigMap:
		return corevalidation.ValidateConfigMapUpdate(n, o.(*core.ConfigMap)), true
	case *core.Secret:
		return corevalidation.ValidateSecretUpdate(n, o.(*core.Secret)), true
	case *core.ServiceAccount:
		return corevalidation.ValidateServiceAccountUpdate(n, o.(*core.ServiceAccount)), true
	case *core.PersistentVolumeClaim:
		old := o.(*core.PersistentVolumeClaim)
		return corevalidation.ValidatePersistentVolumeClaimUpdate(n, old, corevalidation.ValidationOptionsForPersistentVolumeClaim(n, old)), true
	case *networking.Ingress:
		return networkingvalidation.ValidateIngressUpdate(n, o.(*networking.Ingress)), true
	case *networking.IngressClass:
		return networkingvalidation.ValidateIngressClassUpdate(n, o.(*networking.IngressClass)), true
	case *networking.NetworkPolicy:
		old := o.(*networking.NetworkPolicy)
		return networkingvalidation.ValidateNetworkPolicyUpdate(n, old, networkingvalidation.ValidationOptionsForNetworking(n, old)), true
	case *rbac.Role:
		return rbacvalidation.ValidateRoleUpdate(n, o.(*rbac.Role)), true
	case *rbac.ClusterRole:
		old := o.(*rbac.ClusterRole)
		return rbacvalidation.ValidateClusterRoleUpdate(n, old, rbacvalidation.ClusterRoleValidationOptions{AllowInvalidLabelValueInSelector: aggregationHasInvalidLabelValue(old)}), true
	case *rbac.RoleBinding:
		return rbacvalidation.ValidateRoleBindingUpdate(n, o.(*rbac.RoleBinding)), true
	case *rbac.ClusterRoleBinding:
		return rbacvalidation.ValidateClusterRoleBindingUpdate(n, o.(*rbac.ClusterRoleBinding)), true
	case *policy.PodDisruptionBudget:
		old := o.(*policy.PodDisruptionBudget)
		invalid := old.Spec.Selector != nil && metav1validation.LabelSelectorHasInvalidLabelValue(old.Spec.Selector)
		return policyvalidation.ValidatePodDisruptionBudget(n, policyvalidation.PodDisruptionBudgetValidationOptions{AllowInvalidLabelValueInSelector: invalid}), true
	}
	return nil, false
}

// jobValidationOptions are kubernetes pkg/registry/batch/job/strategy.go
// validationOptionsForJob's, for an update.
func jobValidationOptions(n, old *batch.Job) batchvalidation.JobValidationOptions {
	opts := batchvalidation.JobValidationOptions{
		PodValidationOptions: pod.GetValidationOptionsFromPodTemplate(&n.Spec.Template, &old.Spec.Template),
	}
	opts.AllowInvalidLabelValueInSelector = opts.AllowInvalidLabelValueInSelector || metav1validation.LabelSelectorHasInvalidLabelValue(old.Spec.Selector)
	suspended := old.Spec.Suspend != nil && *old.Spec.Suspend
	notStarted := old.Status.StartTime == nil
	opts.AllowMutableSchedulingDirectives = suspended && notStarted
	mutableTemplate := suspended && (notStarted || batchvalidation.IsConditionTrue(old.Status.Conditions, batch.JobSuspended)) && old.Status.Active == 0
	if ServerGateOn(features.MutablePodResourcesForSuspendedJobs) {
		opts.AllowMutablePodResources = mutableTemplate
	}
	if ServerGateOn(features.MutableSchedulingDirectivesForSuspendedJobs) {
		opts.AllowMutableSchedulingDirectives = mutableTemplate
	}
	_, hadJobName := old.Spec.Template.Labels[batch.JobNameLabel]
	_, hadControllerUID := old.Spec.Template.Labels[batch.ControllerUidLabel]
	opts.RequirePrefixedLabels = hadJobName && hadControllerUID
	return opts
}

// aggregationHasInvalidLabelValue is kubernetes
// pkg/registry/rbac/clusterrole/strategy.go
// hasInvalidLabelValueInLabelSelector.
func aggregationHasInvalidLabelValue(role *rbac.ClusterRole) bool {
	if role.AggregationRule == nil {
		return false
	}
	for i := range role.AggregationRule.ClusterRoleSelectors {
		if len(metav1validation.ValidateLabelSelector(&role.AggregationRule.ClusterRoleSelectors[i], metav1validation.LabelSelectorValidationOptions{}, nil)) > 0 {
			return true
		}
	}
	return false
}

// ServerGateOn says whether the feature gate is on by default in the
// kube-apiserver release this module links (k8s.io/kubernetes v1.37): its
// latest versioned spec. The process's own gates may emulate another
// release (the Argo CD engine's ArgoKubernetesVersion).
func ServerGateOn(g featuregate.Feature) bool {
	specs := utilfeature.DefaultMutableFeatureGate.GetAllVersioned()[g]
	return len(specs) > 0 && specs[len(specs)-1].Default
}
