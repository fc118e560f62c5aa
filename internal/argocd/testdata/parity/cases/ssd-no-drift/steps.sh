kubectl apply --server-side --field-manager=argocd-controller -f desired.yaml
