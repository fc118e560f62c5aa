kubectl apply --server-side --field-manager=argocd-controller -f desired.yaml
kubectl -n $NS set image deployment/ssa-managers-set-image app=nginx:1.27
