package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-drift/kubectl-drift/internal/version"
)

func TestFrontendFor(t *testing.T) {
	tests := []struct {
		argv0    string
		fallback Frontend
		want     Frontend
	}{
		{"kubectl-drift", HostFrontend("flux"), KubectlFrontend},
		// kubectl execs a plugin with argv[0] = the path it found; krew
		// puts a symlink named after the bin into $KREW_ROOT/bin.
		{"/home/u/.krew/bin/kubectl-drift", HostFrontend("argocd"), KubectlFrontend},
		{"/usr/local/bin/argocd-drift", KubectlFrontend, HostFrontend("argocd")},
		{"/home/u/.fluxcd/plugins/flux-drift", KubectlFrontend, HostFrontend("flux")},
		{`C:\Users\u\.krew\bin\kubectl-drift.exe`, HostFrontend("flux"), KubectlFrontend},
		{`C:\plugins\FLUX-DRIFT.EXE`, KubectlFrontend, HostFrontend("flux")},
		{"argocd-drift-v0.1.0", KubectlFrontend, HostFrontend("argocd")},
		// Unknown names keep the main's own door.
		{"drift", HostFrontend("argocd"), HostFrontend("argocd")},
		{"/tmp/go-build123/b001/exe/main", HostFrontend("flux"), HostFrontend("flux")},
		{"kubectl-driftwood", HostFrontend("flux"), HostFrontend("flux")},
		{"", KubectlFrontend, KubectlFrontend},
	}
	for _, tt := range tests {
		if got := FrontendFor(tt.argv0, tt.fallback); got != tt.want {
			t.Errorf("FrontendFor(%q, %s) = %q, want %q", tt.argv0, tt.fallback.Name, got.Name, tt.want.Name)
		}
	}
}

// The doors come from the registry: kubectl's, then one per engine with a
// host CLI, each defaulting to its engine (DESIGN.md: `argocd drift`
// defaults to --engine argocd).
func TestFrontendsFromTheRegistry(t *testing.T) {
	want := []Frontend{{Name: "kubectl drift", DefaultEngine: "auto"}, {Name: "argocd drift", DefaultEngine: "argocd"}, {Name: "flux drift", DefaultEngine: "flux"}}
	got := Frontends()
	if len(got) != len(want) {
		t.Fatalf("Frontends() = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("Frontends()[%d] = %v, want %v", i, got[i], want[i])
		}
	}
	if HostFrontend("argocd") != want[1] || HostFrontend("flux") != want[2] || HostFrontend("jenkins") != KubectlFrontend {
		t.Errorf("HostFrontend: argocd %v, flux %v, jenkins %v", HostFrontend("argocd"), HostFrontend("flux"), HostFrontend("jenkins"))
	}
}

func TestExecutableName(t *testing.T) {
	want := map[string]string{"kubectl drift": "kubectl-drift", "argocd drift": "argocd-drift", "flux drift": "flux-drift"}
	for _, fe := range Frontends() {
		if got := fe.ExecutableName(); got != want[fe.Name] {
			t.Errorf("%s.ExecutableName() = %q, want %q", fe.Name, got, want[fe.Name])
		}
	}
}

// run executes one command tree of the door and returns stdout, stderr and
// the process exit code Main would return.
func run(t *testing.T, fe Frontend, args ...string) (stdout, stderr string, code int, root *cobra.Command) {
	t.Helper()
	var in, out, errOut bytes.Buffer
	streams := genericiooptions.IOStreams{In: &in, Out: &out, ErrOut: &errOut}
	root = NewRootCommand(fe, streams)
	root.SetArgs(args)
	err := root.Execute()
	code = exitCode(err, streams)
	return out.String(), errOut.String(), code, root
}

func TestDoorsShowTheirNameInHelpAndUsage(t *testing.T) {
	for _, fe := range Frontends() {
		t.Run(fe.ExecutableName(), func(t *testing.T) {
			out, _, code, _ := run(t, fe, "--help")
			if code != 0 {
				t.Fatalf("--help exit %d", code)
			}
			for _, want := range []string{
				"Usage:\n  " + fe.Name + " [command]\n",
				"help for " + fe.Name + "\n",
				`Use "` + fe.Name + ` [command] --help" for more information about a command.`,
				fe.Name + " explains configuration drift",
			} {
				if !strings.Contains(out, want) {
					t.Errorf("--help lacks %q:\n%s", want, out)
				}
			}
			// No other door's name leaks into this door's help.
			for _, other := range Frontends() {
				if other != fe && strings.Contains(out, other.Name) {
					t.Errorf("--help of %s mentions %q:\n%s", fe.Name, other.Name, out)
				}
			}

			out, _, code, _ = run(t, fe, "version", "--help")
			if code != 0 {
				t.Fatalf("version --help exit %d", code)
			}
			if want := "Usage:\n  " + fe.Name + " version [flags]\n"; !strings.Contains(out, want) {
				t.Errorf("version --help lacks %q:\n%s", want, out)
			}

			// A flag error names the door in its hint and exits 2.
			_, errOut, code, _ := run(t, fe, "version", "--no-such-flag")
			if code != ExitFailure {
				t.Errorf("bad flag exit %d, want %d", code, ExitFailure)
			}
			if want := "See '" + fe.Name + " version --help' for usage"; !strings.Contains(errOut, want) {
				t.Errorf("bad flag error lacks %q:\n%s", want, errOut)
			}
			if strings.Count(strings.TrimSpace(errOut), "\n") > 1 {
				t.Errorf("bad flag error is more than a short message:\n%s", errOut)
			}
		})
	}
}

func TestDoorsDefaultEngine(t *testing.T) {
	want := map[string]string{"kubectl drift": "auto", "argocd drift": "argocd", "flux drift": "flux"}
	for _, fe := range Frontends() {
		t.Run(fe.ExecutableName(), func(t *testing.T) {
			_, _, code, root := run(t, fe, "version")
			if code != 0 {
				t.Fatalf("version exit %d", code)
			}
			f := root.PersistentFlags().Lookup("engine")
			if f == nil {
				t.Fatal("no --engine flag")
			}
			if f.DefValue != want[fe.Name] || f.Value.String() != want[fe.Name] {
				t.Errorf("--engine default %q (value %q), want %q", f.DefValue, f.Value.String(), want[fe.Name])
			}
			out, _, _, _ := run(t, fe, "--help")
			if w := `--engine string`; !strings.Contains(out, w) || !strings.Contains(out, `(default "`+want[fe.Name]+`")`) {
				t.Errorf("--help does not show --engine default %q:\n%s", want[fe.Name], out)
			}
		})
	}
}

// Neither argocd nor flux forwards its global flags to a plugin (engines.md
// section 5), so each door must parse the kube flags itself, before and
// after the subcommand.
func TestDoorsParseTheirOwnKubeFlags(t *testing.T) {
	for _, fe := range Frontends() {
		t.Run(fe.ExecutableName(), func(t *testing.T) {
			for _, args := range [][]string{
				{"version", "--kubeconfig", "/tmp/kc", "--context", "ctx-a", "-n", "ns-a"},
				{"--kubeconfig=/tmp/kc", "--context=ctx-a", "--namespace=ns-a", "version"},
			} {
				_, errOut, code, root := run(t, fe, args...)
				if code != 0 {
					t.Fatalf("%v: exit %d: %s", args, code, errOut)
				}
				for flag, want := range map[string]string{"kubeconfig": "/tmp/kc", "context": "ctx-a", "namespace": "ns-a"} {
					f := root.PersistentFlags().Lookup(flag)
					if f == nil {
						t.Fatalf("no --%s flag", flag)
					}
					if f.Value.String() != want {
						t.Errorf("%v: --%s = %q, want %q", args, flag, f.Value.String(), want)
					}
				}
			}
		})
	}
}

func TestCompletion(t *testing.T) {
	for _, fe := range Frontends() {
		t.Run(fe.ExecutableName(), func(t *testing.T) {
			out, _, code, _ := run(t, fe, cobra.ShellCompRequestCmd, "--engine", "")
			if code != 0 {
				t.Fatalf("__complete --engine exit %d", code)
			}
			// cobra prints one candidate a line, then ":<directive>".
			want := "auto\nargocd\nflux\n:4\n"
			if !strings.HasPrefix(out, want) {
				t.Errorf("__complete --engine '' = %q, want prefix %q", out, want)
			}

			out, _, code, _ = run(t, fe, cobra.ShellCompRequestCmd, "")
			if code != 0 {
				t.Fatalf("__complete '' exit %d", code)
			}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			var names []string
			for _, l := range lines[:len(lines)-1] {
				name, _, _ := strings.Cut(l, "\t")
				names = append(names, name)
			}
			for _, want := range []string{"help", "version"} {
				if !contains(names, want) {
					t.Errorf("__complete '' lacks subcommand %q: %v", want, names)
				}
			}
			if !strings.HasPrefix(lines[len(lines)-1], ":") {
				t.Errorf("__complete output does not end with a directive: %q", out)
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestVersionCommandNamesTheDoor(t *testing.T) {
	for _, fe := range Frontends() {
		out, _, code, _ := run(t, fe, "version")
		if code != 0 {
			t.Fatalf("%s version exit %d", fe.Name, code)
		}
		if !strings.HasPrefix(out, fe.Name+" v") {
			t.Errorf("%s version = %q, want it to start with %q", fe.Name, out, fe.Name+" v")
		}
	}
}

func TestMainArgvPicksTheDoorFromArgv0(t *testing.T) {
	// MainArgv writes to the process's stdout; only the exit code is
	// checked here, the door choice is FrontendFor's (tested above) and
	// the built binaries are checked end to end in e2e/install_test.go.
	if code := MainArgv(KubectlFrontend, []string{"/x/flux-drift", "version", "--no-such-flag"}); code != ExitFailure {
		t.Errorf("bad flag exit %d, want %d", code, ExitFailure)
	}
	if code := MainArgv(KubectlFrontend, nil); code != ExitNoDrift {
		t.Errorf("empty argv (no subcommand, prints help) exit %d, want 0", code)
	}
}

func TestVersionOutputFormats(t *testing.T) {
	out, _, code, _ := run(t, KubectlFrontend, "version", "-o", "json")
	if code != 0 {
		t.Fatalf("version -o json exit %d", code)
	}
	var info version.Info
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&info); err != nil {
		t.Fatalf("version -o json: %v\n%s", err, out)
	}
	if info != version.Get() {
		t.Errorf("version -o json = %+v, want %+v", info, version.Get())
	}
	out, _, code, _ = run(t, HostFrontend("flux"), "version", "-o", "yaml")
	if code != 0 || !strings.Contains(out, "gitVersion: "+version.Version()+"\n") {
		t.Errorf("version -o yaml: exit %d\n%s", code, out)
	}
	_, errOut, code, _ := run(t, HostFrontend("argocd"), "version", "-o", "table")
	if code != ExitFailure || !strings.Contains(errOut, `invalid -o "table"`) {
		t.Errorf("version -o table: exit %d, stderr %q", code, errOut)
	}
}
