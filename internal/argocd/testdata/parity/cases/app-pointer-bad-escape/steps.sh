kubectl apply --field-manager=argocd-controller -f desired.yaml
kubectl -n $NS scale deployment app-pointer-bad-escape --replicas=5
