package cli

import (
	"fmt"
	"io"
)

// stderrf writes one diagnostic line ("warning: ...", "error: ...") to the
// error stream. Its write error is dropped on purpose, here and only here:
// a line that cannot reach stderr has nowhere else to go, and the command's
// result and exit code do not depend on it.
func stderrf(errOut io.Writer, format string, args ...any) {
	_, _ = fmt.Fprintf(errOut, format, args...)
}
