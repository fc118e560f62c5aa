package cli

import (
	"path/filepath"
	"strings"

	"github.com/kubectl-drift/kubectl-drift/internal/engine"
)

// Frontends lists the doors, in the order their executable names are
// matched: kubectl's, then one per registered engine with a host CLI
// (engine.Descriptor.Host), whose --engine default is that engine.
func Frontends() []Frontend {
	out := []Frontend{KubectlFrontend}
	for _, d := range engine.All() {
		if d.Host != "" {
			out = append(out, Frontend{Name: d.Host + " drift", DefaultEngine: string(d.Name)})
		}
	}
	return out
}

// HostFrontend is the door of the engine whose CLI is host ("argocd":
// `argocd drift`, --engine argocd by default); kubectl's for any other.
func HostFrontend(host string) Frontend {
	for _, fe := range Frontends() {
		if fe.Name == host+" drift" {
			return fe
		}
	}
	return KubectlFrontend
}

// ExecutableName is the file name a host CLI looks for: "kubectl-drift" for
// "kubectl drift". kubectl (pkg/cmd/plugin), Argo CD >= 3.1
// (cmd/argocd/commands/plugin.go) and Flux >= 2.9 (internal/plugin/discovery.go)
// all map "<host> <name>" to an executable "<host>-<name>".
func (fe Frontend) ExecutableName() string {
	return strings.ReplaceAll(fe.Name, " ", "-")
}

// FrontendFor picks the door from the name the process was started under
// (argv[0]), so that one binary can be installed under the three names:
// the release archives carry the same program three times, and a copy or
// symlink named argocd-drift behaves as `argocd drift`. Host CLIs exec
// plugins with argv[0] set to the plugin's path (kubectl's
// pkg/cmd/plugin.DefaultPluginHandler.Execute, Flux's internal/plugin/exec_unix.go,
// Argo CD's DefaultPluginHandler.command), and a krew install is a symlink
// named after the plugin's bin, so the base name is reliable.
//
// The name may carry a Windows extension or a suffix after the door's name
// ("kubectl-drift.exe", "flux-drift-v0.1.0"). An unknown name (a binary
// renamed to "drift", `go run`) gets fallback: each thin main passes its own
// door, so a main never changes door unless renamed to another door's name.
func FrontendFor(argv0 string, fallback Frontend) Frontend {
	base := strings.ToLower(filepath.Base(filepath.ToSlash(argv0)))
	// filepath.Base only splits on the host separator; a Windows path seen
	// on Unix (tests, wine) still has backslashes.
	if i := strings.LastIndexAny(base, `/\`); i >= 0 {
		base = base[i+1:]
	}
	for _, ext := range []string{".exe", ".cmd", ".bat"} {
		base = strings.TrimSuffix(base, ext)
	}
	for _, fe := range Frontends() {
		name := fe.ExecutableName()
		if base == name || strings.HasPrefix(base, name+"-") || strings.HasPrefix(base, name+"_") {
			return fe
		}
	}
	return fallback
}

// MainArgv is Main for a process's full argv: it picks the door from
// argv[0] (see FrontendFor) and runs the rest.
func MainArgv(fallback Frontend, argv []string) int {
	if len(argv) == 0 {
		return Main(fallback, nil)
	}
	return Main(FrontendFor(argv[0], fallback), argv[1:])
}
