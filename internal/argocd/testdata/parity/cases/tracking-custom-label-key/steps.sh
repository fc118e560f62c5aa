kubectl apply --field-manager=argocd-controller -f desired.yaml
kubectl -n $NS label deployment tracking-custom-label-key example.com/app=parity
kubectl -n $NS annotate --overwrite deployment tracking-custom-label-key argocd.argoproj.io/tracking-id=old:apps/Deployment:argo-parity/tracking-custom-label-key
