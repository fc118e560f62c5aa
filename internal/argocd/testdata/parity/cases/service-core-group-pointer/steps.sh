kubectl apply --field-manager=argocd-controller -f desired.yaml
kubectl -n $NS patch service service-core-group-pointer --type=json -p '[{"op":"replace","path":"/spec/ports/0/targetPort","value":9090}]'
