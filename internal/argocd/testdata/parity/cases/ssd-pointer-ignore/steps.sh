kubectl apply --server-side --field-manager=argocd-controller -f desired.yaml
kubectl -n $NS scale deployment ssd-pointer-ignore --replicas=5
