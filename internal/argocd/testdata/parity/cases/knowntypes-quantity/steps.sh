kubectl apply --field-manager=argocd-controller -f desired.yaml
kubectl -n $NS patch widget knowntypes-quantity --type=merge -p '{"spec":{"size":"1024Mi"}}'
