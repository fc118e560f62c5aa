kubectl apply --field-manager=argocd-controller -f desired.yaml
kubectl -n $NS scale deployment cm-glob-group-key --replicas=5
