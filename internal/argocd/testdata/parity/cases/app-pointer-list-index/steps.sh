kubectl apply --field-manager=argocd-controller -f desired.yaml
kubectl -n $NS set image deployment/app-pointer-list-index app=nginx:1.27
