// Command argocd-drift is the argocd front end of kubectl-drift: `argocd drift ...`.
package main

import (
	"os"

	"github.com/kubectl-drift/kubectl-drift/internal/cli"
)

func main() {
	os.Exit(cli.Main(cli.ArgoCDFrontend, os.Args[1:]))
}
