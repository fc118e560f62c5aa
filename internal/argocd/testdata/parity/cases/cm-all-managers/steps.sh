kubectl apply --field-manager=argocd-controller -f desired.yaml
kubectl -n $NS set image deployment/cm-all-managers app=nginx:1.27
