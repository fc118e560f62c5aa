@echo off
rem Shell completion for `kubectl drift` on Windows (see kubectl_complete-drift).
kubectl drift __complete %*
