// Command kubectl-drift is the kubectl front end of kubectl-drift: `kubectl drift ...`, installed with krew.
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
	os.Exit(cli.MainArgv(cli.KubectlFrontend, os.Args))
}
