kubectl apply --field-manager=argocd-controller -f desired.yaml
kubectl -n $NS set image deployment/cm-group-kind-managers app=nginx:1.27
