kubectl apply --field-manager=argocd-controller -f desired.yaml
kubectl -n $NS scale deployment jq-and-pointer --replicas=5
kubectl -n $NS set image deployment/jq-and-pointer app=nginx:1.27
