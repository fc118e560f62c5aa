kubectl apply --field-manager=argocd-controller -f object.yaml
