// Command flux-drift is the flux front end of kubectl-drift: `flux drift ...` (Flux >= 2.9 runs flux-<name> from ~/.fluxcd/plugins).
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
	os.Exit(cli.MainArgv(cli.HostFrontend("flux"), os.Args))
}
