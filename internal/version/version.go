// Package version holds the build's version, stamped at link time:
//
//	go build -ldflags "-X github.com/kubectl-drift/kubectl-drift/internal/version.gitVersion=v0.1.0
//	  -X .../internal/version.gitCommit=<sha> -X .../internal/version.buildDate=2026-12-02T00:00:00Z"
//
// hack/release.sh and `make build` set all three (the release takes the
// build date from the commit, so a rebuild gives the same bytes).
package version

import (
	"fmt"
	"runtime"
)

// Stamped at build time; the defaults describe an unstamped dev build.
// They are variables only because -X can set nothing else; nothing writes
// them at run time.
var (
	gitVersion = "v0.0.0-dev"
	gitCommit  = "unknown"
	buildDate  = "unknown"
)

// Info is the version of this build, as `drift version -o json|yaml` prints it.
type Info struct {
	// GitVersion is the semantic version, "v0.1.0".
	GitVersion string `json:"gitVersion"`
	// GitCommit is the full commit id the binary was built from.
	GitCommit string `json:"gitCommit"`
	// BuildDate is RFC 3339, UTC.
	BuildDate string `json:"buildDate"`
	// GoVersion is the Go toolchain that built it.
	GoVersion string `json:"goVersion"`
	// Platform is GOOS/GOARCH.
	Platform string `json:"platform"`
}

// Get returns the version of this build.
func Get() Info {
	return Info{
		GitVersion: gitVersion,
		GitCommit:  gitCommit,
		BuildDate:  buildDate,
		GoVersion:  runtime.Version(),
		Platform:   runtime.GOOS + "/" + runtime.GOARCH,
	}
}

// String renders "v0.1.0 (commit abc123, built 2026-12-02T00:00:00Z)".
func String() string {
	return fmt.Sprintf("%s (commit %s, built %s)", gitVersion, gitCommit, buildDate)
}

// Version returns the semantic version alone.
func Version() string { return gitVersion }
