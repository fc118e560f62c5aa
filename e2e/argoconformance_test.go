//go:build e2e

package e2e

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kubectl-drift/kubectl-drift/internal/argocd"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/model/jsonpointer"
)

// TestArgoConformance runs kubectl-drift's Argo CD verdicts against a real,
// running Argo CD (RealArgoCD): per scenario an Application syncs manifests
// from Git, real kubectl commands (or a Git commit) make drift, Argo CD is
// hard-refreshed, and
//
//   - object level: the tool's exit code (1 = drift) against the
//     resource's `modified` in Argo's managed-resources (and the
//     Application's Synced/OutOfSync);
//   - field level: every field the tool lists (and every path Argo's diff
//     shows) is drift for both or for neither; Argo's diff is where its
//     predictedLiveState and normalizedLiveState differ;
//   - self-heal: selfHeal is switched on and what the controller actually
//     puts back is compared with the fields the tool said a sync reverts.
//
// Each level is checked twice: for explain -f (the manifest from Git) and
// for explain without -f (levels inferred-object, inferred-field,
// inferred-selfheal), which is how scan judges every object: desired state
// from managedFields and Argo CD's last-applied-configuration.
//
// Scenarios are grouped by argocd-cm settings (one settings change per
// group, scenarios of a group run in parallel). Any disagreement not listed
// in testdata/argocd-known-divergences fails the test; the agreement
// figures are printed at the end.
func TestArgoConformance(t *testing.T) {
	a := RealArgoCD(t)
	start := time.Now()
	a.Apply(t, widgetCRD)
	for i := 0; ; i++ {
		if err := a.kubectlRaw("", "wait", "--for=condition=Established", "--timeout=30s", "crd/widgets.e2e.drift.dev"); err == nil {
			break
		} else if i > 60 {
			t.Fatal(err)
		}
		time.Sleep(500 * time.Millisecond)
	}

	known := readKnownDivergences(t, filepath.Join("testdata", "argocd-known-divergences"), 3,
		"<group>/<scenario> <[inferred-]object|field|selfheal|api> <path|-> <reason>", nil)
	tally := &conformanceTally{known: known, used: map[string]bool{}}
	for _, g := range append(argoGroups(), ownerGroups()...) {
		t.Run(g.name, func(t *testing.T) {
			cm := map[string]string{}
			for k, v := range g.cm {
				cm[k] = v
			}
			a.SetConfigMap(t, "argocd-cm", cm)
			// The controller reads argocd-cm through an informer; give it a
			// moment, and every scenario hard-refreshes before it compares.
			time.Sleep(2 * time.Second)
			// Scenarios of a group run side by side (t.Run from several
			// goroutines; -parallel would cap them at GOMAXPROCS): the time
			// goes into waiting for Argo CD, not CPU.
			sem := make(chan struct{}, argoParallel)
			var wg sync.WaitGroup
			for _, sc := range g.scenarios {
				sc := sc
				wg.Add(1)
				go func() {
					defer wg.Done()
					sem <- struct{}{}
					defer func() { <-sem }()
					t.Run(sc.name, func(t *testing.T) {
						runArgoScenario(t, a, g, sc, tally)
					})
				}()
			}
			wg.Wait()
		})
	}
	runEmptyDiffScenarios(t, a)
	t.Cleanup(func() {
		tally.print(t, time.Since(start))
		for k := range known {
			if !tally.used[k] {
				// A stale entry would excuse a regression later: it fails
				// the suite, unless -run narrowed it to some scenarios.
				if wholeSuiteRan() {
					t.Errorf("known divergence not seen (fixed? remove it from testdata/argocd-known-divergences): %s", k)
				} else {
					t.Logf("known divergence not seen in this narrowed run: %s", k)
				}
			}
		}
	})
}

// argoParallel is how many scenarios run at once.
const argoParallel = 6

const widgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.e2e.drift.dev}
spec:
  group: e2e.drift.dev
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
          status: {type: object, x-kubernetes-preserve-unknown-fields: true}
`

// argoGroup is scenarios sharing one argocd-cm.
type argoGroup struct {
	name      string
	cm        map[string]string
	scenarios []argoScenario
}

// argoScenario is one Application and one drift. Manifests use $NS for the
// scenario's namespace and $NAME for a cluster-unique name.
type argoScenario struct {
	name string
	// manifests are committed to Git before the first sync.
	manifests string
	// target is what explain looks at, e.g. deployment/web.
	target string
	// spec lines added to the Application spec (ignoreDifferences...),
	// indented by two spaces.
	spec string
	// syncOptions of the Application.
	syncOptions []string
	// annotations of the Application (compare-options), "key: value" lines.
	annotations []string
	// drift runs real kubectl commands on the synced objects.
	drift func(t *testing.T, k func(args ...string) string, edit func(sed string, args ...string), ns string)
	// gitAfter, when set, is committed after the first sync (a change in
	// Git Argo has not synced).
	gitAfter string
	// noSelfHeal skips the self-heal phase.
	noSelfHeal bool
	// secretValues must never appear in the tool's output.
	secretValues []string
	// flags are extra explain flags.
	flags []string
}

const webDeploy = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web, team: shop}
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: app
        image: nginx:1.27
        env:
        - {name: MODE, value: prod}
        - {name: LEVEL, value: info}
      - name: sidecar
        image: busybox:1.36
        command: ["sleep", "3600"]
`

const webService = `apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: {app: web}
  ports:
  - {name: http, port: 80, targetPort: 8080}
`

const appConfig = `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  color: blue
  size: large
  ignored-key: v1
`

const widget = `apiVersion: e2e.drift.dev/v1
kind: Widget
metadata:
  name: gadget
spec:
  size: 3
  resources:
    requests: {cpu: 100m, memory: 64Mi}
`

const widgetWithStatus = widget + `status:
  phase: Ready
`

const aggRole = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: $NAME
aggregationRule:
  clusterRoleSelectors:
  - matchLabels: {drift-e2e/aggregate: "true"}
rules: []
`

// Issue 32's cases: objects Argo CD finds Synced once it defaults its
// target as Kubernetes does (gitops-engine pkg/diff applyPatch), a
// ServerSideApply app whose claim templates the API server completes, a
// custom resource with empty labels in Git.
const (
	// i32Webhook selects a resource nobody writes, fails open, with a rule
	// scope left to the default "*".
	i32Webhook = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: $NAME
webhooks:
- name: check.e2e.drift.dev
  admissionReviewVersions: [v1]
  sideEffects: None
  failurePolicy: Ignore
  timeoutSeconds: 1
  clientConfig: {url: "https://127.0.0.1:1/validate"}
  rules:
  - {apiGroups: [e2e.drift.dev], apiVersions: [v1], operations: [CREATE], resources: [nothings]}
`
	i32NetPol = `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: api}
spec:
  podSelector: {matchLabels: {app: api}}
  policyTypes: [Ingress]
  ingress:
  - ports:
    - {port: 8080}
`
	i32Defaults = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  revisionHistoryLimit: 10
  progressDeadlineSeconds: 600
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: app, image: nginx:1.27}
`
	i32StatefulSet = `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  serviceName: db
  replicas: 0
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers:
      - {name: db, image: postgres:16}
  volumeClaimTemplates:
  - metadata: {name: data}
    spec:
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 1Gi}}
`
	i32WidgetEmptyLabels = `apiVersion: e2e.drift.dev/v1
kind: Widget
metadata:
  name: gadget
  labels: {}
spec:
  size: 3
`
)

func withoutLine(doc, line string) string {
	out := strings.Replace(doc, line+"\n", "", 1)
	if out == doc {
		panic("line not found: " + line)
	}
	return out
}

func argoGroups() []argoGroup {
	scale := func(n string) func(*testing.T, func(...string) string, func(string, ...string), string) {
		return func(t *testing.T, k func(...string) string, _ func(string, ...string), ns string) {
			k("scale", "deployment/web", "--replicas="+n)
		}
	}
	setImage := func(t *testing.T, k func(...string) string, _ func(string, ...string), ns string) {
		k("set", "image", "deployment/web", "app=nginx:1.29")
	}
	editSidecar := func(t *testing.T, _ func(...string) string, edit func(string, ...string), ns string) {
		edit("s/busybox:1.36/busybox:1.37/", "deployment/web")
	}
	nothing := func(*testing.T, func(...string) string, func(string, ...string), string) {}
	ssa := []string{"ServerSideApply=true"}
	ssd := []string{"argocd.argoproj.io/compare-options: ServerSideDiff=true"}

	defaults := []argoScenario{
		{name: "csa-untouched", manifests: webDeploy, target: "deployment/web", drift: nothing},
		{name: "csa-scale", manifests: webDeploy, target: "deployment/web", drift: scale("5")},
		{name: "csa-set-image", manifests: webDeploy, target: "deployment/web", drift: setImage},
		{name: "csa-edit-sidecar", manifests: webDeploy, target: "deployment/web", drift: editSidecar},
		{name: "csa-label-added", manifests: webDeploy, target: "deployment/web", drift: func(t *testing.T, k func(...string) string, _ func(string, ...string), ns string) {
			k("label", "deployment/web", "hotfix=true")
		}},
		{name: "csa-annotation-added", manifests: webDeploy, target: "deployment/web", drift: func(t *testing.T, k func(...string) string, _ func(string, ...string), ns string) {
			k("annotate", "deployment/web", "oncall=alice")
		}},
		{name: "csa-patch-minreadyseconds", manifests: webDeploy, target: "deployment/web", drift: func(t *testing.T, k func(...string) string, _ func(string, ...string), ns string) {
			k("patch", "deployment/web", "--type=merge", "-p", `{"spec":{"minReadySeconds":10}}`)
		}},
		{name: "csa-label-and-scale", manifests: webDeploy, target: "deployment/web", drift: func(t *testing.T, k func(...string) string, _ func(string, ...string), ns string) {
			k("label", "deployment/web", "hotfix=true")
			k("scale", "deployment/web", "--replicas=4")
		}},
		{name: "csa-label-changed", manifests: webDeploy, target: "deployment/web", drift: func(t *testing.T, k func(...string) string, _ func(string, ...string), ns string) {
			k("label", "--overwrite", "deployment/web", "team=payments")
		}},
		{name: "csa-env-added", manifests: webDeploy, target: "deployment/web", drift: func(t *testing.T, k func(...string) string, _ func(string, ...string), ns string) {
			k("set", "env", "deployment/web", "-c", "app", "DEBUG=1")
		}},
		{name: "csa-env-changed", manifests: webDeploy, target: "deployment/web", drift: func(t *testing.T, k func(...string) string, _ func(string, ...string), ns string) {
			k("set", "env", "deployment/web", "-c", "app", "LEVEL=debug")
		}},
		{name: "csa-env-removed-live", manifests: webDeploy, target: "deployment/web", drift: func(t *testing.T, k func(...string) string, _ func(string, ...string), ns string) {
			k("set", "env", "deployment/web", "-c", "app", "LEVEL-")
		}},
		{name: "csa-label-removed-from-git", manifests: webDeploy, target: "deployment/web", drift: nothing,
			gitAfter: strings.Replace(webDeploy, "labels: {app: web, team: shop}", "labels: {app: web}", 1)},
		{name: "csa-env-removed-from-git", manifests: webDeploy, target: "deployment/web", drift: nothing,
			gitAfter: withoutLine(webDeploy, "        - {name: LEVEL, value: info}"), noSelfHeal: true},
		{name: "csa-replicas-changed-in-git", manifests: webDeploy, target: "deployment/web", drift: nothing,
			gitAfter: strings.Replace(webDeploy, "replicas: 2", "replicas: 3", 1), noSelfHeal: true},
		// Self-heal cannot put port 80 back: Argo's strategic merge keeps
		// 8080 and re-adds 80, both named http, and the API server refuses
		// the duplicate name (seen: "spec.ports[1].name: Duplicate value").
		{name: "svc-port-edited", manifests: webService, target: "service/web", noSelfHeal: true, drift: func(t *testing.T, k func(...string) string, _ func(string, ...string), ns string) {
			k("patch", "service/web", "--type=json", "-p", `[{"op":"replace","path":"/spec/ports/0/port","value":8080}]`)
		}},
		{name: "svc-port-added", manifests: webService, target: "service/web", drift: func(t *testing.T, k func(...string) string, _ func(string, ...string), ns string) {
			k("patch", "service/web", "--type=json", "-p", `[{"op":"add","path":"/spec/ports/-","value":{"name":"metrics","port":9090}}]`)
		}},
		{name: "svc-edit-targetport", manifests: webService, target: "service/web", drift: func(t *testing.T, _ func(...string) string, edit func(string, ...string), ns string) {
			// kubectl splits KUBE_EDITOR on spaces: no space in the expression.
			edit("s/8080/9000/", "service/web")
		}},
		{name: "cm-data-changed", manifests: appConfig, target: "configmap/settings", drift: func(t *testing.T, k func(...string) string, _ func(string, ...string), ns string) {
			k("patch", "configmap/settings", "--type=merge", "-p", `{"data":{"color":"red"}}`)
		}},
		{name: "cm-data-added", manifests: appConfig, target: "configmap/settings", drift: func(t *testing.T, k func(...string) string, _ func(string, ...string), ns string) {
			k("patch", "configmap/settings", "--type=merge", "-p", `{"data":{"extra":"x"}}`)
		}},
		{name: "cm-data-key-deleted", manifests: appConfig, target: "configmap/settings", drift: func(t *testing.T, k func(...string) string, _ func(string, ...string), ns string) {
			k("patch", "configmap/settings", "--type=json", "-p", `[{"op":"remove","path":"/data/size"}]`)
		}},
		{name: "secret-data-changed", target: "secret/creds", secretValues: []string{"s3cr3t-git", "czNjcjN0LWdpdA==", "hunter2-live", "aHVudGVyMi1saXZl"},
			manifests: "apiVersion: v1\nkind: Secret\nmetadata: {name: creds}\nstringData: {password: s3cr3t-git}\n",
			drift: func(t *testing.T, k func(...string) string, _ func(string, ...string), ns string) {
				k("patch", "secret/creds", "--type=merge", "-p", `{"stringData":{"password":"hunter2-live"}}`)
			}},
		{name: "secret-untouched", target: "secret/creds", secretValues: []string{"s3cr3t-git", "czNjcjN0LWdpdA=="},
			manifests: "apiVersion: v1\nkind: Secret\nmetadata: {name: creds}\nstringData: {password: s3cr3t-git}\n", drift: nothing},
		{name: "cr-spec-changed", manifests: widget, target: "widget/gadget", drift: func(t *testing.T, k func(...string) string, _ func(string, ...string), ns string) {
			k("patch", "widget/gadget", "--type=merge", "-p", `{"spec":{"size":7}}`)
		}},
		{name: "cr-status-in-git-default-all", manifests: widgetWithStatus, target: "widget/gadget", drift: nothing},
		{name: "cr-cpu-format-no-knowntypes", manifests: widget, target: "widget/gadget", drift: func(t *testing.T, k func(...string) string, _ func(string, ...string), ns string) {
			k("patch", "widget/gadget", "--type=merge", "-p", `{"spec":{"resources":{"requests":{"cpu":"0.1"}}}}`)
		}},
		{name: "aggregated-role-rules-default", manifests: aggRole, target: "clusterrole/$NAME", drift: func(t *testing.T, k func(...string) string, _ func(string, ...string), ns string) {
			k("patch", "clusterrole/"+ns, "--type=json", "-p", `[{"op":"add","path":"/rules","value":[{"apiGroups":[""],"resources":["pods"],"verbs":["get"]}]}]`)
		}},
		{name: "app-ignore-pointer", manifests: webDeploy, target: "deployment/web", drift: scale("5"),
			spec: "  ignoreDifferences:\n  - {group: apps, kind: Deployment, jsonPointers: [/spec/replicas]}\n"},
		{name: "app-ignore-pointer-other-drift", manifests: webDeploy, target: "deployment/web",
			spec: "  ignoreDifferences:\n  - {group: apps, kind: Deployment, jsonPointers: [/spec/replicas]}\n",
			drift: func(t *testing.T, k func(...string) string, _ func(string, ...string), ns string) {
				k("scale", "deployment/web", "--replicas=5")
				k("set", "image", "deployment/web", "app=nginx:1.29")
			}},
		{name: "app-ignore-respect", manifests: webDeploy, target: "deployment/web", syncOptions: []string{"RespectIgnoreDifferences=true"},
			spec: "  ignoreDifferences:\n  - {group: apps, kind: Deployment, jsonPointers: [/spec/replicas]}\n",
			drift: func(t *testing.T, k func(...string) string, _ func(string, ...string), ns string) {
				k("scale", "deployment/web", "--replicas=5")
				k("set", "image", "deployment/web", "app=nginx:1.29")
			}},
		{name: "app-ignore-respect-scale-only", manifests: webDeploy, target: "deployment/web", syncOptions: []string{"RespectIgnoreDifferences=true"},
			spec: "  ignoreDifferences:\n  - {group: apps, kind: Deployment, jsonPointers: [/spec/replicas]}\n", drift: scale("5")},
		{name: "app-ignore-pointer-label-added", manifests: webDeploy, target: "deployment/web",
			spec: "  ignoreDifferences:\n  - {group: apps, kind: Deployment, jsonPointers: [/spec/replicas]}\n",
			drift: func(t *testing.T, k func(...string) string, _ func(string, ...string), ns string) {
				// An extraneous label does not make the object OutOfSync: no
				// sync, so the ignored replicas stay.
				k("scale", "deployment/web", "--replicas=5")
				k("label", "deployment/web", "hotfix=true")
			}},
		{name: "app-ignore-jq", manifests: webDeploy, target: "deployment/web", drift: editSidecar,
			spec: "  ignoreDifferences:\n  - group: apps\n    kind: Deployment\n    jqPathExpressions: ['.spec.template.spec.containers[] | select(.name == \"sidecar\") | .image']\n"},
		{name: "app-ignore-managers", manifests: webDeploy, target: "deployment/web", drift: setImage,
			spec: "  ignoreDifferences:\n  - {group: apps, kind: Deployment, managedFieldsManagers: [kubectl-set]}\n"},
		{name: "app-ignore-managers-other", manifests: webDeploy, target: "deployment/web", drift: editSidecar,
			spec: "  ignoreDifferences:\n  - {group: apps, kind: Deployment, managedFieldsManagers: [kubectl-set]}\n"},
		{name: "app-ignore-name-match", manifests: webDeploy, target: "deployment/web", drift: scale("4"),
			spec: "  ignoreDifferences:\n  - {group: apps, kind: Deployment, name: web, jsonPointers: [/spec/replicas]}\n"},
		{name: "app-ignore-name-mismatch", manifests: webDeploy, target: "deployment/web", drift: scale("4"),
			spec: "  ignoreDifferences:\n  - {group: apps, kind: Deployment, name: api, jsonPointers: [/spec/replicas]}\n"},
		{name: "app-ignore-namespace-mismatch", manifests: webDeploy, target: "deployment/web", drift: scale("4"),
			spec: "  ignoreDifferences:\n  - {group: apps, kind: Deployment, namespace: elsewhere, jsonPointers: [/spec/replicas]}\n"},
		{name: "app-ignore-group-typo", manifests: webDeploy, target: "deployment/web", drift: scale("4"),
			spec: "  ignoreDifferences:\n  - {group: app, kind: Deployment, jsonPointers: [/spec/replicas]}\n"},
		{name: "app-ignore-core-configmap", manifests: appConfig, target: "configmap/settings",
			spec: "  ignoreDifferences:\n  - {kind: ConfigMap, jsonPointers: [/data/color]}\n",
			drift: func(t *testing.T, k func(...string) string, _ func(string, ...string), ns string) {
				k("patch", "configmap/settings", "--type=merge", "-p", `{"data":{"color":"red"}}`)
			}},
		{name: "ssa-scale", manifests: webDeploy, target: "deployment/web", syncOptions: ssa, drift: scale("5")},
		{name: "ssa-set-image", manifests: webDeploy, target: "deployment/web", syncOptions: ssa, drift: setImage},
		{name: "ssa-label-added", manifests: webDeploy, target: "deployment/web", syncOptions: ssa, drift: func(t *testing.T, k func(...string) string, _ func(string, ...string), ns string) {
			k("label", "deployment/web", "hotfix=true")
		}},
		{name: "ssa-edit-sidecar", manifests: webDeploy, target: "deployment/web", syncOptions: ssa, drift: editSidecar},
		{name: "ssa-patch-minreadyseconds", manifests: webDeploy, target: "deployment/web", syncOptions: ssa, drift: func(t *testing.T, k func(...string) string, _ func(string, ...string), ns string) {
			k("patch", "deployment/web", "--type=merge", "-p", `{"spec":{"minReadySeconds":10}}`)
		}},
		{name: "ssa-label-removed-from-git", manifests: webDeploy, target: "deployment/web", syncOptions: ssa, drift: nothing,
			gitAfter: strings.Replace(webDeploy, "labels: {app: web, team: shop}", "labels: {app: web}", 1)},
		{name: "ssa-svc-port-edited", manifests: webService, target: "service/web", syncOptions: ssa, noSelfHeal: true, drift: func(t *testing.T, k func(...string) string, _ func(string, ...string), ns string) {
			k("patch", "service/web", "--type=json", "-p", `[{"op":"replace","path":"/spec/ports/0/port","value":8080}]`)
		}},
		{name: "ssd-scale", manifests: webDeploy, target: "deployment/web", annotations: ssd, drift: scale("5"), flags: []string{"--server-dry-run"}},
		{name: "ssd-label-added", manifests: webDeploy, target: "deployment/web", annotations: ssd, flags: []string{"--server-dry-run"},
			drift: func(t *testing.T, k func(...string) string, _ func(string, ...string), ns string) {
				k("label", "deployment/web", "hotfix=true")
			}},
		{name: "ssd-ssa-set-image", manifests: webDeploy, target: "deployment/web", annotations: ssd, syncOptions: ssa, drift: setImage, flags: []string{"--server-dry-run"}},
		{name: "ssd-label-removed-from-git", manifests: webDeploy, target: "deployment/web", annotations: ssd, syncOptions: ssa, drift: nothing, flags: []string{"--server-dry-run"},
			gitAfter: strings.Replace(webDeploy, "labels: {app: web, team: shop}", "labels: {app: web}", 1)},
	}

	cmRules := map[string]string{
		"resource.customizations.ignoreDifferences.apps_Deployment":     "jsonPointers:\n- /spec/replicas\n",
		"resource.customizations.ignoreDifferences.all":                 "managedFieldsManagers:\n- hpa-sim\n",
		"resource.customizations.ignoreDifferences.ConfigMap":           "jqPathExpressions:\n- .data[\"ignored-key\"]\n",
		"resource.customizations.knownTypeFields.e2e.drift.dev_Widget":  "- field: spec.resources\n  type: core/v1/ResourceRequirements\n",
		"resource.customizations.ignoreResourceUpdates.apps_Deployment": "jsonPointers:\n- /spec/template/spec/containers/0/image\n",
		"resource.compareoptions":                                       "ignoreDifferencesOnResourceUpdates: false\n",
	}
	customizations := []argoScenario{
		{name: "cmr-kind-pointer", manifests: webDeploy, target: "deployment/web", drift: scale("6")},
		{name: "cmr-kind-pointer-other-drift", manifests: webDeploy, target: "deployment/web", drift: func(t *testing.T, k func(...string) string, _ func(string, ...string), ns string) {
			k("scale", "deployment/web", "--replicas=6")
			k("label", "--overwrite", "deployment/web", "team=payments")
		}},
		{name: "cmr-all-managers", manifests: appConfig, target: "configmap/settings", drift: func(t *testing.T, k func(...string) string, _ func(string, ...string), ns string) {
			k("patch", "configmap/settings", "--field-manager=hpa-sim", "--type=merge", "-p", `{"data":{"color":"red"}}`)
		}},
		{name: "cmr-all-managers-other-manager", manifests: appConfig, target: "configmap/settings", drift: func(t *testing.T, k func(...string) string, _ func(string, ...string), ns string) {
			k("patch", "configmap/settings", "--type=merge", "-p", `{"data":{"color":"red"}}`)
		}},
		{name: "cmr-all-managers-service", manifests: webService, target: "service/web", drift: func(t *testing.T, k func(...string) string, _ func(string, ...string), ns string) {
			k("patch", "service/web", "--field-manager=hpa-sim", "--type=merge", "-p", `{"spec":{"selector":{"app":"web2"}}}`)
		}},
		{name: "cmr-kind-only-jq", manifests: appConfig, target: "configmap/settings", drift: func(t *testing.T, k func(...string) string, _ func(string, ...string), ns string) {
			k("patch", "configmap/settings", "--type=merge", "-p", `{"data":{"ignored-key":"v2"}}`)
		}},
		{name: "cmr-knowntypes-cpu-format", manifests: widget, target: "widget/gadget", drift: func(t *testing.T, k func(...string) string, _ func(string, ...string), ns string) {
			k("patch", "widget/gadget", "--type=merge", "-p", `{"spec":{"resources":{"requests":{"cpu":"0.1"}}}}`)
		}},
		{name: "cmr-knowntypes-cpu-changed", manifests: widget, target: "widget/gadget", drift: func(t *testing.T, k func(...string) string, _ func(string, ...string), ns string) {
			k("patch", "widget/gadget", "--type=merge", "-p", `{"spec":{"resources":{"requests":{"cpu":"200m"}}}}`)
		}},
		{name: "cmr-ignore-resource-updates-not-drift", manifests: webDeploy, target: "deployment/web", drift: setImage},
	}

	statusCRD := []argoScenario{
		{name: "st-crd-cr-status-in-git", manifests: widgetWithStatus, target: "widget/gadget", drift: nothing, noSelfHeal: true},
		{name: "st-crd-cr-status-matches", manifests: widgetWithStatus, target: "widget/gadget", noSelfHeal: true,
			drift: func(t *testing.T, k func(...string) string, _ func(string, ...string), ns string) {
				k("patch", "widget/gadget", "--subresource=status", "--type=merge", "-p", `{"status":{"phase":"Ready"}}`)
			}},
		{name: "st-crd-deploy-status-live-only", manifests: webDeploy, target: "deployment/web", noSelfHeal: true,
			drift: func(t *testing.T, k func(...string) string, _ func(string, ...string), ns string) {
				k("patch", "deployment/web", "--subresource=status", "--type=merge", "-p", `{"status":{"observedGeneration":1,"replicas":2}}`)
			}},
	}
	statusNone := []argoScenario{
		{name: "st-none-cr-status-in-git", manifests: widgetWithStatus, target: "widget/gadget", drift: nothing, noSelfHeal: true},
		{name: "st-none-cr-status-differs", manifests: widgetWithStatus, target: "widget/gadget", noSelfHeal: true,
			drift: func(t *testing.T, k func(...string) string, _ func(string, ...string), ns string) {
				k("patch", "widget/gadget", "--subresource=status", "--type=merge", "-p", `{"status":{"phase":"Failed"}}`)
			}},
		{name: "st-none-deploy-status-live-only", manifests: webDeploy, target: "deployment/web", noSelfHeal: true,
			drift: func(t *testing.T, k func(...string) string, _ func(string, ...string), ns string) {
				k("patch", "deployment/web", "--subresource=status", "--type=merge", "-p", `{"status":{"observedGeneration":1,"replicas":2}}`)
			}},
	}
	aggregated := []argoScenario{
		{name: "aggregated-role-rules-ignored", manifests: aggRole, target: "clusterrole/$NAME", drift: func(t *testing.T, k func(...string) string, _ func(string, ...string), ns string) {
			k("patch", "clusterrole/"+ns, "--type=json", "-p", `[{"op":"add","path":"/rules","value":[{"apiGroups":[""],"resources":["pods"],"verbs":["get"]}]}]`)
		}},
		{name: "role-rules-changed-not-aggregated", target: "role/reader",
			manifests: "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: reader}\nrules:\n- {apiGroups: [\"\"], resources: [pods], verbs: [get]}\n",
			drift: func(t *testing.T, k func(...string) string, _ func(string, ...string), ns string) {
				k("patch", "role/reader", "--type=json", "-p", `[{"op":"add","path":"/rules/0/verbs/-","value":"list"}]`)
			}},
	}
	issue32 := []argoScenario{
		{name: "i32-webhook-untouched", manifests: i32Webhook, target: "validatingwebhookconfiguration/$NAME", drift: nothing, noSelfHeal: true},
		{name: "i32-webhook-cabundle-jq", manifests: i32Webhook, target: "validatingwebhookconfiguration/$NAME", noSelfHeal: true,
			drift: func(t *testing.T, k func(...string) string, _ func(string, ...string), ns string) {
				k("patch", "validatingwebhookconfiguration/"+ns, "--field-manager=cainjector", "--type=json", "-p",
					`[{"op":"add","path":"/webhooks/0/clientConfig/caBundle","value":"`+base64.StdEncoding.EncodeToString([]byte("not a real CA"))+`"}]`)
			}},
		{name: "i32-netpol-no-protocol", manifests: i32NetPol, target: "networkpolicy/api", drift: nothing, noSelfHeal: true},
		{name: "i32-defaults-removed-from-git", manifests: i32Defaults, target: "deployment/web", drift: nothing, noSelfHeal: true,
			gitAfter: withoutLine(withoutLine(i32Defaults, "  revisionHistoryLimit: 10"), "  progressDeadlineSeconds: 600")},
		{name: "i32-ssa-statefulset-claims", manifests: i32StatefulSet, target: "statefulset/db", syncOptions: ssa, drift: nothing, noSelfHeal: true},
		{name: "i32-cr-empty-labels", manifests: i32WidgetEmptyLabels, target: "widget/gadget", drift: nothing, noSelfHeal: true},
	}
	return []argoGroup{
		{name: "issue32", cm: map[string]string{
			"resource.customizations.ignoreDifferences.admissionregistration.k8s.io_ValidatingWebhookConfiguration": "jqPathExpressions:\n- .webhooks[]?.clientConfig.caBundle\n",
		}, scenarios: issue32},
		{name: "defaults", cm: map[string]string{}, scenarios: defaults},
		{name: "customizations", cm: cmRules, scenarios: customizations},
		{name: "status-crd", cm: map[string]string{"resource.compareoptions": "ignoreResourceStatusField: crd\n"}, scenarios: statusCRD},
		{name: "status-none", cm: map[string]string{"resource.compareoptions": "ignoreResourceStatusField: none\n"}, scenarios: statusNone},
		{name: "aggregated-roles", cm: map[string]string{"resource.compareoptions": "ignoreAggregatedRoles: true\n"}, scenarios: aggregated},
		{name: "library-versions", cm: map[string]string{}, scenarios: libraryVersionScenarios()},
	}
}

// ---- one scenario ----

func runArgoScenario(t *testing.T, a *ArgoCD, g argoGroup, sc argoScenario, tally *conformanceTally) {
	id := g.name + "/" + sc.name
	ns := E.argoNamespace(t, a, sc.name)
	app := "c-" + ns
	subst := func(s string) string {
		return strings.ReplaceAll(strings.ReplaceAll(s, "$NS", ns), "$NAME", ns)
	}
	dir := "apps/" + ns
	a.Commit(t, "add "+id, map[string]string{dir + "/manifests.yaml": subst(sc.manifests)})

	spec := fmt.Sprintf("  project: default\n  source: {repoURL: %q, path: %s, targetRevision: HEAD}\n  destination: {server: https://kubernetes.default.svc, namespace: %s}\n",
		a.RepoURL, dir, ns)
	if len(sc.syncOptions) > 0 {
		spec += "  syncPolicy:\n    syncOptions: [" + strings.Join(sc.syncOptions, ", ") + "]\n"
	}
	spec += sc.spec
	var ann string
	for _, l := range sc.annotations {
		ann += "    " + l + "\n"
	}
	a.CreateApp(t, app, ann, spec)
	t.Cleanup(func() {
		if os.Getenv("DRIFT_E2E_KEEP") == "" {
			_ = a.kubectlRaw("", "-n", a.Namespace, "delete", "application", app, "--wait=false")
		}
	})
	a.waitOperation(t, app, 90*time.Second)

	k := func(args ...string) string {
		return a.Kubectl(t, append([]string{"-n", ns}, args...)...)
	}
	edit := func(sed string, args ...string) {
		a.KubectlWith(t, RunOpts{Env: []string{"KUBE_EDITOR=sed -i " + sed}}, append([]string{"-n", ns, "edit"}, args...)...)
	}
	sc.drift(t, k, edit, ns)
	desiredYAML := subst(sc.manifests)
	if sc.gitAfter != "" {
		desiredYAML = subst(sc.gitAfter)
		a.Commit(t, "change "+id, map[string]string{dir + "/manifests.yaml": desiredYAML})
	}

	target := subst(sc.target)
	kind, name, _ := strings.Cut(target, "/")
	st, item := a.refreshedItem(t, app, kind, name)
	for _, c := range st.Conditions {
		if strings.Contains(c.Type, "Error") {
			t.Logf("%s: Application condition %s: %s", id, c.Type, c.Message)
		}
	}

	// The tool, as a user runs it: desired state from the same Git content.
	desired := filepath.Join(t.TempDir(), "desired.yaml")
	if err := os.WriteFile(desired, []byte(desiredYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	// explainArgs: explain with the manifest from Git (-f), or without it
	// (inferred mode, as scan judges).
	explainArgs := func(file string) []string {
		args := []string{"explain", target, "--engine", "argocd", "--argocd-namespace", a.Namespace, "-o", "json"}
		if file != "" {
			args = append(args, "-f", file)
		}
		if ns != "" && kind != "clusterrole" {
			args = append(args, "-n", ns)
		}
		return append(args, sc.flags...)
	}
	explain := func(what string, args []string) (model.Report, int) {
		res := E.Run(t, RunOpts{Kubeconfig: a.Kubeconfig}, KubectlDrift, args...)
		if res.Code != 0 && res.Code != 1 {
			t.Fatalf("%s: %s: exit %d\nstdout:\n%s\nstderr:\n%s", id, what, res.Code, res.Stdout, res.Stderr)
		}
		for _, v := range sc.secretValues {
			if strings.Contains(res.Stdout, v) || strings.Contains(res.Stderr, v) {
				t.Errorf("%s: %s printed a Secret value", id, what)
			}
		}
		var rep model.Report
		DecodeJSON(t, res.Stdout, &rep)
		return rep, res.Code
	}
	args := explainArgs(desired)
	rep, code := explain("explain -f", args)

	// Object level.
	argoOut := item.Modified
	toolOut := code == 1
	appOut := st.Sync.Status == "OutOfSync"
	if appOut != argoOut {
		t.Logf("%s: Application is %s while the resource's modified=%v", id, st.Sync.Status, argoOut)
	}
	tally.object(t, id, "", argoOut, toolOut, rep)

	// Field level: Argo's diff paths against the tool's fields.
	argoPaths := filterArgoPaths(diffPaths(item.PredictedLive, item.NormalizedLive, ""))
	tally.fields(t, id, "", argoPaths, rep)

	// With Argo CD's API the tool reads Argo's own answer: it must be the
	// object verdict, and a note must say where it came from.
	apiRes := E.Run(t, RunOpts{Kubeconfig: a.Kubeconfig}, KubectlDrift, append(args, "--argocd-server", a.Server, "--argocd-plaintext")...)
	var apiRep model.Report
	DecodeJSON(t, apiRes.Stdout, &apiRep)
	apiNote := false
	for _, n := range apiRep.Notes {
		if n.Reason == "argocd-api" && strings.Contains(n.Message, "Argo CD's own diff") {
			apiNote = true
		}
	}
	if !apiNote {
		t.Errorf("%s: with --argocd-server no note on Argo CD's own diff: %+v", id, apiRep.Notes)
	}
	tally.api(t, id, argoOut, apiRes.Code == 1)

	// Inferred mode: the same object explained without -f, exactly as scan
	// sees it (desired state from managedFields and last-applied).
	infRep, infCode := explain("explain without -f", explainArgs(""))
	tally.object(t, id, "inferred-", argoOut, infCode == 1, infRep)
	tally.fields(t, id, "inferred-", argoPaths, infRep)
	captureArgoLive(t, a, id, kind, name, ns)

	if sc.noSelfHeal {
		return
	}
	getArgs := []string{"get", kind, name, "-o", "json"}
	if kind != "clusterrole" {
		getArgs = append([]string{"-n", ns}, getArgs...)
	}
	var before map[string]any
	DecodeJSON(t, a.Kubectl(t, getArgs...), &before)
	// Self-heal: what the controller actually puts back.
	a.Kubectl(t, "-n", a.Namespace, "patch", "application", app, "--type=merge", "-p", `{"spec":{"syncPolicy":{"automated":{"selfHeal":true}}}}`)
	if argoOut {
		a.WaitSynced(t, app, 90*time.Second)
	} else {
		// Nothing to heal: give the controller the time it would take.
		time.Sleep(3 * time.Second)
	}
	var after map[string]any
	DecodeJSON(t, a.Kubectl(t, getArgs...), &after)
	tally.selfHeal(t, id, "", rep, before, after)
	tally.selfHeal(t, id, "inferred-", infRep, before, after)
}

// captureArgoLive writes the drifted live object (with managedFields) and
// its Application to $DRIFT_E2E_ARGO_CAPTURE/<group>_<scenario>/ when set:
// how internal/argocd's inferred-mode goldens are taken from the real
// controller's objects (see internal/argocd/testdata/inferred/README.md).
func captureArgoLive(t *testing.T, a *ArgoCD, id, kind, name, ns string) {
	t.Helper()
	dir := os.Getenv("DRIFT_E2E_ARGO_CAPTURE")
	if dir == "" {
		return
	}
	out := filepath.Join(dir, strings.ReplaceAll(id, "/", "_"))
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	get := []string{"get", kind, name, "-o", "json", "--show-managed-fields"}
	if kind != "clusterrole" {
		get = append([]string{"-n", ns}, get...)
	}
	files := map[string]string{
		"live.json":        a.Kubectl(t, get...),
		"application.json": a.Kubectl(t, "-n", a.Namespace, "get", "application", "c-"+ns, "-o", "json"),
	}
	for f, body := range files {
		if err := os.WriteFile(filepath.Join(out, f), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// argoNamespace creates a namespace on Argo CD's cluster, named after the
// scenario (also used as a cluster-unique name for cluster-scoped objects).
func (e *Env) argoNamespace(t *testing.T, a *ArgoCD, scenario string) string {
	t.Helper()
	ns := uniqueName("", scenario, 47)
	a.Kubectl(t, "create", "namespace", ns)
	return ns
}

// refreshedItem hard-refreshes app and returns its status and Argo CD's
// managed-resources item for kind/name. A hard refresh that finds a
// refresh already running can return before it sees the drift (seen once:
// kubectl scale read as Synced, OutOfSync a second later): it reads until
// two refreshes agree.
func (a *ArgoCD) refreshedItem(t *testing.T, app, kind, name string) (AppStatus, *ManagedResource) {
	t.Helper()
	var st AppStatus
	var item *ManagedResource
	for i := 0; i < 4; i++ {
		prev := item
		st = a.RefreshHard(t, app)
		item = nil
		for _, mr := range a.ManagedResources(t, app) {
			if strings.EqualFold(mr.Kind, kind) && mr.Name == name {
				mr := mr
				item = &mr
			}
		}
		if item == nil {
			t.Fatalf("Argo CD's managed resources of %s do not list %s/%s", app, kind, name)
		}
		if prev != nil && prev.Modified == item.Modified && reflect.DeepEqual(prev.PredictedLive, item.PredictedLive) {
			break
		}
		time.Sleep(time.Second)
	}
	return st, item
}

// waitOperation waits for the first sync to finish (Succeeded), failing
// with the operation's message otherwise.
func (a *ArgoCD) waitOperation(t *testing.T, app string, timeout time.Duration) {
	t.Helper()
	start := time.Now()
	for {
		st := a.App(t, app, "")
		if st.OperationState != nil {
			switch st.OperationState.Phase {
			case "Succeeded":
				return
			case "Failed", "Error":
				t.Fatalf("Application %s: first sync %s: %s", app, st.OperationState.Phase, st.OperationState.Message)
			}
		}
		if time.Since(start) > timeout {
			b, _ := json.Marshal(st)
			t.Fatalf("Application %s: first sync not finished after %s; status %s\ncontroller log:\n%s", app, time.Since(start).Round(time.Second), b, a.LogTail("controller", 15))
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// diffPaths lists the top-most JSON pointers where a and b differ (lists of
// different length count as one change of the whole list).
func diffPaths(a, b any, prefix string) []string {
	root := func() []string {
		if prefix == "" {
			return []string{"/"}
		}
		return []string{prefix}
	}
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			return root()
		}
		keys := map[string]bool{}
		for k := range x {
			keys[k] = true
		}
		for k := range y {
			keys[k] = true
		}
		var sorted []string
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		var out []string
		for _, k := range sorted {
			out = append(out, diffPaths(x[k], y[k], prefix+"/"+jsonpointer.Escape(k))...)
		}
		return out
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return root()
		}
		var out []string
		for i := range x {
			out = append(out, diffPaths(x[i], y[i], prefix+"/"+strconv.Itoa(i))...)
		}
		return out
	}
	if !reflect.DeepEqual(a, b) {
		return root()
	}
	return nil
}

// filterArgoPaths drops bookkeeping Argo's states carry that is not a
// user-visible difference.
func filterArgoPaths(paths []string) []string {
	var out []string
	for _, p := range paths {
		switch {
		case p == "/metadata/managedFields" || strings.HasPrefix(p, "/metadata/managedFields/"),
			p == "/metadata/resourceVersion", p == "/metadata/generation",
			p == "/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration":
			continue
		}
		out = append(out, p)
	}
	return out
}

func pathCovers(a, b string) bool {
	return a == b || a == "/" || strings.HasPrefix(b, a+"/")
}

// toolSaysOutOfSync: the tool's Argo CD verdict makes the field count for
// Argo's sync status.
func toolSaysOutOfSync(d model.FieldDrift) (bool, *model.Verdict) {
	v := argoVerdictOf(d)
	if v == nil {
		return false, nil
	}
	return v.Kind == model.Reported || v.Kind == model.Reverted, v
}

// ---- tally and known divergences ----

type conformanceTally struct {
	mu sync.Mutex
	// agree and total count comparisons by level: object, field,
	// selfheal, api, and inferred-object, inferred-field,
	// inferred-selfheal for the same scenario explained without -f.
	agree, total map[string]int
	scenarios    int
	known        map[string]string
	used         map[string]bool
	knownHits    int
	// unknown counts inferred-mode verdicts that said unknown (Git
	// decides, and the object no longer records Git), by level: neither
	// agreement nor disagreement, capped by argoInferredUnknownCap.
	unknown map[string]int
}

// argoInferredUnknownCap is the most inferred-mode `unknown` field verdicts
// the suite accepts (issue 30: a change that made every verdict unknown
// would otherwise pass). Session 13 (I4): the three M1 scenarios (a
// person's kubectl apply of Git's manifest with color changed) say unknown
// on /data/color at the field and self-heal levels, where the confident
// verdict was right there but wrong in differential seeds 50023, 50224 and
// 50204 (the same apply, setting a patched field back to Git's value).
const argoInferredUnknownCap = 6

// unknownApart counts an inferred-mode unknown verdict apart and says so.
func (c *conformanceTally) unknownApart(mode, level string, v *model.Verdict) bool {
	if mode != "inferred-" || v == nil || v.Kind != model.Unknown {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.unknown == nil {
		c.unknown = map[string]int{}
	}
	c.unknown[mode+level]++
	return true
}

// check records one comparison; a disagreement fails the test unless
// listed as a known divergence (key "<group>/<scenario> <level> <path>").
func (c *conformanceTally) check(t *testing.T, id, level, path string, agree bool, detail string) {
	t.Helper()
	key := id + " " + level + " " + path
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.total == nil {
		c.agree, c.total = map[string]int{}, map[string]int{}
	}
	c.total[level]++
	if agree {
		c.agree[level]++
		return
	}
	if reason, ok := c.known[key]; ok {
		c.used[key] = true
		c.knownHits++
		t.Logf("known divergence %s: %s (%s)", key, detail, reason)
		return
	}
	t.Errorf("DISAGREE %s: %s", key, detail)
}

// object: the tool's exit code against Argo CD's modified. mode is "" for
// explain -f, "inferred-" for explain without -f (as scan sees it).
func (c *conformanceTally) object(t *testing.T, id, mode string, argoOut, toolOut bool, rep model.Report) {
	t.Helper()
	if mode == "" {
		c.mu.Lock()
		c.scenarios++
		c.mu.Unlock()
	}
	word := map[bool]string{true: "OutOfSync", false: "Synced"}
	c.check(t, id, mode+"object", "-", argoOut == toolOut,
		fmt.Sprintf("Argo CD says %s, the tool exits %s; fields: %s", word[argoOut], map[bool]string{true: "1", false: "0"}[toolOut], verdictSummary(rep)))
}

// api: with --argocd-server the exit code is Argo CD's own status.
func (c *conformanceTally) api(t *testing.T, id string, argoOut, toolOut bool) {
	t.Helper()
	c.check(t, id, "api", "-", argoOut == toolOut, fmt.Sprintf("with --argocd-server: Argo CD modified=%v, the tool's exit says %v", argoOut, toolOut))
}

func (c *conformanceTally) fields(t *testing.T, id, mode string, argoPaths []string, rep model.Report) {
	t.Helper()
	matched := map[string]bool{}
	for _, d := range rep.Drifts {
		toolOut, v := toolSaysOutOfSync(d)
		if c.unknownApart(mode, "field", v) {
			// Still matched, so that Argo CD's path is not reported as
			// a field the tool did not list.
			for _, p := range argoPaths {
				if pathCovers(p, d.Path) || pathCovers(d.Path, p) {
					matched[p] = true
				}
			}
			continue
		}
		argoOut := false
		for _, p := range argoPaths {
			if pathCovers(p, d.Path) || pathCovers(d.Path, p) {
				argoOut = true
				matched[p] = true
			}
		}
		reason := "no Argo CD verdict"
		if v != nil {
			reason = string(v.Kind) + ": " + v.Reason
			// Every hidden field names the rule that hid it.
			if (v.Kind == model.Ignored && v.Rule == nil) || strings.Contains(v.Reason, "after normalization") {
				t.Errorf("%s (%sexplain): %s hidden without naming the rule: %s", id, mode, d.Path, reason)
			}
		}
		c.check(t, id, mode+"field", d.Path, toolOut == argoOut,
			fmt.Sprintf("Argo CD's diff %s %s; the tool: %s", map[bool]string{true: "shows", false: "does not show"}[argoOut], d.Path, reason))
	}
	for _, p := range argoPaths {
		if matched[p] {
			continue
		}
		c.check(t, id, mode+"field", p, false, fmt.Sprintf("Argo CD's diff shows %s; the tool lists no such field (fields: %s)", p, verdictSummary(rep)))
	}
}

// selfHeal: a field the tool says a sync reverts must have changed (back
// to Git's value: the report's values may be masked, so the test compares
// the object before and after); any other drifted field must be kept.
func (c *conformanceTally) selfHeal(t *testing.T, id, mode string, rep model.Report, before, after map[string]any) {
	t.Helper()
	for _, d := range rep.Drifts {
		if strings.HasPrefix(d.Path, "/status") {
			continue
		}
		toolOut, v := toolSaysOutOfSync(d)
		if c.unknownApart(mode, "selfheal", v) {
			continue
		}
		if v != nil && v.Kind == model.Ignored && strings.Contains(v.Reason, argocd.SyncReappliesPhrase) {
			// Hidden from the diff, but the sync of the OutOfSync object
			// writes it back, and the tool says so.
			toolOut = true
		}
		was, wasPresent := jsonpointer.Get(before, d.Path)
		now, present := jsonpointer.Get(after, d.Path)
		putBack := wasPresent != present || !jsonSame(was, now)
		reason := "no verdict"
		if v != nil {
			reason = string(v.Kind)
		}
		c.check(t, id, mode+"selfheal", d.Path, toolOut == putBack,
			fmt.Sprintf("after self-heal %s is %s; the tool said %s", d.Path, map[bool]string{true: "put back", false: "kept"}[putBack], reason))
	}
}

func jsonSame(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func verdictSummary(r model.Report) string {
	var parts []string
	for _, d := range r.Drifts {
		v := argoVerdictOf(d)
		k := "-"
		if v != nil {
			k = string(v.Kind)
		}
		parts = append(parts, d.Path+"="+k)
	}
	if len(parts) == 0 {
		return "(none)"
	}
	return strings.Join(parts, ", ")
}

func pct(a, b int) string {
	if b == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(a)/float64(b))
}

func (c *conformanceTally) print(t *testing.T, took time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	line := func(level, what string) string {
		return fmt.Sprintf("\n  %-62s %d/%d agree (%s)", what+":", c.agree[level], c.total[level], pct(c.agree[level], c.total[level]))
	}
	msg := fmt.Sprintf("Argo CD %s conformance: %d scenarios in %s", ArgoCDVersion, c.scenarios, took.Round(time.Second)) +
		line("object", "object level (exit code vs Argo's Synced/OutOfSync)") +
		line("field", "field level (tool verdicts vs Argo's diff paths)") +
		line("selfheal", "self-heal (reverted vs what the controller put back)") +
		line("api", "object level with --argocd-server (Argo's own diff read)") +
		line("inferred-object", "inferred (no -f, as scan): object level") +
		line("inferred-field", "inferred (no -f, as scan): field level") +
		line("inferred-selfheal", "inferred (no -f, as scan): self-heal") +
		fmt.Sprintf("\n  inferred unknown (not compared): field %d, self-heal %d (cap %d in all)", c.unknown["inferred-field"], c.unknown["inferred-selfheal"], argoInferredUnknownCap) +
		fmt.Sprintf("\n  disagreements listed as known divergences: %d", c.knownHits)
	t.Log(msg)
	fmt.Fprintln(os.Stderr, msg)
	if n := c.unknown["inferred-field"] + c.unknown["inferred-selfheal"]; n > argoInferredUnknownCap && wholeSuiteRan() {
		t.Errorf("inferred mode: %d unknown verdicts, above the cap of %d (argoInferredUnknownCap)", n, argoInferredUnknownCap)
	}
}

// syncedWebApp commits webDeploy, creates a manual Application for it in
// a fresh namespace and waits for its first sync (client-side apply).
func syncedWebApp(t *testing.T, a *ArgoCD, name string) (ns, app string) {
	t.Helper()
	ns = E.argoNamespace(t, a, name)
	dir := "apps/" + ns
	a.Commit(t, "add "+ns, map[string]string{dir + "/manifests.yaml": webDeploy})
	app = "c-" + ns
	a.CreateApp(t, app, "", fmt.Sprintf("  project: default\n  source: {repoURL: %q, path: %s, targetRevision: HEAD}\n  destination: {server: https://kubernetes.default.svc, namespace: %s}\n", a.RepoURL, dir, ns))
	t.Cleanup(func() {
		if os.Getenv("DRIFT_E2E_KEEP") == "" {
			_ = a.kubectlRaw("", "-n", a.Namespace, "delete", "application", app, "--wait=false")
		}
	})
	a.waitOperation(t, app, 90*time.Second)
	return ns, app
}

// TestArgoAPIBadInput: an unreachable Argo CD API is one warning note and
// the local verdict (same exit code); an Application whose repository
// cannot be fetched is said so, and Argo invents no verdict.
func TestArgoAPIBadInput(t *testing.T) {
	a := RealArgoCD(t)
	ns, app := syncedWebApp(t, a, "api-bad-input")
	a.Kubectl(t, "-n", ns, "scale", "deployment/web", "--replicas=5")
	desired := filepath.Join(t.TempDir(), "web.yaml")
	if err := os.WriteFile(desired, []byte(webDeploy), 0o644); err != nil {
		t.Fatal(err)
	}
	base := []string{"explain", "deployment/web", "-n", ns, "-f", desired, "--engine", "argocd", "-o", "json"}
	local := E.Run(t, RunOpts{Kubeconfig: a.Kubeconfig}, KubectlDrift, base...)
	if local.Code != 1 {
		t.Fatalf("local: exit %d, want 1\n%s", local.Code, local.Stderr)
	}
	findNote := func(r model.Report, reason string) *model.Note {
		for i := range r.Notes {
			if r.Notes[i].Reason == reason {
				return &r.Notes[i]
			}
		}
		return nil
	}
	for _, server := range []string{"127.0.0.1:1", a.Server + "/nothing-here"} {
		res := E.Run(t, RunOpts{Kubeconfig: a.Kubeconfig}, KubectlDrift, append(base, "--argocd-server", server, "--argocd-plaintext", "--argocd-token", "wrong")...)
		if res.Code != local.Code {
			t.Errorf("--argocd-server %s: exit %d, want %d as without it", server, res.Code, local.Code)
		}
		var r model.Report
		DecodeJSON(t, res.Stdout, &r)
		n := findNote(r, "argocd-api")
		if n == nil || n.Level != model.NoteWarning || strings.Contains(n.Message, "\n") || !strings.Contains(n.Message, "computed locally") {
			t.Errorf("--argocd-server %s: want one one-line warning, got %+v", server, n)
		}
	}

	// The repository goes away: Argo CD cannot compare.
	a.Kubectl(t, "-n", a.Namespace, "patch", "application", app, "--type=merge", "-p", `{"spec":{"source":{"repoURL":"file:///nonexistent/repo"}}}`)
	st := a.RefreshHard(t, app)
	t.Logf("Application with a missing repository: sync %s, conditions %+v", st.Sync.Status, st.Conditions)
	res := E.Run(t, RunOpts{Kubeconfig: a.Kubeconfig}, KubectlDrift, append(base, "--argocd-server", a.Server, "--argocd-plaintext")...)
	var r model.Report
	DecodeJSON(t, res.Stdout, &r)
	if n := findNote(r, "argocd-cannot-compare"); n == nil {
		if api := findNote(r, "argocd-api"); api != nil && strings.Contains(api.Message, "own diff") {
			t.Errorf("a verdict from Argo CD for an Application it cannot compare: %+v", api)
		} else {
			t.Errorf("no note that Argo CD cannot compare: %+v", r.Notes)
		}
	}
}

// TestArgoInferredScan: scan (no desired state, every object inferred)
// of a drifted client-side-apply Application gives Argo CD's verdicts, and
// the running controller's self-heal bears them out: a hand-added label
// and minReadySeconds are left alone (not in last-applied-configuration),
// the changed image is reverted.
func TestArgoInferredScan(t *testing.T) {
	a := RealArgoCD(t)
	ns, app := syncedWebApp(t, a, "inferred-scan")
	a.Kubectl(t, "-n", ns, "label", "deployment/web", "hotfix=true")
	a.Kubectl(t, "-n", ns, "patch", "deployment/web", "--type=merge", "-p", `{"spec":{"minReadySeconds":10}}`)
	a.Kubectl(t, "-n", ns, "set", "image", "deployment/web", "app=nginx:1.29")

	res := E.Run(t, RunOpts{Kubeconfig: a.Kubeconfig}, KubectlDrift, "scan", "-n", ns, "--engine", "argocd", "-o", "json")
	if res.Code != 1 {
		t.Fatalf("scan: exit %d, want 1 (drift)\nstdout:\n%s\nstderr:\n%s", res.Code, res.Stdout, res.Stderr)
	}
	var scanned struct{ Items []model.Report }
	DecodeJSON(t, res.Stdout, &scanned)
	var web *model.Report
	for i := range scanned.Items {
		if scanned.Items[i].Resource.Kind == "Deployment" && scanned.Items[i].Resource.Name == "web" {
			web = &scanned.Items[i]
		}
	}
	if web == nil {
		t.Fatalf("scan does not list deployment/web:\n%s", res.Stdout)
	}
	want := map[string]model.VerdictKind{
		"/metadata/labels/hotfix":                model.LeftAlone,
		"/spec/minReadySeconds":                  model.LeftAlone,
		"/spec/template/spec/containers/0/image": model.Reported,
	}
	got := map[string]model.VerdictKind{}
	for _, d := range web.Drifts {
		if v := argoVerdictOf(d); v != nil {
			got[d.Path] = v.Kind
			t.Logf("scan: %s %s: %s", d.Path, v.Kind, v.Reason)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("scan verdicts %v, want %v", got, want)
	}
	if v := got["/metadata/labels/hotfix"]; v == model.LeftAlone {
		for _, d := range web.Drifts {
			if d.Path == "/metadata/labels/hotfix" && !strings.Contains(argoVerdictOf(d).Reason, "last-applied-configuration") {
				t.Errorf("hotfix label: the reason does not name last-applied-configuration: %s", argoVerdictOf(d).Reason)
			}
		}
	}

	// The controller's self-heal: the image goes back, the rest stays.
	a.Kubectl(t, "-n", a.Namespace, "patch", "application", app, "--type=merge", "-p", `{"spec":{"syncPolicy":{"automated":{"selfHeal":true}}}}`)
	a.WaitSynced(t, app, 90*time.Second)
	var after map[string]any
	DecodeJSON(t, a.Kubectl(t, "-n", ns, "get", "deployment/web", "-o", "json"), &after)
	for p, wantV := range map[string]any{"/metadata/labels/hotfix": "true", "/spec/minReadySeconds": float64(10), "/spec/template/spec/containers/0/image": "nginx:1.27"} {
		if v, _ := jsonpointer.Get(after, p); !jsonSame(v, wantV) {
			t.Errorf("after self-heal %s = %v, want %v", p, v, wantV)
		}
	}
}
