package differential

// Object is one corpus entry: a manifest as users write it, with the
// fields writers may change (knobs) and the fields the API server defaults
// (which a scenario may write into Git).
//
// The manifest is YAML with two placeholders: NS (the scenario's
// namespace) and NAME (the object's name; for cluster-scoped kinds it
// carries the namespace so that scenarios sharing one API server never
// collide). Reaching more kinds is adding entries to Corpus.
type Object struct {
	// ID names the entry in seeds' reports ("service-nodeport").
	ID string
	// Ref is what `kubectl drift explain` takes, NAME replaced
	// ("deployment/NAME").
	Ref string
	// Group, Version and Resource are the object's API resource.
	Group, Version, Resource string
	// ClusterScoped objects get NAME = "<ns>-<id>".
	ClusterScoped bool
	Manifest      string
	// Knobs are scalar fields below maps (no list index on the way), so
	// that every writer (merge, strategic, JSON patch, apply) can set them.
	Knobs []Knob
	// Defaults are fields the API server fills when Git leaves them out,
	// with the value it fills.
	Defaults []Knob
	// Containers is the path of the pod template's container list, when
	// the kind has one (kubectl set image / set env).
	Containers []string
	// Scalable kinds have a /scale subresource (kubectl scale).
	Scalable bool
	// Status is a merge patch of the /status subresource as the kind's
	// controller would write it ("" when the kind has none worth writing).
	Status string
	// NameTemplate, when set, is the object's name with NS for the
	// namespace (a CRD's name must be <plural>.<group>).
	NameTemplate string
	// Controller is a controller's server-side apply of the main resource
	// (YAML of the fields it owns, e.g. the rules the
	// clusterrole-aggregation-controller writes into an aggregated
	// ClusterRole), as ControllerManager; "" when the kind has none.
	Controller        string
	ControllerManager string
}

// Knob is one field: its path of map keys, the value Git has (nil: Git
// leaves it out) and the value a writer sets.
type Knob struct {
	Path  []string
	Git   any
	Drift any
	// Edit marks a string Git value unique in the object, so that a sed
	// expression can change it in `kubectl edit`.
	Edit bool
	// Derived are the fields the API server computes from the Drift
	// value in the same write (a Service's sessionAffinityConfig for
	// ClientIP): the writer touched them too.
	Derived []string
}

// corpusFirst is the corpus of the first differential runs (18 entries, 16
// kinds): seeds below FullCorpusSeed draw from it alone (Draw).
var corpusFirst = []Object{
	{
		ID: "deployment", Ref: "deployment/NAME", Group: "apps", Version: "v1", Resource: "deployments",
		Manifest: `apiVersion: apps/v1
kind: Deployment
metadata:
  name: NAME
  namespace: NS
  labels: {app: web, app.kubernetes.io/part-of: shop}
  annotations: {owner: team-a}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx:1.25
        env: [{name: MODE, value: prod}]
        ports: [{containerPort: 80}]
`,
		Knobs: []Knob{
			{Path: []string{"spec", "replicas"}, Git: 2, Drift: 5},
			{Path: []string{"metadata", "labels", "app.kubernetes.io/part-of"}, Git: "shop", Drift: "other", Edit: true},
			{Path: []string{"metadata", "annotations", "owner"}, Git: "team-a", Drift: "team-b", Edit: true},
			{Path: []string{"spec", "minReadySeconds"}, Drift: 7},
			{Path: []string{"spec", "paused"}, Drift: true},
		},
		Defaults: []Knob{
			{Path: []string{"spec", "revisionHistoryLimit"}, Git: 10},
			{Path: []string{"spec", "progressDeadlineSeconds"}, Git: 600},
			{Path: []string{"spec", "strategy", "type"}, Git: "RollingUpdate"},
		},
		Containers: []string{"spec", "template", "spec", "containers"},
		Scalable:   true,
		Status:     `{"status":{"observedGeneration":1,"replicas":2,"unavailableReplicas":2}}`,
	},
	{
		ID: "statefulset", Ref: "statefulset/NAME", Group: "apps", Version: "v1", Resource: "statefulsets",
		Manifest: `apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: NAME
  namespace: NS
  labels: {app: db}
spec:
  serviceName: db
  replicas: 1
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers:
      - name: db
        image: postgres:16
        volumeMounts: [{name: data, mountPath: /var/lib/postgresql/data}]
  volumeClaimTemplates:
  - metadata: {name: data}
    spec:
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 1Gi}}
`,
		Knobs: []Knob{
			{Path: []string{"spec", "replicas"}, Git: 1, Drift: 3},
			{Path: []string{"metadata", "labels", "tier"}, Drift: "data"},
			{Path: []string{"spec", "minReadySeconds"}, Drift: 5},
		},
		Defaults: []Knob{
			{Path: []string{"spec", "podManagementPolicy"}, Git: "OrderedReady"},
			{Path: []string{"spec", "revisionHistoryLimit"}, Git: 10},
			{Path: []string{"spec", "updateStrategy", "type"}, Git: "RollingUpdate"},
		},
		Containers: []string{"spec", "template", "spec", "containers"},
		Scalable:   true,
		Status:     `{"status":{"replicas":1,"availableReplicas":0}}`,
	},
	{
		ID: "daemonset", Ref: "daemonset/NAME", Group: "apps", Version: "v1", Resource: "daemonsets",
		Manifest: `apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: NAME
  namespace: NS
  labels: {app: agent}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      tolerations: [{operator: Exists}]
      containers:
      - name: agent
        image: fluent/fluent-bit:3.0
`,
		Knobs: []Knob{
			{Path: []string{"metadata", "labels", "app"}, Git: "agent", Drift: "agent2"},
			{Path: []string{"spec", "minReadySeconds"}, Drift: 9},
		},
		Defaults: []Knob{
			{Path: []string{"spec", "revisionHistoryLimit"}, Git: 10},
			{Path: []string{"spec", "updateStrategy", "type"}, Git: "RollingUpdate"},
		},
		Containers: []string{"spec", "template", "spec", "containers"},
	},
	{
		ID: "job", Ref: "job/NAME", Group: "batch", Version: "v1", Resource: "jobs",
		Manifest: `apiVersion: batch/v1
kind: Job
metadata:
  name: NAME
  namespace: NS
  labels: {app: migrate}
spec:
  backoffLimit: 2
  suspend: true
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: migrate
        image: busybox:1.36
        command: [sh, -c, "echo migrate"]
`,
		Knobs: []Knob{
			{Path: []string{"spec", "backoffLimit"}, Git: 2, Drift: 4},
			{Path: []string{"metadata", "labels", "run"}, Drift: "manual"},
			{Path: []string{"spec", "activeDeadlineSeconds"}, Drift: 600},
		},
		Defaults: []Knob{
			{Path: []string{"spec", "completions"}, Git: 1},
			{Path: []string{"spec", "parallelism"}, Git: 1},
			{Path: []string{"spec", "completionMode"}, Git: "NonIndexed"},
		},
	},
	{
		ID: "cronjob", Ref: "cronjob/NAME", Group: "batch", Version: "v1", Resource: "cronjobs",
		Manifest: `apiVersion: batch/v1
kind: CronJob
metadata:
  name: NAME
  namespace: NS
spec:
  schedule: "0 3 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers:
          - name: backup
            image: busybox:1.36
            args: [echo, backup]
`,
		Knobs: []Knob{
			{Path: []string{"spec", "schedule"}, Git: "0 3 * * *", Drift: "0 4 * * *", Edit: true},
			{Path: []string{"spec", "suspend"}, Drift: true},
			{Path: []string{"spec", "successfulJobsHistoryLimit"}, Drift: 1},
		},
		Defaults: []Knob{
			{Path: []string{"spec", "concurrencyPolicy"}, Git: "Allow"},
			{Path: []string{"spec", "failedJobsHistoryLimit"}, Git: 1},
			{Path: []string{"spec", "successfulJobsHistoryLimit"}, Git: 3},
		},
		Containers: []string{"spec", "jobTemplate", "spec", "template", "spec", "containers"},
	},
	{
		ID: "service-clusterip", Ref: "service/NAME", Version: "v1", Resource: "services",
		Manifest: `apiVersion: v1
kind: Service
metadata:
  name: NAME
  namespace: NS
  labels: {app: web}
spec:
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: 8080}]
`,
		Knobs: []Knob{
			{Path: []string{"spec", "selector", "app"}, Git: "web", Drift: "web2"},
			{Path: []string{"metadata", "labels", "exposed"}, Drift: "true"},
			{Path: []string{"spec", "sessionAffinity"}, Drift: "ClientIP", Derived: []string{"/spec/sessionAffinityConfig"}},
		},
		Defaults: []Knob{
			{Path: []string{"spec", "type"}, Git: "ClusterIP"},
			{Path: []string{"spec", "sessionAffinity"}, Git: "None"},
			{Path: []string{"spec", "internalTrafficPolicy"}, Git: "Cluster"},
		},
	},
	{
		ID: "service-nodeport", Ref: "service/NAME", Version: "v1", Resource: "services",
		Manifest: `apiVersion: v1
kind: Service
metadata:
  name: NAME
  namespace: NS
spec:
  type: NodePort
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: 8080}]
`,
		Knobs: []Knob{
			{Path: []string{"spec", "externalTrafficPolicy"}, Drift: "Local"},
			{Path: []string{"metadata", "annotations", "lb"}, Drift: "internal"},
		},
		Defaults: []Knob{
			{Path: []string{"spec", "externalTrafficPolicy"}, Git: "Cluster"},
			{Path: []string{"spec", "sessionAffinity"}, Git: "None"},
		},
	},
	{
		ID: "service-headless", Ref: "service/NAME", Version: "v1", Resource: "services",
		Manifest: `apiVersion: v1
kind: Service
metadata:
  name: NAME
  namespace: NS
spec:
  clusterIP: None
  selector: {app: db}
  ports: [{port: 5432}]
`,
		Knobs: []Knob{
			{Path: []string{"spec", "publishNotReadyAddresses"}, Drift: true},
			{Path: []string{"spec", "selector", "app"}, Git: "db", Drift: "db2"},
		},
		Defaults: []Knob{
			{Path: []string{"spec", "type"}, Git: "ClusterIP"},
			{Path: []string{"spec", "sessionAffinity"}, Git: "None"},
		},
	},
	{
		ID: "ingress", Ref: "ingress.networking.k8s.io/NAME", Group: "networking.k8s.io", Version: "v1", Resource: "ingresses",
		Manifest: `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: NAME
  namespace: NS
  annotations: {nginx.ingress.kubernetes.io/rewrite-target: /}
spec:
  ingressClassName: nginx
  rules:
  - host: shop.example.com
    http:
      paths:
      - path: /
        pathType: Prefix
        backend: {service: {name: web, port: {number: 80}}}
`,
		Knobs: []Knob{
			{Path: []string{"spec", "ingressClassName"}, Git: "nginx", Drift: "traefik"},
			{Path: []string{"metadata", "annotations", "nginx.ingress.kubernetes.io/rewrite-target"}, Git: "/", Drift: "/app"},
			{Path: []string{"metadata", "labels", "edge"}, Drift: "true"},
		},
		Status: `{"status":{"loadBalancer":{"ingress":[{"ip":"192.0.2.10"}]}}}`,
	},
	{
		ID: "networkpolicy", Ref: "networkpolicy.networking.k8s.io/NAME", Group: "networking.k8s.io", Version: "v1", Resource: "networkpolicies",
		Manifest: `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: NAME
  namespace: NS
spec:
  podSelector: {matchLabels: {app: db}}
  ingress:
  - from: [{podSelector: {matchLabels: {app: web}}}]
    ports: [{port: 5432}]
`,
		Knobs: []Knob{
			{Path: []string{"spec", "podSelector", "matchLabels", "app"}, Git: "db", Drift: "cache"},
			{Path: []string{"metadata", "labels", "audited"}, Drift: "yes"},
		},
		Defaults: []Knob{
			{Path: []string{"spec", "policyTypes"}, Git: []any{"Ingress"}},
		},
	},
	{
		ID: "configmap", Ref: "configmap/NAME", Version: "v1", Resource: "configmaps",
		Manifest: `apiVersion: v1
kind: ConfigMap
metadata:
  name: NAME
  namespace: NS
data:
  LOG_LEVEL: info
  feature.flags: "a,b"
`,
		Knobs: []Knob{
			{Path: []string{"data", "LOG_LEVEL"}, Git: "info", Drift: "debug", Edit: true},
			{Path: []string{"data", "EXTRA"}, Drift: "1"},
			{Path: []string{"metadata", "labels", "config"}, Drift: "main"},
		},
	},
	{
		ID: "secret", Ref: "secret/NAME", Version: "v1", Resource: "secrets",
		Manifest: `apiVersion: v1
kind: Secret
metadata:
  name: NAME
  namespace: NS
type: Opaque
stringData:
  password: s3cr3t-git
data:
  token: dG9rZW4tZ2l0
`,
		Knobs: []Knob{
			{Path: []string{"data", "token"}, Git: "dG9rZW4tZ2l0", Drift: "dG9rZW4tbGl2ZQ==", Edit: true},
			{Path: []string{"metadata", "labels", "rotated"}, Drift: "yes"},
			{Path: []string{"metadata", "annotations", "vault"}, Drift: "synced"},
		},
	},
	{
		ID: "serviceaccount", Ref: "serviceaccount/NAME", Version: "v1", Resource: "serviceaccounts",
		Manifest: `apiVersion: v1
kind: ServiceAccount
metadata:
  name: NAME
  namespace: NS
  annotations: {eks.amazonaws.com/role-arn: "arn:aws:iam::1:role/app"}
automountServiceAccountToken: false
`,
		Knobs: []Knob{
			{Path: []string{"automountServiceAccountToken"}, Git: false, Drift: true},
			{Path: []string{"metadata", "annotations", "eks.amazonaws.com/role-arn"}, Git: "arn:aws:iam::1:role/app", Drift: "arn:aws:iam::1:role/admin", Edit: true},
		},
	},
	{
		ID: "role", Ref: "role.rbac.authorization.k8s.io/NAME", Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles",
		Manifest: `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: NAME
  namespace: NS
  labels: {app: web}
rules:
- apiGroups: [""]
  resources: [configmaps]
  verbs: [get, list, watch]
`,
		Knobs: []Knob{
			{Path: []string{"metadata", "labels", "app"}, Git: "web", Drift: "web2"},
			{Path: []string{"metadata", "annotations", "reviewed"}, Drift: "2026"},
		},
	},
	{
		ID: "rolebinding", Ref: "rolebinding.rbac.authorization.k8s.io/NAME", Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings",
		Manifest: `apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: NAME
  namespace: NS
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: reader}
subjects:
- kind: ServiceAccount
  name: web
  namespace: NS
`,
		Knobs: []Knob{
			{Path: []string{"metadata", "labels", "binding"}, Drift: "extra"},
			{Path: []string{"metadata", "annotations", "ticket"}, Drift: "OPS-1"},
		},
	},
	{
		ID: "hpa", Ref: "horizontalpodautoscaler.autoscaling/NAME", Group: "autoscaling", Version: "v2", Resource: "horizontalpodautoscalers",
		Manifest: `apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: NAME
  namespace: NS
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 2
  maxReplicas: 10
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 70}}
`,
		Knobs: []Knob{
			{Path: []string{"spec", "maxReplicas"}, Git: 10, Drift: 20},
			{Path: []string{"spec", "minReplicas"}, Git: 2, Drift: 1},
			{Path: []string{"metadata", "labels", "scaled"}, Drift: "yes"},
		},
		Status: `{"status":{"currentReplicas":2,"desiredReplicas":3}}`,
	},
	{
		ID: "pdb", Ref: "poddisruptionbudget.policy/NAME", Group: "policy", Version: "v1", Resource: "poddisruptionbudgets",
		Manifest: `apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: NAME
  namespace: NS
spec:
  minAvailable: 1
  selector: {matchLabels: {app: web}}
`,
		Knobs: []Knob{
			{Path: []string{"spec", "minAvailable"}, Git: 1, Drift: 2},
			{Path: []string{"metadata", "labels", "guard"}, Drift: "on"},
		},
		Status: `{"status":{"currentHealthy":0,"desiredHealthy":1,"disruptionsAllowed":0,"expectedPods":0}}`,
	},
	{
		ID: "validatingwebhook", Ref: "validatingwebhookconfiguration.admissionregistration.k8s.io/NAME", ClusterScoped: true,
		Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingwebhookconfigurations",
		Manifest: `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: NAME
  labels: {app: policy}
webhooks:
- name: check.drift.test
  admissionReviewVersions: [v1]
  sideEffects: None
  failurePolicy: Ignore
  clientConfig: {url: "https://192.0.2.1/validate"}
  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: no-such-namespace}}
  rules:
  - apiGroups: [""]
    apiVersions: [v1]
    operations: [CREATE]
    resources: [configmaps]
`,
		Knobs: []Knob{
			{Path: []string{"metadata", "labels", "app"}, Git: "policy", Drift: "policy2"},
			{Path: []string{"metadata", "annotations", "cert-manager.io/inject-ca-from"}, Drift: "NS/cert"},
		},
	},
}
