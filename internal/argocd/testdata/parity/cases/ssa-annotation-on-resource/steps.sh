kubectl apply --server-side --field-manager=argocd-controller -f desired.yaml
kubectl -n $NS label deployment ssa-annotation-on-resource extra=yes
kubectl -n $NS set image deployment/ssa-annotation-on-resource app=nginx:1.27
