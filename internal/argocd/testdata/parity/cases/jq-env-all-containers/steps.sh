kubectl apply --field-manager=argocd-controller -f desired.yaml
kubectl -n $NS set env deployment/jq-env-all-containers -c app DEBUG=1
