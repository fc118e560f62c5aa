kubectl apply --field-manager=argocd-controller -f desired.yaml
