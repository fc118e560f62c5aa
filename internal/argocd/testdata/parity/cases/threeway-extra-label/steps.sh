kubectl apply --field-manager=argocd-controller -f desired.yaml
kubectl -n $NS label deployment threeway-extra-label extra=yes
