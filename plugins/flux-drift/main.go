// Command flux-drift is the flux front end of kubectl-drift: `flux drift ...`.
package main

import (
	"os"

	"github.com/kubectl-drift/kubectl-drift/internal/cli"
)

func main() {
	os.Exit(cli.Main(cli.FluxFrontend, os.Args[1:]))
}
