// Command kubectl-drift is the kubectl front end of kubectl-drift: `kubectl drift ...`.
package main

import (
	"os"

	"github.com/kubectl-drift/kubectl-drift/internal/cli"
)

func main() {
	os.Exit(cli.Main(cli.KubectlFrontend, os.Args[1:]))
}
