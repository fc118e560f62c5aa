kubectl apply --field-manager=argocd-controller -f desired.yaml
kubectl -n $NS annotate --overwrite deployment app-pointer-escaped-key example.com/owner=team-b
