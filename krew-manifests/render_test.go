// Package krewmanifests holds the templates of the release's plugin
// manifests (drift.yaml for krew, flux-plugin-drift.yaml for the Flux plugin
// catalog); hack/release.sh renders them into dist/. Its tests run the
// release's archive, render and verify steps on stand-in binaries, so they
// need no cross-compilation: the real release is installed end to end by
// e2e/install_test.go.
package krewmanifests

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

var platforms = [][2]string{
	{"linux", "amd64"}, {"linux", "arm64"}, {"darwin", "amd64"},
	{"darwin", "arm64"}, {"windows", "amd64"}, {"windows", "arm64"},
}

const testVersion = "v1.2.3-rc.1"

// release runs hack/release.sh STEPS on stand-in binaries in a new dist dir.
func release(t *testing.T, dist string, steps ...string) {
	t.Helper()
	standIns(t, dist)
	runRelease(t, dist, steps...)
}

// standIns writes one small stand-in binary per platform into the build
// dir, where `hack/release.sh build` would put the real ones.
func standIns(t *testing.T, dist string) (paths []string) {
	t.Helper()
	for _, p := range platforms {
		exe := ""
		if p[0] == "windows" {
			exe = ".exe"
		}
		dir := filepath.Join(dist, "build", p[0]+"_"+p[1])
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		// Different content per platform, so a mix-up changes a checksum.
		path := filepath.Join(dir, "kubectl-drift"+exe)
		if err := os.WriteFile(path, []byte("stand-in binary for "+p[0]+"/"+p[1]+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, path)
	}
	return paths
}

func runRelease(t *testing.T, dist string, steps ...string) {
	t.Helper()
	if out, err := releaseCmd(t, dist, nil, steps...).CombinedOutput(); err != nil {
		t.Fatalf("hack/release.sh %v: %v\n%s", steps, err, out)
	}
}

// releaseCmd is hack/release.sh STEPS on dist with the test's version and
// base URL, plus env.
func releaseCmd(t *testing.T, dist string, env []string, steps ...string) *exec.Cmd {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("zip"); err != nil {
		t.Skip("zip is not installed")
	}
	cmd := exec.Command(filepath.Join(root, "hack", "release.sh"), steps...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "DIST_DIR="+dist, "VERSION="+testVersion, "RELEASE_BASE_URL=https://example.invalid/dl/")
	cmd.Env = append(cmd.Env, env...)
	return cmd
}

func sum(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func archiveName(os, arch string) string {
	ext := ".tar.gz"
	if os == "windows" {
		ext = ".zip"
	}
	return "kubectl-drift_" + testVersion + "_" + os + "_" + arch + ext
}

func TestRenderedManifestsCarryTheArchivesChecksums(t *testing.T) {
	dist := t.TempDir()
	release(t, dist, "archive", "manifests", "verify")

	var krew KrewPlugin
	kb, err := os.ReadFile(filepath.Join(dist, "krew", "drift.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(kb, &krew); err != nil {
		t.Fatal(err)
	}
	// Flux's catalog schema (fluxcd/plugins schemas/plugin-cli-v1beta1.json)
	// allows no extra properties: decode strictly into its shape.
	var flux FluxPlugin
	fb, err := os.ReadFile(filepath.Join(dist, "flux", "drift.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(fb, &flux); err != nil {
		t.Fatalf("flux manifest does not fit the catalog schema: %v\n%s", err, fb)
	}

	for _, b := range [][]byte{kb, fb} {
		if bytes.Contains(b, []byte("TEMPLATE")) || regexp.MustCompile(`@[A-Z0-9_]+@`).Match(b) {
			t.Errorf("rendered manifest still has template text:\n%s", b)
		}
	}
	if krew.APIVersion != "krew.googlecontainertools.github.com/v1alpha2" || krew.Kind != "Plugin" || krew.Metadata.Name != "drift" || krew.Spec.Version != testVersion {
		t.Errorf("krew header: %s %s %s %s", krew.APIVersion, krew.Kind, krew.Metadata.Name, krew.Spec.Version)
	}
	if !strings.Contains(krew.Spec.Caveats, "/store/drift/"+testVersion+"/kubectl_complete-drift") {
		t.Errorf("krew caveats do not point at this version's completion shim:\n%s", krew.Spec.Caveats)
	}
	if flux.APIVersion != "cli.fluxcd.io/v1beta1" || flux.Kind != "Plugin" || flux.Name != "drift" || flux.Bin != "flux-drift" ||
		len(flux.Versions) != 1 || flux.Versions[0].Version != strings.TrimPrefix(testVersion, "v") {
		t.Errorf("flux header: %+v", flux)
	}
	if len(krew.Spec.Platforms) != len(platforms) || len(flux.Versions) == 1 && len(flux.Versions[0].Platforms) != len(platforms) {
		t.Fatalf("platform counts: krew %d, flux %+v", len(krew.Spec.Platforms), flux.Versions)
	}

	for _, p := range platforms {
		name := archiveName(p[0], p[1])
		want := sum(t, filepath.Join(dist, name))
		if b, _ := os.ReadFile(filepath.Join(dist, name+".sha256")); string(b) != want+"  "+name+"\n" {
			t.Errorf("%s.sha256 = %q, want the archive's %s", name, b, want)
		}
		url := "https://example.invalid/dl/" + name
		n := 0
		for _, kp := range krew.Spec.Platforms {
			if kp.Selector.MatchLabels["os"] != p[0] || kp.Selector.MatchLabels["arch"] != p[1] {
				continue
			}
			n++
			if kp.Sha256 != want || kp.URI != url {
				t.Errorf("krew %s: uri %s sha256 %s, want %s %s", name, kp.URI, kp.Sha256, url, want)
			}
		}
		for _, fp := range flux.Versions[0].Platforms {
			if fp.OS != p[0] || fp.Arch != p[1] {
				continue
			}
			n++
			if fp.Checksum != "sha256:"+want || fp.URL != url {
				t.Errorf("flux %s: url %s checksum %s, want %s sha256:%s", name, fp.URL, fp.Checksum, url, want)
			}
		}
		if n != 2 {
			t.Errorf("%s/%s appears %d times across the two manifests, want once in each", p[0], p[1], n)
		}
	}
}

func TestArchivesAreReproducible(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	release(t, a, "archive", "manifests")
	// Other file times and modes on the inputs must not matter.
	old := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	for _, path := range standIns(t, b) {
		if err := os.Chtimes(path, old, old); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	runRelease(t, b, "archive", "manifests")
	for _, p := range platforms {
		name := archiveName(p[0], p[1])
		if sa, sb := sum(t, filepath.Join(a, name)), sum(t, filepath.Join(b, name)); sa != sb {
			t.Errorf("%s differs between two runs: %s vs %s", name, sa, sb)
		}
	}
	for _, f := range []string{"krew/drift.yaml", "flux/drift.yaml", "checksums.txt"} {
		if sum(t, filepath.Join(a, f)) != sum(t, filepath.Join(b, f)) {
			t.Errorf("%s differs between two runs", f)
		}
	}
}

// The verify step fails when an archive no longer matches the manifests.
func TestVerifyCatchesAChangedArchive(t *testing.T) {
	dist := t.TempDir()
	release(t, dist, "archive", "manifests")
	path := filepath.Join(dist, archiveName("linux", "arm64"))
	if err := os.WriteFile(path, []byte("tampered"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := releaseCmd(t, dist, nil, "verify").CombinedOutput()
	if err == nil {
		t.Fatalf("verify accepted a tampered archive:\n%s", out)
	}
	if !strings.Contains(string(out), "does not match") {
		t.Errorf("verify's message does not say what failed:\n%s", out)
	}
}

// A release of some platforms only (e2e's TestInstall builds two): with
// PARTIAL_MANIFESTS=1 both manifests list exactly the platforms built, with
// their checksums; without it the missing platforms are an error, so a real
// release cannot ship a short manifest by mistake.
func TestPartialManifestsListOnlyBuiltPlatforms(t *testing.T) {
	dist := t.TempDir()
	standIns(t, dist)
	subset := []string{"linux/amd64", "windows/amd64"}
	env := []string{"PLATFORMS=" + strings.Join(subset, " ")}
	out, err := releaseCmd(t, dist, env, "archive", "manifests").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "placeholders left") {
		t.Fatalf("a subset without PARTIAL_MANIFESTS=1 rendered (err %v):\n%s", err, out)
	}
	env = append(env, "PARTIAL_MANIFESTS=1")
	if out, err := releaseCmd(t, dist, env, "archive", "manifests", "verify").CombinedOutput(); err != nil {
		t.Fatalf("hack/release.sh with PARTIAL_MANIFESTS=1: %v\n%s", err, out)
	}

	var krew KrewPlugin
	var flux FluxPlugin
	kb, errK := os.ReadFile(filepath.Join(dist, "krew", "drift.yaml"))
	fb, errF := os.ReadFile(filepath.Join(dist, "flux", "drift.yaml"))
	if errK != nil || errF != nil {
		t.Fatal(errK, errF)
	}
	if err := yaml.UnmarshalStrict(kb, &krew); err != nil {
		t.Fatalf("krew manifest: %v\n%s", err, kb)
	}
	if err := yaml.UnmarshalStrict(fb, &flux); err != nil || len(flux.Versions) != 1 {
		t.Fatalf("flux manifest: %v\n%s", err, fb)
	}
	var gotKrew, gotFlux []string
	for _, p := range krew.Spec.Platforms {
		goos, arch := p.Selector.MatchLabels["os"], p.Selector.MatchLabels["arch"]
		gotKrew = append(gotKrew, goos+"/"+arch)
		if want := sum(t, filepath.Join(dist, archiveName(goos, arch))); p.Sha256 != want {
			t.Errorf("krew %s/%s sha256 %s, want %s", goos, arch, p.Sha256, want)
		}
		if len(p.Files) == 0 || p.Bin == "" {
			t.Errorf("krew %s/%s lost its files or bin: %+v", goos, arch, p)
		}
	}
	for _, p := range flux.Versions[0].Platforms {
		gotFlux = append(gotFlux, p.OS+"/"+p.Arch)
		if want := "sha256:" + sum(t, filepath.Join(dist, archiveName(p.OS, p.Arch))); p.Checksum != want {
			t.Errorf("flux %s/%s checksum %s, want %s", p.OS, p.Arch, p.Checksum, want)
		}
	}
	if strings.Join(gotKrew, " ") != strings.Join(subset, " ") || strings.Join(gotFlux, " ") != strings.Join(subset, " ") {
		t.Errorf("platforms: krew %v, flux %v, want %v in both", gotKrew, gotFlux, subset)
	}
	// The text after the platform lists survives the cut (krew's
	// platforms list is the last key; flux's is nested in versions).
	if !strings.Contains(string(kb), "shortDescription:") || !strings.Contains(string(fb), "bin: flux-drift") {
		t.Errorf("the cut removed more than platform entries:\n%s\n%s", kb, fb)
	}
}
