kubectl apply --server-side --field-manager=argocd-controller -f old.yaml
