kubectl apply --field-manager=argocd-controller -f desired.yaml
kubectl -n $NS scale deployment app-name-match --replicas=5
