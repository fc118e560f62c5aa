kubectl apply --field-manager=argocd-controller -f old.yaml
