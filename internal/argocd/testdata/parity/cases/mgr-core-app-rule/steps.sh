kubectl apply --field-manager=argocd-controller -f desired.yaml
kubectl -n $NS patch configmap mgr-core-app-rule --type=merge -p '{"data":{"key":"changed"}}'
