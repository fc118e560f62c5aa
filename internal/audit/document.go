package audit

import (
	"github.com/kubectl-drift/kubectl-drift/internal/source"
)

// Document is one manifest of the audited files with its position.
type Document = source.Document

// loadFile is the default Loader: the same reader every command uses, with
// its limits (size, alias expansion, depth). A bad document comes back as
// a *source.DocumentError next to the documents that loaded.
func loadFile(file string) ([]Document, error) {
	return source.LoadFiles([]string{file}, nil, source.Options{})
}
