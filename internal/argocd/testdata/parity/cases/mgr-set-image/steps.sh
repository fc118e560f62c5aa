kubectl apply --field-manager=argocd-controller -f desired.yaml
kubectl -n $NS set image deployment/mgr-set-image app=nginx:1.27
