kubectl apply --field-manager=argocd-controller -f desired.yaml
kubectl -n $NS set image deployment/ssd-client-side-synced app=nginx:1.27
