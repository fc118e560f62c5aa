// Command argocd-drift is the argocd front end of kubectl-drift: `argocd drift ...` (Argo CD >= 3.1 runs argocd-<name> from PATH).
//
// The three plugin binaries are one program. The door is picked from the
// executable's name (cli.FrontendFor), so the release archives can carry one
// build under all three names; this main only names its own door as the
// fallback for an unrecognised name.
package main

import (
	"os"

	"github.com/kubectl-drift/kubectl-drift/internal/cli"
)

func main() {
	os.Exit(cli.MainArgv(cli.HostFrontend("argocd"), os.Args))
}
