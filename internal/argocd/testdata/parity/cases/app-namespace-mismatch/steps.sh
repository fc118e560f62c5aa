kubectl apply --field-manager=argocd-controller -f desired.yaml
kubectl -n $NS scale deployment app-namespace-mismatch --replicas=5
