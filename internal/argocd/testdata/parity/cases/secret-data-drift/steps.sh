kubectl apply --field-manager=argocd-controller -f desired.yaml
kubectl -n $NS patch secret secret-data-drift --type=merge -p '{"stringData":{"password":"changed"}}'
