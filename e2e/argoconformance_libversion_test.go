//go:build e2e

package e2e

import "testing"

// probeDeploy is a Deployment whose container has an HTTP readiness probe,
// as in Git.
const probeDeploy = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: app
        image: nginx:1.27
        readinessProbe:
          httpGet: {path: /healthz, port: 8080}
`

// libraryVersionScenarios are the cases whose answer depends on the
// version of a library Argo CD links (issue 32), run against the real
// Argo CD. istio-probe: an Istio-style webhook rewrites the probe's
// httpGet (path and port, its manager owns both) and a
// managedFieldsManagers rule hides it. Removing those fields empties
// httpGet: the structured-merge-diff Argo CD v3.2 links keeps {} and Argo
// is Synced; go.mod's (v6.4.2) gives null, after which the three-way
// patch deleted the whole httpGet and the tool said OutOfSync.
func libraryVersionScenarios() []argoScenario {
	return []argoScenario{
		{name: "istio-probe-managers", manifests: probeDeploy, target: "deployment/web",
			spec: "  ignoreDifferences:\n  - {group: apps, kind: Deployment, managedFieldsManagers: [istio-webhook]}\n",
			drift: func(t *testing.T, k func(...string) string, _ func(string, ...string), ns string) {
				k("patch", "deployment/web", "--field-manager=istio-webhook", "-p",
					`{"spec":{"template":{"spec":{"containers":[{"name":"app","readinessProbe":{"httpGet":{"path":"/app-health/app/readyz","port":15020}}}]}}}}`)
			}},
	}
}
