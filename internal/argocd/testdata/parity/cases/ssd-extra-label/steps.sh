kubectl apply --server-side --field-manager=argocd-controller -f desired.yaml
kubectl -n $NS label deployment ssd-extra-label extra=yes
