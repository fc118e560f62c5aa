kubectl apply --field-manager=argocd-controller -f desired.yaml
kubectl -n $NS scale deployment jq-invalid-syntax --replicas=5
