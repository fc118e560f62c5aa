kubectl apply --field-manager=argocd-controller -f desired.yaml
kubectl -n $NS patch endpoints endpoints-changed --type=merge -p '{"subsets":[{"addresses":[{"ip":"10.0.0.3"},{"ip":"10.0.0.2"}],"ports":[{"name":"p80","port":80}]}]}'
