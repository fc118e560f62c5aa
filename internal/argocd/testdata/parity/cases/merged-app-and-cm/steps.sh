kubectl apply --field-manager=argocd-controller -f desired.yaml
kubectl -n $NS scale deployment merged-app-and-cm --replicas=5
kubectl -n $NS set image deployment/merged-app-and-cm app=nginx:1.27
