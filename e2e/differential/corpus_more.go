package differential

import "slices"

// FullCorpusSeed is the first seed that draws from the whole Corpus. Seeds
// below it draw from the first 18 entries only, the corpus their figures
// (docs/verdicts.md) and saved cases (e2e/testdata/differential) were made
// with, so that each of them keeps drawing the scenario it drew then.
const FullCorpusSeed = 9000

// Corpus is the object corpus: at least one entry per kind of issue 30's
// list (26 kinds). New entries go at the end: the draw of a seed picks an
// index.
var Corpus = append(slices.Clip(corpusFirst), corpusMore...)

// corpusOf is the corpus seed draws from.
func corpusOf(seed uint64) []Object {
	if seed < FullCorpusSeed {
		return corpusFirst
	}
	return Corpus
}

// Setup is what the harness installs once per cluster before the cases:
// the CRD of the "backup" entry's custom resource, written as operators
// ship theirs (controller-gen style: list-type map keyed by name, an
// embedded pod template, structural defaults, status and scale
// subresources).
const Setup = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: backups.diff.drift.test
spec:
  group: diff.drift.test
  names: {kind: Backup, listKind: BackupList, plural: backups, singular: backup}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [schedule]
            properties:
              schedule: {type: string}
              suspend: {type: boolean}
              replicas: {type: integer, format: int32}
              retention: {type: integer, default: 7}
              targets:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                items:
                  type: object
                  required: [name]
                  properties:
                    name: {type: string}
                    path: {type: string}
              template:
                type: object
                properties:
                  metadata:
                    type: object
                    x-kubernetes-preserve-unknown-fields: true
                  spec:
                    type: object
                    properties:
                      restartPolicy: {type: string}
                      serviceAccountName: {type: string}
                      terminationGracePeriodSeconds: {type: integer, format: int64, default: 30}
                      containers:
                        type: array
                        x-kubernetes-list-type: map
                        x-kubernetes-list-map-keys: [name]
                        items:
                          type: object
                          required: [name]
                          properties:
                            name: {type: string}
                            image: {type: string}
                            imagePullPolicy: {type: string, default: IfNotPresent}
                            args: {type: array, items: {type: string}}
                            env:
                              type: array
                              x-kubernetes-list-type: map
                              x-kubernetes-list-map-keys: [name]
                              items:
                                type: object
                                required: [name]
                                properties:
                                  name: {type: string}
                                  value: {type: string}
          status:
            type: object
            properties:
              replicas: {type: integer, format: int32}
              lastBackup: {type: string}
`

// corpusMore are the entries added for issue 30's list of kinds (drawn by
// seeds from FullCorpusSeed on).
var corpusMore = []Object{
	{
		ID: "service-loadbalancer", Ref: "service/NAME", Version: "v1", Resource: "services",
		Manifest: `apiVersion: v1
kind: Service
metadata:
  name: NAME
  namespace: NS
  annotations: {service.beta.kubernetes.io/aws-load-balancer-type: nlb}
spec:
  type: LoadBalancer
  selector: {app: web}
  ports: [{name: https, port: 443, targetPort: 8443}]
`,
		Knobs: []Knob{
			{Path: []string{"spec", "externalTrafficPolicy"}, Drift: "Local", Derived: []string{"/spec/healthCheckNodePort"}},
			{Path: []string{"metadata", "annotations", "service.beta.kubernetes.io/aws-load-balancer-type"}, Git: "nlb", Drift: "external", Edit: true},
			{Path: []string{"metadata", "labels", "exposed"}, Drift: "public"},
			{Path: []string{"spec", "allocateLoadBalancerNodePorts"}, Drift: false},
		},
		Defaults: []Knob{
			{Path: []string{"spec", "externalTrafficPolicy"}, Git: "Cluster"},
			{Path: []string{"spec", "allocateLoadBalancerNodePorts"}, Git: true},
			{Path: []string{"spec", "sessionAffinity"}, Git: "None"},
		},
		// What a cloud controller manager writes once the balancer exists.
		Status: `{"status":{"loadBalancer":{"ingress":[{"ip":"192.0.2.20"}]}}}`,
	},
	{
		ID: "clusterrole", Ref: "clusterrole.rbac.authorization.k8s.io/NAME", ClusterScoped: true,
		Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles",
		Manifest: `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: NAME
  labels: {app.kubernetes.io/name: metrics-reader}
rules:
- apiGroups: [metrics.k8s.io]
  resources: [pods, nodes]
  verbs: [get, list]
- nonResourceURLs: [/metrics]
  verbs: [get]
`,
		Knobs: []Knob{
			{Path: []string{"metadata", "labels", "app.kubernetes.io/name"}, Git: "metrics-reader", Drift: "metrics-admin", Edit: true},
			{Path: []string{"metadata", "labels", "rbac.authorization.k8s.io/aggregate-to-view"}, Drift: "true"},
			{Path: []string{"metadata", "annotations", "rbac.authorization.kubernetes.io/autoupdate"}, Drift: "false"},
		},
	},
	{
		// rules: [] as users write it: the clusterrole-aggregation-controller
		// of kube-controller-manager fills it (a server-side apply as that
		// manager, with force: kubernetes
		// pkg/controller/clusterroleaggregation/clusterroleaggregation_controller.go).
		ID: "clusterrole-aggregated", Ref: "clusterrole.rbac.authorization.k8s.io/NAME", ClusterScoped: true,
		Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles",
		Manifest: `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: NAME
  labels: {app.kubernetes.io/component: monitoring}
aggregationRule:
  clusterRoleSelectors:
  - matchLabels: {rbac.drift.test/aggregate-to-monitoring: "true"}
rules: []
`,
		Knobs: []Knob{
			{Path: []string{"metadata", "labels", "app.kubernetes.io/component"}, Git: "monitoring", Drift: "observability", Edit: true},
			{Path: []string{"metadata", "annotations", "description"}, Drift: "aggregated by label"},
		},
		Controller: `rules:
- apiGroups: [""]
  resources: [pods, services, endpoints]
  verbs: [get, list, watch]
`,
		ControllerManager: "clusterrole-aggregation-controller",
	},
	{
		ID: "clusterrolebinding", Ref: "clusterrolebinding.rbac.authorization.k8s.io/NAME", ClusterScoped: true,
		Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings",
		Manifest: `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: NAME
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: view}
subjects:
- kind: ServiceAccount
  name: monitoring
  namespace: NS
`,
		Knobs: []Knob{
			{Path: []string{"metadata", "labels", "team"}, Drift: "sre"},
			{Path: []string{"metadata", "annotations", "ticket"}, Drift: "OPS-7"},
		},
	},
	{
		ID: "mutatingwebhook", Ref: "mutatingwebhookconfiguration.admissionregistration.k8s.io/NAME", ClusterScoped: true,
		Group: "admissionregistration.k8s.io", Version: "v1", Resource: "mutatingwebhookconfigurations",
		Manifest: `apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: NAME
  labels: {app.kubernetes.io/name: sidecar-injector}
webhooks:
- name: inject.drift.test
  admissionReviewVersions: [v1]
  sideEffects: None
  failurePolicy: Ignore
  reinvocationPolicy: IfNeeded
  timeoutSeconds: 5
  clientConfig:
    service: {name: injector, namespace: NS, path: /mutate, port: 443}
  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: no-such-namespace}}
  objectSelector: {matchLabels: {inject: "true"}}
  rules:
  - apiGroups: [""]
    apiVersions: [v1]
    operations: [CREATE, UPDATE]
    resources: [pods]
    scope: Namespaced
`,
		Knobs: []Knob{
			{Path: []string{"metadata", "labels", "app.kubernetes.io/name"}, Git: "sidecar-injector", Drift: "injector-v2", Edit: true},
			{Path: []string{"metadata", "annotations", "cert-manager.io/inject-ca-from"}, Drift: "injector/serving-cert"},
		},
	},
	{
		ID: "pvc", Ref: "persistentvolumeclaim/NAME", Version: "v1", Resource: "persistentvolumeclaims",
		Manifest: `apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: NAME
  namespace: NS
  labels: {app: db}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 5Gi}}
`,
		Knobs: []Knob{
			{Path: []string{"metadata", "labels", "backup"}, Drift: "daily"},
			{Path: []string{"metadata", "annotations", "volume.kubernetes.io/selected-node"}, Drift: "node-1"},
			{Path: []string{"metadata", "labels", "app"}, Git: "db", Drift: "db2"},
		},
		Defaults: []Knob{
			{Path: []string{"spec", "volumeMode"}, Git: "Filesystem"},
		},
		// What the persistent volume controller writes when it binds.
		Status: `{"status":{"phase":"Bound","accessModes":["ReadWriteOnce"],"capacity":{"storage":"5Gi"}}}`,
	},
	{
		ID: "crd", Ref: "customresourcedefinition.apiextensions.k8s.io/NAME", ClusterScoped: true,
		NameTemplate: "caches.NS.drift.test",
		Group:        "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions",
		Manifest: `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: NAME
  annotations: {controller-gen.kubebuilder.io/version: v0.16.5}
spec:
  group: NS.drift.test
  names: {kind: Cache, listKind: CacheList, plural: caches, singular: cache}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer, default: 1}
              ports:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                items:
                  type: object
                  required: [name]
                  properties:
                    name: {type: string}
                    port: {type: integer}
          status:
            type: object
            x-kubernetes-preserve-unknown-fields: true
`,
		Knobs: []Knob{
			{Path: []string{"metadata", "annotations", "controller-gen.kubebuilder.io/version"}, Git: "v0.16.5", Drift: "v0.17.0", Edit: true},
			{Path: []string{"metadata", "labels", "app.kubernetes.io/part-of"}, Drift: "cache-operator"},
		},
		Defaults: []Knob{
			{Path: []string{"spec", "conversion", "strategy"}, Git: "None"},
		},
	},
	{
		ID: "backup", Ref: "backup.diff.drift.test/NAME", Group: "diff.drift.test", Version: "v1", Resource: "backups",
		Manifest: `apiVersion: diff.drift.test/v1
kind: Backup
metadata:
  name: NAME
  namespace: NS
  labels: {app: postgres}
spec:
  schedule: "0 2 * * *"
  replicas: 1
  targets:
  - name: data
    path: /var/lib/postgresql
  template:
    metadata: {labels: {app: backup}}
    spec:
      restartPolicy: OnFailure
      containers:
      - name: restic
        image: restic/restic:0.17.0
        env: [{name: REPOSITORY, value: "s3:backups"}]
`,
		Knobs: []Knob{
			{Path: []string{"spec", "schedule"}, Git: "0 2 * * *", Drift: "0 5 * * *", Edit: true},
			{Path: []string{"spec", "suspend"}, Drift: true},
			{Path: []string{"spec", "retention"}, Drift: 30},
			{Path: []string{"metadata", "labels", "app"}, Git: "postgres", Drift: "mysql"},
			{Path: []string{"spec", "template", "spec", "serviceAccountName"}, Drift: "backup-sa"},
		},
		Defaults: []Knob{
			{Path: []string{"spec", "retention"}, Git: 7},
			{Path: []string{"spec", "template", "spec", "terminationGracePeriodSeconds"}, Git: 30},
		},
		Scalable: true,
		Status:   `{"status":{"replicas":1,"lastBackup":"2026-12-05T02:00:00Z"}}`,
	},
	{
		ID: "resourcequota", Ref: "resourcequota/NAME", Version: "v1", Resource: "resourcequotas",
		Manifest: `apiVersion: v1
kind: ResourceQuota
metadata:
  name: NAME
  namespace: NS
spec:
  hard:
    requests.cpu: "4"
    requests.memory: 8Gi
    pods: "20"
`,
		Knobs: []Knob{
			{Path: []string{"spec", "hard", "requests.cpu"}, Git: "4", Drift: "8"},
			{Path: []string{"spec", "hard", "limits.memory"}, Drift: "16Gi"},
			{Path: []string{"metadata", "labels", "quota"}, Drift: "team-a"},
		},
		// What kube-controller-manager's quota controller writes.
		Status: `{"status":{"hard":{"pods":"20","requests.cpu":"4","requests.memory":"8Gi"},"used":{"pods":"0","requests.cpu":"0","requests.memory":"0"}}}`,
	},
	{
		ID: "limitrange", Ref: "limitrange/NAME", Version: "v1", Resource: "limitranges",
		Manifest: `apiVersion: v1
kind: LimitRange
metadata:
  name: NAME
  namespace: NS
  labels: {policy: defaults}
spec:
  limits:
  - type: Container
    default: {cpu: 500m, memory: 512Mi}
    defaultRequest: {cpu: 100m, memory: 128Mi}
    max: {memory: 2Gi}
`,
		Knobs: []Knob{
			{Path: []string{"metadata", "labels", "policy"}, Git: "defaults", Drift: "strict", Edit: true},
			{Path: []string{"metadata", "annotations", "reviewed-by"}, Drift: "platform"},
		},
	},
	{
		ID: "priorityclass", Ref: "priorityclass.scheduling.k8s.io/NAME", ClusterScoped: true,
		Group: "scheduling.k8s.io", Version: "v1", Resource: "priorityclasses",
		Manifest: `apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata:
  name: NAME
value: 100000
globalDefault: false
description: "Business-critical web workloads."
`,
		Knobs: []Knob{
			{Path: []string{"description"}, Git: "Business-critical web workloads.", Drift: "Critical workloads.", Edit: true},
			{Path: []string{"metadata", "labels", "tier"}, Drift: "gold"},
		},
		Defaults: []Knob{
			{Path: []string{"preemptionPolicy"}, Git: "PreemptLowerPriority"},
		},
	},
	{
		ID: "ingressclass", Ref: "ingressclass.networking.k8s.io/NAME", ClusterScoped: true,
		Group: "networking.k8s.io", Version: "v1", Resource: "ingressclasses",
		Manifest: `apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata:
  name: NAME
  labels: {app.kubernetes.io/component: controller}
spec:
  controller: k8s.io/ingress-nginx
  parameters: {apiGroup: k8s.example.com, kind: IngressParameters, name: external-lb}
`,
		Knobs: []Knob{
			{Path: []string{"spec", "parameters", "name"}, Git: "external-lb", Drift: "internal-lb", Edit: true},
			{Path: []string{"metadata", "labels", "edge"}, Drift: "true"},
		},
	},
	{
		// An Ingress without a class, with TLS and a default backend.
		ID: "ingress-tls", Ref: "ingress.networking.k8s.io/NAME", Group: "networking.k8s.io", Version: "v1", Resource: "ingresses",
		Manifest: `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: NAME
  namespace: NS
  annotations: {cert-manager.io/cluster-issuer: letsencrypt}
spec:
  tls:
  - hosts: [api.example.com]
    secretName: api-tls
  defaultBackend: {service: {name: fallback, port: {name: http}}}
  rules:
  - host: api.example.com
    http:
      paths:
      - path: /v1
        pathType: ImplementationSpecific
        backend: {service: {name: api, port: {number: 8080}}}
`,
		Knobs: []Knob{
			{Path: []string{"metadata", "annotations", "cert-manager.io/cluster-issuer"}, Git: "letsencrypt", Drift: "letsencrypt-staging", Edit: true},
			{Path: []string{"spec", "ingressClassName"}, Drift: "nginx"},
			{Path: []string{"metadata", "labels", "exposure"}, Drift: "public"},
		},
		Status: `{"status":{"loadBalancer":{"ingress":[{"hostname":"lb.example.com"}]}}}`,
	},
	{
		ID: "cronjob-forbid", Ref: "cronjob/NAME", Group: "batch", Version: "v1", Resource: "cronjobs",
		Manifest: `apiVersion: batch/v1
kind: CronJob
metadata:
  name: NAME
  namespace: NS
  labels: {app: report}
spec:
  schedule: "*/15 * * * *"
  timeZone: Europe/Paris
  concurrencyPolicy: Forbid
  startingDeadlineSeconds: 300
  successfulJobsHistoryLimit: 1
  jobTemplate:
    metadata: {labels: {app: report}}
    spec:
      backoffLimit: 0
      ttlSecondsAfterFinished: 3600
      template:
        metadata: {labels: {app: report}}
        spec:
          restartPolicy: Never
          containers:
          - name: report
            image: python:3.12-slim
            command: [python, -m, report]
`,
		Knobs: []Knob{
			{Path: []string{"spec", "timeZone"}, Git: "Europe/Paris", Drift: "UTC", Edit: true},
			{Path: []string{"spec", "concurrencyPolicy"}, Git: "Forbid", Drift: "Replace", Edit: true},
			{Path: []string{"spec", "suspend"}, Drift: true},
			{Path: []string{"spec", "startingDeadlineSeconds"}, Git: 300, Drift: 60},
		},
		Defaults: []Knob{
			{Path: []string{"spec", "failedJobsHistoryLimit"}, Git: 1},
			{Path: []string{"spec", "suspend"}, Git: false},
		},
		Containers: []string{"spec", "jobTemplate", "spec", "template", "spec", "containers"},
	},
	{
		ID: "pdb-maxunavailable", Ref: "poddisruptionbudget.policy/NAME", Group: "policy", Version: "v1", Resource: "poddisruptionbudgets",
		Manifest: `apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: NAME
  namespace: NS
spec:
  maxUnavailable: 25%
  unhealthyPodEvictionPolicy: AlwaysAllow
  selector:
    matchLabels: {app.kubernetes.io/name: api}
`,
		Knobs: []Knob{
			{Path: []string{"spec", "maxUnavailable"}, Git: "25%", Drift: 1},
			{Path: []string{"spec", "unhealthyPodEvictionPolicy"}, Git: "AlwaysAllow", Drift: "IfHealthyBudget", Edit: true},
			{Path: []string{"metadata", "labels", "guard"}, Drift: "on"},
		},
		Status: `{"status":{"currentHealthy":0,"desiredHealthy":0,"disruptionsAllowed":0,"expectedPods":0}}`,
	},
}
