kubectl apply --field-manager=argocd-controller -f desired.yaml
kubectl -n $NS scale deployment app-kind-case --replicas=5
