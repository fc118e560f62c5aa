kubectl apply --field-manager=argocd-controller -f desired.yaml
kubectl patch clusterrole argo-p-clusterrole-aggregated-ignored --type=merge -p '{"rules":[{"apiGroups":[""],"resources":["pods"],"verbs":["get"]}]}'
