kubectl apply --field-manager=argocd-controller -f desired.yaml
kubectl -n $NS label deployment tracking-label-method app.kubernetes.io/instance=parity
kubectl -n $NS annotate --overwrite deployment tracking-label-method argocd.argoproj.io/tracking-id=old:apps/Deployment:argo-parity/tracking-label-method
