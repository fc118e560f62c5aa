kubectl apply --field-manager=argocd-controller -f desired.yaml
kubectl -n $NS scale deployment scale-no-rule --replicas=5
