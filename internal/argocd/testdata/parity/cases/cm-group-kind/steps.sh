kubectl apply --field-manager=argocd-controller -f desired.yaml
kubectl -n $NS scale deployment cm-group-kind --replicas=5
