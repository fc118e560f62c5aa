package managedfields

import (
	"strings"
	"sync"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// gitOpsManagers are the engines' field-manager predicates, registered by
// internal/engine.Register while the program initializes (each engine
// package owns its manager names); read-only afterwards.
var gitOpsManagers struct {
	sync.RWMutex
	is []func(manager string) bool
}

// RegisterGitOpsManagers adds an engine's predicate for its field
// managers. Only internal/engine.Register calls it.
func RegisterGitOpsManagers(is func(manager string) bool) {
	gitOpsManagers.Lock()
	defer gitOpsManagers.Unlock()
	gitOpsManagers.is = append(gitOpsManagers.is, is)
}

// IsGitOpsManager reports whether manager is a registered GitOps engine's
// field manager. Predicates get the name lower-cased and trimmed.
func IsGitOpsManager(manager string) bool {
	m := strings.ToLower(strings.TrimSpace(manager))
	gitOpsManagers.RLock()
	defer gitOpsManagers.RUnlock()
	for _, is := range gitOpsManagers.is {
		if is(m) {
			return true
		}
	}
	return false
}

// isManualTool reports managers that are people at a terminal. kubectl names its
// managers "kubectl-<verb>" (k8s.io/kubectl/pkg/cmd/*: FieldManager defaults
// such as "kubectl-edit", "kubectl-patch", "kubectl-client-side-apply"); a
// plain server-side `kubectl apply` is "kubectl". Without an explicit field
// manager the API server falls back to the user agent's first segment
// (k8s.io/apiserver/pkg/endpoints/handlers/create.go prefixFromUserAgent),
// hence "kubectl.exe", "k9s", "Lens".
// The helm CLI run by hand counts too (helm-controller is GitOps).
func isManualTool(m string) bool {
	switch m {
	case "kubectl", "kubectl.exe", "k9s", "lens", "openlens", "headlamp", "helm":
		return true
	}
	return strings.HasPrefix(m, "kubectl-")
}

// Classify says what kind of actor a field manager is. operation is Apply or
// Update; subresource matters for scale: kube-controller-manager writing the
// scale subresource is the HorizontalPodAutoscaler, kubectl writing it is
// `kubectl scale`.
func Classify(manager, operation, subresource string) model.CauseClass {
	m := strings.ToLower(strings.TrimSpace(manager))
	if m == "" {
		return model.CauseUnknown
	}
	isKubectl := isManualTool(m)
	if subresource == "scale" {
		switch {
		case isKubectl:
			return model.CauseManual
		case m == "kube-controller-manager", strings.Contains(m, "autoscaler"), strings.HasPrefix(m, "keda"), strings.HasPrefix(m, "vpa-"):
			return model.CauseAutoscaler
		}
	}
	switch {
	case isKubectl:
		return model.CauseManual
	case IsGitOpsManager(m):
		return model.CauseGitOps
	// Autoscalers before operators: keda-operator is an autoscaler.
	case strings.HasPrefix(m, "vpa-"), strings.Contains(m, "autoscaler"), strings.HasPrefix(m, "keda"):
		return model.CauseAutoscaler
	case m == "kube-controller-manager", m == "kube-scheduler", m == "kubelet",
		m == "cloud-controller-manager", m == "kube-apiserver", m == "kube-proxy":
		return model.CauseController
	case hasAnyPrefix(m, "cert-manager", "cainjector", "external-secrets", "istio", "linkerd", "kyverno", "gatekeeper",
		"vault-", "sealed-secrets", "trust-manager", "prometheus-operator", "opentelemetry"),
		hasAnySuffix(m, "-operator", "-webhook", "-injector", "-controller", "-controller-manager"),
		m == "manager": // the default binary name of kubebuilder operators
		return model.CauseOperator
	}
	return model.CauseUnknown
}

func hasAnyPrefix(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func hasAnySuffix(s string, suffixes ...string) bool {
	for _, p := range suffixes {
		if strings.HasSuffix(s, p) {
			return true
		}
	}
	return false
}
