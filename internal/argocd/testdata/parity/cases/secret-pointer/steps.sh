kubectl apply --field-manager=argocd-controller -f desired.yaml
kubectl -n $NS patch secret secret-pointer --type=merge -p '{"stringData":{"password":"changed"}}'
