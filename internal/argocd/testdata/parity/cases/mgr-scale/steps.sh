kubectl apply --field-manager=argocd-controller -f desired.yaml
kubectl -n $NS scale deployment mgr-scale --replicas=5
