kubectl apply --field-manager=argocd-controller -f desired.yaml
kubectl -n $NS annotate --overwrite deployment tracking-no-label-annotation-changed argocd.argoproj.io/tracking-id=old:apps/Deployment:argo-parity/tracking-no-label-annotation-changed
