package managedfields

import (
	"testing"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		manager, operation, subresource string
		want                            model.CauseClass
	}{
		{"kubectl", "Update", "", model.CauseManual},
		{"kubectl", "Apply", "", model.CauseManual},
		{"kubectl", "Update", "scale", model.CauseManual},
		{"kubectl-edit", "Update", "", model.CauseManual},
		{"kubectl-patch", "Update", "", model.CauseManual},
		{"kubectl-set", "Update", "", model.CauseManual},
		{"kubectl-label", "Update", "", model.CauseManual},
		{"kubectl-annotate", "Update", "", model.CauseManual},
		{"kubectl-client-side-apply", "Update", "", model.CauseManual},
		{"kubectl-scale", "Update", "scale", model.CauseManual},
		{"kubectl-rollout", "Update", "", model.CauseManual},
		{"kubectl.exe", "Update", "", model.CauseManual},
		{"k9s", "Update", "", model.CauseManual},
		{"argocd-controller", "Apply", "", model.CauseGitOps},
		{"argocd-controller", "Update", "", model.CauseGitOps},
		{"argocd-application-controller", "Update", "", model.CauseGitOps},
		{"kustomize-controller", "Apply", "", model.CauseGitOps},
		{"helm-controller", "Apply", "", model.CauseGitOps},
		{"flux-client-side-apply", "Update", "", model.CauseGitOps},
		{"gotk-sync", "Update", "", model.CauseGitOps},
		{"kube-controller-manager", "Update", "scale", model.CauseAutoscaler},
		{"kube-controller-manager", "Update", "", model.CauseController},
		{"kube-controller-manager", "Update", "status", model.CauseController},
		{"vpa-updater", "Update", "", model.CauseAutoscaler},
		{"vpa-admission-controller", "Update", "", model.CauseAutoscaler},
		{"cluster-autoscaler", "Update", "", model.CauseAutoscaler},
		{"keda-operator", "Update", "", model.CauseAutoscaler},
		{"kube-scheduler", "Update", "", model.CauseController},
		{"kubelet", "Update", "status", model.CauseController},
		{"cert-manager-cainjector", "Update", "", model.CauseOperator},
		{"cert-manager-certificates-issuing", "Apply", "", model.CauseOperator},
		{"external-secrets", "Update", "", model.CauseOperator},
		{"istio-sidecar-injector", "Update", "", model.CauseOperator},
		{"linkerd-proxy-injector", "Update", "", model.CauseOperator},
		{"kyverno", "Update", "", model.CauseOperator},
		{"gatekeeper-mutation", "Update", "", model.CauseOperator},
		{"prometheus-operator", "Update", "", model.CauseOperator},
		{"my-admission-webhook", "Update", "", model.CauseOperator},
		{"ingress-nginx-controller", "Update", "", model.CauseOperator},
		{"manager", "Update", "", model.CauseOperator},
		{"Go-http-client", "Update", "", model.CauseUnknown},
		{"", "Update", "", model.CauseUnknown},
		{"terraform-provider-kubernetes", "Apply", "", model.CauseUnknown},
		{"KUBECTL-EDIT", "Update", "", model.CauseManual},
	}
	for _, tc := range tests {
		if got := Classify(tc.manager, tc.operation, tc.subresource); got != tc.want {
			t.Errorf("Classify(%q, %q, %q) = %s, want %s", tc.manager, tc.operation, tc.subresource, got, tc.want)
		}
	}
}

func TestIsGitOpsManager(t *testing.T) {
	for m, want := range map[string]bool{
		"argocd-controller": true, "kustomize-controller": true, "helm-controller": true,
		"flux-client-side-apply": true, "gotk-sync": true, "argocd-application-controller": true,
		"kubectl": false, "kube-controller-manager": false, "": false,
		// kubectl auth reconcile run by the controller as the argocd binary
		// (internal/argocd IsManager).
		"argocd": true,
	} {
		if got := IsGitOpsManager(m); got != want {
			t.Errorf("IsGitOpsManager(%q) = %v, want %v", m, got, want)
		}
	}
}
