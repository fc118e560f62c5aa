kubectl apply --field-manager=argocd-controller -f desired.yaml
KUBE_EDITOR='sed -i s/busybox:1.36/busybox:1.37/' kubectl -n $NS edit deployment mgr-edit
