kubectl apply --field-manager=argocd-controller -f desired.yaml
kubectl -n $NS scale deployment app-group-invalid-glob --replicas=5
