kubectl apply --field-manager=argocd-controller -f desired.yaml
kubectl -n $NS patch rollout.argoproj.io knowntypes-rollout-default --type=json -p '[{"op":"replace","path":"/spec/template/spec/containers/0/resources/requests/cpu","value":"0.1"}]'
