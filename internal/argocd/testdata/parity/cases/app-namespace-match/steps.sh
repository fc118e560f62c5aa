kubectl apply --field-manager=argocd-controller -f desired.yaml
kubectl -n $NS scale deployment app-namespace-match --replicas=5
