kubectl apply --field-manager=argocd-controller -f desired.yaml
kubectl -n $NS annotate --overwrite deployment threeway-bad-last-applied kubectl.kubernetes.io/last-applied-configuration='{not json'
kubectl -n $NS scale deployment threeway-bad-last-applied --replicas=5
