kubectl apply --field-manager=argocd-controller -f desired.yaml
kubectl patch clusterrole argo-p-clusterrole-aggregated-shown --type=merge -p '{"rules":[{"apiGroups":[""],"resources":["pods"],"verbs":["get"]}]}'
