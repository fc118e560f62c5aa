#!/usr/bin/env bash
# No function of the module's production code is over 100 lines, except
# those hack/verify-funclen.allow lists (being split elsewhere): see
# hack/verify-funclen.go. Run by `make verify`.
set -euo pipefail
cd "$(dirname "$0")/.."
exec go run hack/verify-funclen.go "$@"
