package diff

import "testing"

// IsServerDefault answers for the defaults the differential runs met on
// the real API server (make differential: VolumeClaimTemplates, webhook
// rule scopes, NetworkPolicy and Service port protocols, targetPort) and
// refuses a value that differs from the default, a custom resource, and a
// field that has no default.
func TestIsServerDefault(t *testing.T) {
	svc := map[string]any{"spec": map[string]any{"ports": []any{map[string]any{"port": int64(80), "targetPort": int64(80)}}}}
	for _, tc := range []struct {
		group, kind string
		tokens      []string
		live        any
		want        bool
	}{
		{"apps", "StatefulSet", []string{"spec", "volumeClaimTemplates", "0", "kind"}, "PersistentVolumeClaim", true},
		{"apps", "StatefulSet", []string{"spec", "volumeClaimTemplates", "0", "spec", "volumeMode"}, "Block", false},
		{"admissionregistration.k8s.io", "ValidatingWebhookConfiguration", []string{"webhooks", "0", "rules", "0", "scope"}, "*", true},
		{"networking.k8s.io", "NetworkPolicy", []string{"spec", "ingress", "0", "ports", "0", "protocol"}, "TCP", true},
		{"networking.k8s.io", "NetworkPolicy", []string{"spec", "ingress", "0", "ports", "0", "protocol"}, "UDP", false},
		{"", "Service", []string{"spec", "ports", "0", "targetPort"}, int64(80), true},
		{"", "Service", []string{"spec", "ports", "0", "targetPort"}, int64(8080), false},
		{"apps", "Deployment", []string{"spec", "template", "spec", "containers", "0", "ports", "0", "protocol"}, "TCP", true},
		{"apps", "Deployment", []string{"spec", "revisionHistoryLimit"}, float64(10), true},
		{"apps", "Deployment", []string{"spec", "minReadySeconds"}, int64(0), false},
		{"batch", "Job", []string{"spec", "template", "metadata", "labels", "batch.kubernetes.io/job-name"}, "pi", true},
		{"batch", "CronJob", []string{"spec", "jobTemplate", "spec", "template", "spec", "dnsPolicy"}, "ClusterFirst", true},
		{"example.com", "Widget", []string{"spec", "replicas"}, int64(1), false},
	} {
		if got := IsServerDefault(tc.group, tc.kind, tc.tokens, tc.live, svc); got != tc.want {
			t.Errorf("%s %v = %v: got %v, want %v", tc.kind, tc.tokens, tc.live, got, tc.want)
		}
	}
}

// A Service Git switches to ClientIP gets its affinity config from the API
// server; one that sets its own config, or another affinity, gets none.
func TestAddDerivedDefaults(t *testing.T) {
	svc := func(spec map[string]any) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "Service", "spec": spec}
	}
	o := svc(map[string]any{"sessionAffinity": "ClientIP"})
	AddDerivedDefaults(o)
	if got := o["spec"].(map[string]any)["sessionAffinityConfig"]; got == nil {
		t.Error("ClientIP without a config: no default added")
	}
	own := map[string]any{"clientIP": map[string]any{"timeoutSeconds": int64(60)}}
	o = svc(map[string]any{"sessionAffinity": "ClientIP", "sessionAffinityConfig": own})
	AddDerivedDefaults(o)
	if got := o["spec"].(map[string]any)["sessionAffinityConfig"].(map[string]any)["clientIP"].(map[string]any)["timeoutSeconds"]; got != int64(60) {
		t.Errorf("the manifest's own config was replaced: %v", got)
	}
	o = svc(map[string]any{"sessionAffinity": "None"})
	AddDerivedDefaults(o)
	if got := o["spec"].(map[string]any)["sessionAffinityConfig"]; got != nil {
		t.Errorf("None got a config: %v", got)
	}
}
