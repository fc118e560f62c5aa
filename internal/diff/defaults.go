package diff

import (
	"encoding/json"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/kubectl-drift/kubectl-drift/internal/model/jsonpointer"
)

// serverDefault is one field the API server fills in when a write leaves
// it out. value is the default; anyValue marks a value the server
// computes (an allocated clusterIP, a Job's controller-uid label);
// samePort marks a Service port's targetPort, which defaults to its port.
type serverDefault struct {
	kinds    string // "Kind,Kind" or "" for any kind
	path     string // "/"-joined tokens, "*" for a list index
	value    any
	anyValue bool
	samePort bool
}

// podSpecDefaults are core/v1 SetDefaults_PodSpec, SetDefaults_Container,
// SetDefaults_ContainerPort, SetDefaults_Probe, SetDefaults_HTTPGetAction
// and the volume sources' defaultMode (kubernetes pkg/apis/core/v1/
// defaults.go), relative to a PodSpec.
var podSpecDefaults = []serverDefault{
	{path: "restartPolicy", value: "Always"},
	{path: "terminationGracePeriodSeconds", value: int64(30)},
	{path: "dnsPolicy", value: "ClusterFirst"},
	{path: "securityContext", value: map[string]any{}},
	{path: "schedulerName", value: "default-scheduler"},
	{path: "enableServiceLinks", value: true},
	{path: "containers/*/terminationMessagePath", value: "/dev/termination-log"},
	{path: "containers/*/terminationMessagePolicy", value: "File"},
	{path: "containers/*/imagePullPolicy", anyValue: true},
	{path: "containers/*/resources", value: map[string]any{}},
	{path: "containers/*/ports/*/protocol", value: "TCP"},
	{path: "initContainers/*/terminationMessagePath", value: "/dev/termination-log"},
	{path: "initContainers/*/terminationMessagePolicy", value: "File"},
	{path: "initContainers/*/imagePullPolicy", anyValue: true},
	{path: "containers/*/livenessProbe/timeoutSeconds", value: int64(1)},
	{path: "containers/*/livenessProbe/periodSeconds", value: int64(10)},
	{path: "containers/*/livenessProbe/successThreshold", value: int64(1)},
	{path: "containers/*/livenessProbe/failureThreshold", value: int64(3)},
	{path: "containers/*/livenessProbe/httpGet/scheme", value: "HTTP"},
	{path: "containers/*/readinessProbe/timeoutSeconds", value: int64(1)},
	{path: "containers/*/readinessProbe/periodSeconds", value: int64(10)},
	{path: "containers/*/readinessProbe/successThreshold", value: int64(1)},
	{path: "containers/*/readinessProbe/failureThreshold", value: int64(3)},
	{path: "containers/*/readinessProbe/httpGet/scheme", value: "HTTP"},
	{path: "containers/*/env/*/valueFrom/fieldRef/apiVersion", value: "v1"},
	{path: "volumes/*/configMap/defaultMode", value: int64(420)},
	{path: "volumes/*/secret/defaultMode", value: int64(420)},
}

// objectDefaults are the defaults of the kinds' own fields (kubernetes
// pkg/apis/{apps,batch,core,networking,admissionregistration}/v1/
// defaults.go, and the registry strategies that set a Job's selector and
// template labels).
var objectDefaults = []serverDefault{
	{kinds: "Deployment", path: "spec/replicas", value: int64(1)},
	{kinds: "Deployment", path: "spec/strategy/type", value: "RollingUpdate"},
	{kinds: "Deployment", path: "spec/strategy/rollingUpdate/maxSurge", value: "25%"},
	{kinds: "Deployment", path: "spec/strategy/rollingUpdate/maxUnavailable", value: "25%"},
	{kinds: "Deployment,DaemonSet,StatefulSet", path: "spec/revisionHistoryLimit", value: int64(10)},
	{kinds: "Deployment", path: "spec/progressDeadlineSeconds", value: int64(600)},
	{kinds: "DaemonSet,StatefulSet", path: "spec/updateStrategy/type", value: "RollingUpdate"},
	{kinds: "DaemonSet", path: "spec/updateStrategy/rollingUpdate/maxUnavailable", value: int64(1)},
	{kinds: "DaemonSet", path: "spec/updateStrategy/rollingUpdate/maxSurge", value: int64(0)},
	{kinds: "StatefulSet", path: "spec/replicas", value: int64(1)},
	{kinds: "StatefulSet", path: "spec/updateStrategy/rollingUpdate/partition", value: int64(0)},
	// SetDefaults_StatefulSet fills it when the MaxUnavailableStatefulSet
	// gate is on, as on kube-apiserver v1.37.2 (make differential seed
	// 42210, class R8: the apply left it at 1).
	{kinds: "StatefulSet", path: "spec/updateStrategy/rollingUpdate/maxUnavailable", value: int64(1)},
	{kinds: "StatefulSet", path: "spec/podManagementPolicy", value: "OrderedReady"},
	{kinds: "StatefulSet", path: "spec/persistentVolumeClaimRetentionPolicy/whenDeleted", value: "Retain"},
	{kinds: "StatefulSet", path: "spec/persistentVolumeClaimRetentionPolicy/whenScaled", value: "Retain"},
	{kinds: "StatefulSet", path: "spec/volumeClaimTemplates/*/apiVersion", value: "v1"},
	{kinds: "StatefulSet", path: "spec/volumeClaimTemplates/*/kind", value: "PersistentVolumeClaim"},
	{kinds: "StatefulSet", path: "spec/volumeClaimTemplates/*/spec/volumeMode", value: "Filesystem"},
	{kinds: "StatefulSet", path: "spec/volumeClaimTemplates/*/status/phase", value: "Pending"},
	{kinds: "PersistentVolumeClaim", path: "spec/volumeMode", value: "Filesystem"},
	{kinds: "Job", path: "spec/backoffLimit", value: int64(6)},
	{kinds: "Job", path: "spec/completions", value: int64(1)},
	{kinds: "Job", path: "spec/parallelism", value: int64(1)},
	{kinds: "Job", path: "spec/completionMode", value: "NonIndexed"},
	{kinds: "Job", path: "spec/suspend", value: false},
	{kinds: "Job", path: "spec/manualSelector", value: false},
	{kinds: "Job", path: "spec/podReplacementPolicy", anyValue: true},
	{kinds: "Job", path: "spec/selector", anyValue: true},
	{kinds: "Job", path: "spec/template/metadata/labels/controller-uid", anyValue: true},
	{kinds: "Job", path: "spec/template/metadata/labels/job-name", anyValue: true},
	{kinds: "Job", path: "spec/template/metadata/labels/batch.kubernetes.io~1controller-uid", anyValue: true},
	{kinds: "Job", path: "spec/template/metadata/labels/batch.kubernetes.io~1job-name", anyValue: true},
	{kinds: "CronJob", path: "spec/concurrencyPolicy", value: "Allow"},
	{kinds: "CronJob", path: "spec/suspend", value: false},
	{kinds: "CronJob", path: "spec/successfulJobsHistoryLimit", value: int64(3)},
	{kinds: "CronJob", path: "spec/failedJobsHistoryLimit", value: int64(1)},
	// autoscaling/v1 and v2 SetDefaults_HorizontalPodAutoscaler (kubernetes
	// pkg/apis/autoscaling/v{1,2}/defaults.go): an omitted minReplicas is 1.
	{kinds: "HorizontalPodAutoscaler", path: "spec/minReplicas", value: int64(1)},
	{kinds: "Service", path: "spec/type", value: "ClusterIP"},
	{kinds: "Service", path: "spec/sessionAffinity", value: "None"},
	{kinds: "Service", path: "spec/clusterIP", anyValue: true},
	{kinds: "Service", path: "spec/clusterIPs", anyValue: true},
	{kinds: "Service", path: "spec/ipFamilies", anyValue: true},
	{kinds: "Service", path: "spec/ipFamilyPolicy", value: "SingleStack"},
	{kinds: "Service", path: "spec/internalTrafficPolicy", value: "Cluster"},
	{kinds: "Service", path: "spec/externalTrafficPolicy", value: "Cluster"},
	{kinds: "Service", path: "spec/allocateLoadBalancerNodePorts", value: true},
	{kinds: "Service", path: "spec/ports/*/protocol", value: "TCP"},
	{kinds: "Service", path: "spec/ports/*/targetPort", samePort: true},
	{kinds: "Service", path: "spec/ports/*/nodePort", anyValue: true},
	{kinds: "Service", path: "spec/healthCheckNodePort", anyValue: true},
	{kinds: "NetworkPolicy", path: "spec/ingress/*/ports/*/protocol", value: "TCP"},
	{kinds: "NetworkPolicy", path: "spec/egress/*/ports/*/protocol", value: "TCP"},
	{kinds: "NetworkPolicy", path: "spec/policyTypes", anyValue: true},
	{kinds: "ValidatingWebhookConfiguration,MutatingWebhookConfiguration", path: "webhooks/*/rules/*/scope", value: "*"},
	{kinds: "ValidatingWebhookConfiguration,MutatingWebhookConfiguration", path: "webhooks/*/failurePolicy", value: "Fail"},
	{kinds: "ValidatingWebhookConfiguration,MutatingWebhookConfiguration", path: "webhooks/*/matchPolicy", value: "Equivalent"},
	{kinds: "ValidatingWebhookConfiguration,MutatingWebhookConfiguration", path: "webhooks/*/namespaceSelector", value: map[string]any{}},
	{kinds: "ValidatingWebhookConfiguration,MutatingWebhookConfiguration", path: "webhooks/*/objectSelector", value: map[string]any{}},
	{kinds: "ValidatingWebhookConfiguration,MutatingWebhookConfiguration", path: "webhooks/*/timeoutSeconds", value: int64(10)},
	{kinds: "ValidatingWebhookConfiguration,MutatingWebhookConfiguration", path: "webhooks/*/clientConfig/service/port", value: int64(443)},
	{kinds: "MutatingWebhookConfiguration", path: "webhooks/*/reinvocationPolicy", value: "Never"},
	{kinds: "Secret", path: "type", value: "Opaque"},
	// networking/v1 SetDefaults_IngressClass, scheduling/v1
	// SetDefaults_PriorityClass (kubernetes pkg/apis/.../v1/defaults.go).
	{kinds: "IngressClass", path: "spec/parameters/scope", value: "Cluster"},
	{kinds: "PriorityClass", path: "preemptionPolicy", value: "PreemptLowerPriority"},
}

// podSpecAt are where each workload kind holds its PodSpec.
var podSpecAt = map[string]string{
	"Pod": "spec", "Deployment": "spec/template/spec", "ReplicaSet": "spec/template/spec",
	"DaemonSet": "spec/template/spec", "StatefulSet": "spec/template/spec", "Job": "spec/template/spec",
	"CronJob": "spec/jobTemplate/spec/template/spec",
}

// IsServerDefault says whether the field at tokens (unescaped pointer
// tokens into obj, a built-in kind's object) holds the value the API server
// fills in when a write leaves the field out. Used where no server can be
// asked (explain -f without --server-dry-run): a field the engine's apply
// owns but its manifest leaves out is then a default the next apply gets
// again, not a field removed from Git. Custom resources have none here
// (their defaults are in their CRD's schema).
func IsServerDefault(group, kind string, tokens []string, live any, obj map[string]any) bool {
	return isServerDefault(group, kind, tokens, live, obj, true)
}

// IsServerDefaultValue is IsServerDefault without the values the server
// computes (allocated IPs and ports, a Job's labels, imagePullPolicy): the
// live value is the one the server writes for an object that leaves the
// field out.
func IsServerDefaultValue(group, kind string, tokens []string, live any, obj map[string]any) bool {
	return isServerDefault(group, kind, tokens, live, obj, false)
}

func isServerDefault(group, kind string, tokens []string, live any, obj map[string]any, computed bool) bool {
	if group != "" && !IsBuiltinGroup(group) {
		return false
	}
	path := make([]string, len(tokens))
	for i, t := range tokens {
		if _, err := strconv.Atoi(t); err == nil {
			path[i] = "*"
		} else {
			path[i] = strings.ReplaceAll(t, "/", "~1")
		}
	}
	p := strings.Join(path, "/")
	check := func(d serverDefault) bool {
		switch {
		case d.anyValue:
			return computed
		case d.samePort:
			port, ok := portOf(obj, tokens)
			return ok && equality.Semantic.DeepEqual(NormalizeNumber(live), port)
		}
		return equality.Semantic.DeepEqual(NormalizeNumber(live), d.value)
	}
	for _, d := range objectDefaults {
		if d.path == p && (d.kinds == "" || strings.Contains(","+d.kinds+",", ","+kind+",")) && check(d) {
			return true
		}
	}
	if at, ok := podSpecAt[kind]; ok && strings.HasPrefix(p, at+"/") {
		rel := strings.TrimPrefix(p, at+"/")
		for _, d := range podSpecDefaults {
			if d.path == rel && check(d) {
				return true
			}
		}
	}
	return false
}

// portOf is the port of the Service port item holding the targetPort at
// tokens.
func portOf(obj map[string]any, tokens []string) (any, bool) {
	item, n := jsonpointer.Walk(obj, tokens[:len(tokens)-1])
	m, ok := item.(map[string]any)
	if n != len(tokens)-1 || !ok {
		return nil, false
	}
	p, ok := m["port"]
	return NormalizeNumber(p), ok
}

// NormalizeNumber makes integers of any Go type compare equal: JSON
// numbers (float64, json.Number) with the int64s of decoded objects and
// of the defaults table.
func NormalizeNumber(v any) any {
	switch n := v.(type) {
	case int:
		return int64(n)
	case int32:
		return int64(n)
	case float64:
		if n == float64(int64(n)) {
			return int64(n)
		}
	case json.Number:
		if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
			return i
		}
	}
	return v
}

// AddDerivedDefaults writes into obj (a built-in kind's object, as a
// manifest gives it) the defaults the API server derives from a value the
// manifest sets, which IsServerDefault cannot name because the manifest
// leaves the whole field out: a Service with sessionAffinity ClientIP gets
// sessionAffinityConfig.clientIP.timeoutSeconds 10800 (kubernetes
// pkg/apis/core/v1/defaults.go SetDefaults_Service). Measured: make
// differential seeds 3031, 4017 (Git sets ClientIP; the apply adds the
// config).
func AddDerivedDefaults(obj map[string]any) {
	if obj["apiVersion"] != "v1" || obj["kind"] != "Service" {
		return
	}
	spec, _ := obj["spec"].(map[string]any)
	if spec == nil || spec["sessionAffinity"] != "ClientIP" || spec["sessionAffinityConfig"] != nil {
		return
	}
	spec["sessionAffinityConfig"] = map[string]any{"clientIP": map[string]any{"timeoutSeconds": int64(10800)}}
}

// serverBookkeeping are annotations the API server or a built-in
// controller recomputes on every write (kubernetes
// pkg/registry/apps/daemonset/strategy.go sets the DaemonSet's template
// generation when the template changes; the deployment controller writes
// the revision): a write of the template changes them in the same request,
// so they follow the field a person wrote and are no drift of their own
// (make differential seeds 3022, 52136, 52182).
var serverBookkeeping = map[string]bool{
	"/metadata/annotations/deprecated.daemonset.template.generation": true,
	"/metadata/annotations/deployment.kubernetes.io~1revision":       true,
}

// IsServerBookkeeping says whether the field at pointer is one the API
// server or a built-in controller recomputes on every write
// (serverBookkeeping).
func IsServerBookkeeping(pointer string) bool { return serverBookkeeping[pointer] }
