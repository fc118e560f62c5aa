//go:build e2e

package e2e

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	krewmanifests "github.com/kubectl-drift/kubectl-drift/krew-manifests"
)

// The install tests build the release exactly as `make dist` does
// (hack/release.sh), then install it the way each ecosystem installs
// plugins, with the real tools built from the Go module proxy:
//
//   - krew: validate-krew-manifest (full install validation of every
//     platform, LICENSE check included) with the archives served from a
//     loopback HTTP server; `kubectl krew install --manifest --archive`;
//     and the index flow (`kubectl krew update` + `install drift` from a
//     local git index). The installed plugin then runs through OUR kubectl's
//     plugin discovery, completion included (kubectl_complete-drift).
//   - Flux: `flux plugin install drift@sha256:...` from the rendered catalog
//     manifest served over loopback HTTPS, then `flux drift ...` (the flux
//     CLI from hack/build-flux.sh).
//   - Argo CD: argocd-drift from the archive on PATH, run as `argocd drift`
//     by the real argocd CLI (hack/build-tools.sh argocd) when it builds;
//     otherwise by exec'ing it from PATH exactly as Argo CD >= 3.1 does.
//
// DRIFT_DIST_DIR=dist reuses a `make dist` output instead of building one
// (it must be complete: six platforms and both manifests).
//
// Which platforms: DRIFT_RELEASE_PLATFORMS=all builds and checks all six,
// as `make dist` ships them; a list ("linux/amd64 darwin/arm64") builds
// those. By default (and in CI) it builds two: the host, which the install
// checks run, and windows/amd64, the other archive format (zip, .exe, PE).
// Each platform is a full cross-compile of the dependency tree, minutes
// and gigabytes on a cold cache; the four left out differ from these only
// in GOOS/GOARCH, and krew-manifests' unit tests render all six.

// platform is one release target.
type platform struct{ OS, Arch string }

func (p platform) String() string { return p.OS + "/" + p.Arch }

func (p platform) exe() string {
	if p.OS == "windows" {
		return ".exe"
	}
	return ""
}

// allPlatforms are the targets hack/release.sh builds by default.
var allPlatforms = []platform{
	{"linux", "amd64"}, {"linux", "arm64"},
	{"darwin", "amd64"}, {"darwin", "arm64"},
	{"windows", "amd64"}, {"windows", "arm64"},
}

// installPlatforms are the platforms this run builds and checks
// (DRIFT_RELEASE_PLATFORMS, above).
func installPlatforms(t *testing.T) []platform {
	t.Helper()
	v := strings.TrimSpace(os.Getenv("DRIFT_RELEASE_PLATFORMS"))
	switch {
	case v == "all" || v == "" && os.Getenv("DRIFT_DIST_DIR") != "":
		return allPlatforms
	case v == "":
		ps := []platform{{runtime.GOOS, runtime.GOARCH}}
		if w := (platform{"windows", "amd64"}); ps[0] != w {
			ps = append(ps, w)
		}
		return ps
	}
	var ps []platform
	for _, f := range strings.FieldsFunc(v, func(r rune) bool { return r == ' ' || r == ',' }) {
		goos, arch, ok := strings.Cut(f, "/")
		if p := (platform{goos, arch}); ok && slices.Contains(allPlatforms, p) && !slices.Contains(ps, p) {
			ps = append(ps, p)
			continue
		}
		t.Fatalf("DRIFT_RELEASE_PLATFORMS: %q is not one of %v", f, allPlatforms)
	}
	if !slices.Contains(ps, platform{runtime.GOOS, runtime.GOARCH}) {
		t.Fatalf("DRIFT_RELEASE_PLATFORMS %q lacks the host %s/%s, which the install checks run", v, runtime.GOOS, runtime.GOARCH)
	}
	return ps
}

// releaseEnv is the environment that makes hack/release.sh build (or
// re-archive) exactly r's platforms.
func (r *release) releaseEnv() []string {
	names := make([]string, len(r.Platforms))
	for i, p := range r.Platforms {
		names[i] = p.String()
	}
	env := []string{"PLATFORMS=" + strings.Join(names, " ")}
	if len(r.Platforms) < len(allPlatforms) {
		env = append(env, "PARTIAL_MANIFESTS=1")
	}
	return env
}

// release is a built dist directory and what the tests read from it.
type release struct {
	Dir     string
	Version string
	// Platforms are the ones built and checked (installPlatforms).
	Platforms []platform
	Krew      krewmanifests.KrewPlugin
	Flux      krewmanifests.FluxPlugin
	// Archives maps a platform to its archive's file name.
	Archives map[platform]string
	// Commit is HEAD when this test built the release, and Clean says
	// the tracked files had no changes then; both empty/false for a
	// DRIFT_DIST_DIR release.
	Commit string
	Clean  bool
}

// defaultBaseURL is where hack/release.sh points the manifests unless
// RELEASE_BASE_URL says otherwise; the tests swap it for a loopback server.
func defaultBaseURL(version string) string {
	return "https://github.com/kubectl-drift/kubectl-drift/releases/download/" + version
}

func buildRelease(t *testing.T) *release {
	t.Helper()
	dir := os.Getenv("DRIFT_DIST_DIR")
	r := &release{Platforms: installPlatforms(t), Archives: map[platform]string{}}
	if dir != "" {
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(E.Root, dir)
		}
		t.Logf("using the release in %s (DRIFT_DIST_DIR)", dir)
	} else {
		dir = t.TempDir()
		r.Commit, r.Clean = gitState(t)
		start := time.Now()
		cmd := exec.Command(filepath.Join(E.Root, "hack", "release.sh"))
		cmd.Dir = E.Root
		cmd.Env = append(os.Environ(), "DIST_DIR="+dir)
		cmd.Env = slices.DeleteFunc(cmd.Env, func(kv string) bool {
			return strings.HasPrefix(kv, "VERSION=") || strings.HasPrefix(kv, "RELEASE_BASE_URL=") ||
				strings.HasPrefix(kv, "PLATFORMS=") || strings.HasPrefix(kv, "PARTIAL_MANIFESTS=")
		})
		cmd.Env = append(cmd.Env, r.releaseEnv()...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("hack/release.sh: %v\n%s", err, out)
		}
		t.Logf("hack/release.sh built the release in %s:\n%s", time.Since(start).Round(time.Second), out)
	}
	r.Dir = dir
	readYAML(t, filepath.Join(dir, "krew", "drift.yaml"), &r.Krew, false)
	readYAML(t, filepath.Join(dir, "flux", "drift.yaml"), &r.Flux, true)
	r.Version = r.Krew.Spec.Version
	for _, p := range r.Platforms {
		ext := ".tar.gz"
		if p.OS == "windows" {
			ext = ".zip"
		}
		r.Archives[p] = fmt.Sprintf("kubectl-drift_%s_%s_%s%s", r.Version, p.OS, p.Arch, ext)
	}
	return r
}

// gitState returns HEAD and whether the tracked files are unchanged.
func gitState(t *testing.T) (commit string, clean bool) {
	t.Helper()
	head, err := exec.Command("git", "-C", E.Root, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatalf("git rev-parse HEAD: %v", err)
	}
	status, err := exec.Command("git", "-C", E.Root, "status", "--porcelain", "--untracked-files=no").Output()
	if err != nil {
		t.Fatalf("git status: %v", err)
	}
	return strings.TrimSpace(string(head)), len(bytes.TrimSpace(status)) == 0
}

func readYAML(t *testing.T, path string, v any, strict bool) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strict {
		err = yaml.UnmarshalStrict(b, v)
	} else {
		err = yaml.Unmarshal(b, v)
	}
	if err != nil {
		t.Fatalf("%s: %v\n%s", path, err, b)
	}
}

func sha256File(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }() // read only: a Close error loses nothing
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TestInstall builds one release and runs every install check on it; the
// subtests share the (slow) release build.
func TestInstall(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-compiles the release")
	}
	r := buildRelease(t)
	t.Logf("release %s in %s", r.Version, r.Dir)
	t.Run("ArchivesMatchManifests", func(t *testing.T) { testArchivesMatchManifests(t, r) })
	t.Run("ArchiveContents", func(t *testing.T) { testArchiveContents(t, r) })
	t.Run("Deterministic", func(t *testing.T) { testDeterministic(t, r) })
	t.Run("KrewValidateManifest", func(t *testing.T) { testKrewValidate(t, r) })
	t.Run("KrewInstallArchive", func(t *testing.T) { testKrewInstallArchive(t, r) })
	t.Run("KrewIndex", func(t *testing.T) { testKrewIndex(t, r) })
	t.Run("FluxPlugin", func(t *testing.T) { testFluxPlugin(t, r) })
	t.Run("ArgoCDPlugin", func(t *testing.T) { testArgoCDPlugin(t, r) })
}

var (
	semverV   = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$`)
	hex64     = regexp.MustCompile(`^[a-f0-9]{64}$`)
	fluxName  = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
	fluxSemVr = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+(-.+)?$`)
)

// testArchivesMatchManifests recomputes every archive's sha256 and checks it
// against its .sha256 file, checksums.txt and both rendered manifests.
func testArchivesMatchManifests(t *testing.T, r *release) {
	k := r.Krew
	if k.APIVersion != "krew.googlecontainertools.github.com/v1alpha2" || k.Kind != "Plugin" || k.Metadata.Name != "drift" {
		t.Errorf("krew manifest header = %s %s %s", k.APIVersion, k.Kind, k.Metadata.Name)
	}
	if !semverV.MatchString(k.Spec.Version) {
		t.Errorf("krew spec.version %q is not vX.Y.Z semver", k.Spec.Version)
	}
	if k.Spec.ShortDescription == "" || strings.Contains(k.Spec.ShortDescription, "\n") {
		t.Errorf("krew shortDescription %q must be one non-empty line", k.Spec.ShortDescription)
	}
	f := r.Flux
	if f.APIVersion != "cli.fluxcd.io/v1beta1" || f.Kind != "Plugin" || f.Name != "drift" || f.Bin != "flux-drift" {
		t.Errorf("flux manifest header = %s %s name=%s bin=%s", f.APIVersion, f.Kind, f.Name, f.Bin)
	}
	if !fluxName.MatchString(f.Name) || !fluxName.MatchString(f.Bin) || f.Description == "" ||
		!strings.HasPrefix(f.Homepage, "https://") || !strings.HasPrefix(f.Source, "https://") {
		t.Errorf("flux manifest violates plugin-cli-v1beta1.json: %+v", f)
	}
	if len(f.Versions) != 1 {
		t.Fatalf("flux manifest has %d versions, want 1", len(f.Versions))
	}
	if got, want := f.Versions[0].Version, strings.TrimPrefix(r.Version, "v"); got != want || !fluxSemVr.MatchString(got) {
		t.Errorf("flux version %q, want %q (semver without v)", got, want)
	}
	if len(k.Spec.Platforms) != len(r.Platforms) || len(f.Versions[0].Platforms) != len(r.Platforms) {
		t.Errorf("manifests have %d (krew) and %d (flux) platforms, want %d",
			len(k.Spec.Platforms), len(f.Versions[0].Platforms), len(r.Platforms))
	}

	checksums, err := os.ReadFile(filepath.Join(r.Dir, "checksums.txt"))
	if err != nil {
		t.Fatal(err)
	}
	base := defaultBaseURL(r.Version)
	for _, p := range r.Platforms {
		name := r.Archives[p]
		sum := sha256File(t, filepath.Join(r.Dir, name))
		line := sum + "  " + name + "\n"
		if b, err := os.ReadFile(filepath.Join(r.Dir, name+".sha256")); err != nil || string(b) != line {
			t.Errorf("%s.sha256 = %q (%v), want %q", name, b, err, line)
		}
		if !strings.Contains(string(checksums), line) {
			t.Errorf("checksums.txt lacks %q", line)
		}

		kp := -1
		for i, pl := range k.Spec.Platforms {
			if pl.Selector.MatchLabels["os"] == p.OS && pl.Selector.MatchLabels["arch"] == p.Arch {
				if kp >= 0 {
					t.Errorf("krew: two platforms select %s", p)
				}
				kp = i
			}
		}
		if kp < 0 {
			t.Errorf("krew: no platform selects %s", p)
		} else {
			pl := k.Spec.Platforms[kp]
			if pl.Sha256 != sum || !hex64.MatchString(pl.Sha256) {
				t.Errorf("krew %s sha256 %q, archive has %q", p, pl.Sha256, sum)
			}
			if pl.URI != base+"/"+name {
				t.Errorf("krew %s uri %q, want %q", p, pl.URI, base+"/"+name)
			}
			if pl.Bin != "kubectl-drift"+p.exe() {
				t.Errorf("krew %s bin %q", p, pl.Bin)
			}
		}

		found := 0
		for _, pl := range f.Versions[0].Platforms {
			if pl.OS != p.OS || pl.Arch != p.Arch {
				continue
			}
			found++
			if pl.Checksum != "sha256:"+sum {
				t.Errorf("flux %s checksum %q, archive has sha256:%s", p, pl.Checksum, sum)
			}
			if pl.URL != base+"/"+name {
				t.Errorf("flux %s url %q, want %q", p, pl.URL, base+"/"+name)
			}
		}
		if found != 1 {
			t.Errorf("flux: %d platforms for %s, want 1", found, p)
		}
	}
}

// entry is one file of an archive.
type entry struct {
	Name  string
	Mode  fs.FileMode
	Mtime time.Time
	Data  []byte
}

func readArchive(t *testing.T, path string) []entry {
	t.Helper()
	var entries []entry
	if strings.HasSuffix(path, ".zip") {
		zr, err := zip.OpenReader(path)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = zr.Close() }() // read only: a Close error loses nothing
		for _, f := range zr.File {
			rc, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(rc)
			_ = rc.Close() // read only (a CRC error surfaces in ReadAll)
			if err != nil {
				t.Fatal(err)
			}
			entries = append(entries, entry{f.Name, f.Mode(), f.Modified.UTC(), b})
		}
		return entries
	}
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = fh.Close() }() // read only: a Close error loses nothing
	gz, err := gzip.NewReader(fh)
	if err != nil {
		t.Fatal(err)
	}
	if gz.Name != "" || !gz.ModTime.IsZero() {
		t.Errorf("%s: gzip header carries name %q / mtime %v (not gzip -n)", filepath.Base(path), gz.Name, gz.ModTime)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag != tar.TypeReg {
			t.Errorf("%s: %s is tar type %q, krew and flux extract regular files only", filepath.Base(path), h.Name, h.Typeflag)
		}
		if h.Uid != 0 || h.Gid != 0 {
			t.Errorf("%s: %s owned by %d:%d, want 0:0", filepath.Base(path), h.Name, h.Uid, h.Gid)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, entry{h.Name, h.FileInfo().Mode(), h.ModTime.UTC(), b})
	}
	return entries
}

// binaryTarget reads the OS and CPU an executable was built for.
func binaryTarget(b []byte) (platform, error) {
	r := bytes.NewReader(b)
	if f, err := elf.NewFile(r); err == nil {
		switch f.Machine {
		case elf.EM_X86_64:
			return platform{"linux", "amd64"}, nil
		case elf.EM_AARCH64:
			return platform{"linux", "arm64"}, nil
		}
		return platform{}, fmt.Errorf("ELF machine %v", f.Machine)
	}
	if f, err := macho.NewFile(r); err == nil {
		switch f.Cpu {
		case macho.CpuAmd64:
			return platform{"darwin", "amd64"}, nil
		case macho.CpuArm64:
			return platform{"darwin", "arm64"}, nil
		}
		return platform{}, fmt.Errorf("Mach-O cpu %v", f.Cpu)
	}
	if f, err := pe.NewFile(r); err == nil {
		switch f.Machine {
		case pe.IMAGE_FILE_MACHINE_AMD64:
			return platform{"windows", "amd64"}, nil
		case pe.IMAGE_FILE_MACHINE_ARM64:
			return platform{"windows", "arm64"}, nil
		}
		return platform{}, fmt.Errorf("PE machine %#x", f.Machine)
	}
	return platform{}, fmt.Errorf("not an ELF, Mach-O or PE executable")
}

// testArchiveContents checks what each archive holds: the three doors (one
// program, built for the archive's platform, stamped with the release's
// version), the completion shim and LICENSE, sorted, with fixed metadata.
func testArchiveContents(t *testing.T, r *release) {
	license, err := os.ReadFile(filepath.Join(E.Root, "LICENSE"))
	if err != nil {
		t.Fatal(err)
	}
	shim, err := os.ReadFile(filepath.Join(E.Root, "plugins", "kubectl-drift", "kubectl_complete-drift"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range r.Platforms {
		name := r.Archives[p]
		entries := readArchive(t, filepath.Join(r.Dir, name))
		want := []string{"LICENSE", "argocd-drift" + p.exe(), "flux-drift" + p.exe(), "kubectl-drift" + p.exe(), "kubectl_complete-drift"}
		if p.OS == "windows" {
			want = append(want, "kubectl_complete-drift.cmd")
		}
		slices.Sort(want)
		var names []string
		byName := map[string]entry{}
		for _, e := range entries {
			names = append(names, e.Name)
			byName[e.Name] = e
		}
		if !slices.Equal(names, want) {
			t.Errorf("%s holds %v, want (in this order) %v", name, names, want)
			continue
		}
		mtime := entries[0].Mtime
		for _, e := range entries {
			if !e.Mtime.Equal(mtime) {
				t.Errorf("%s: %s mtime %v differs from %v", name, e.Name, e.Mtime, mtime)
			}
		}
		if !bytes.Equal(byName["LICENSE"].Data, license) {
			t.Errorf("%s: LICENSE differs from the repository's", name)
		}
		if !bytes.Equal(byName["kubectl_complete-drift"].Data, shim) {
			t.Errorf("%s: kubectl_complete-drift differs from plugins/kubectl-drift/kubectl_complete-drift", name)
		}
		if p.OS != "windows" {
			for _, n := range []string{"argocd-drift", "flux-drift", "kubectl-drift", "kubectl_complete-drift"} {
				if m := byName[n].Mode.Perm(); m != 0o755 {
					t.Errorf("%s: %s mode %v, want 0755", name, n, m)
				}
			}
			if m := byName["LICENSE"].Mode.Perm(); m != 0o644 {
				t.Errorf("%s: LICENSE mode %v, want 0644", name, m)
			}
		}
		bin := byName["kubectl-drift"+p.exe()].Data
		for _, door := range []string{"argocd-drift", "flux-drift"} {
			if !bytes.Equal(byName[door+p.exe()].Data, bin) {
				t.Errorf("%s: %s is not the same program as kubectl-drift", name, door)
			}
		}
		got, err := binaryTarget(bin)
		if err != nil || got != p {
			t.Errorf("%s: kubectl-drift%s is built for %v (%v), want %v", name, p.exe(), got, err, p)
		}
		if !bytes.Contains(bin, []byte(r.Version)) {
			t.Errorf("%s: binary does not carry the version %s (-ldflags -X not applied?)", name, r.Version)
		}
	}
}

// testDeterministic rebuilds the archives and manifests from the same
// binaries, and one platform's binary from source, and wants identical
// bytes.
func testDeterministic(t *testing.T, r *release) {
	if _, err := os.Stat(filepath.Join(r.Dir, "build")); err != nil {
		t.Skipf("no build dir in %s to re-archive: %v", r.Dir, err)
	}
	dir := t.TempDir()
	// Hard links: the re-run must not touch the first release's binaries.
	err := filepath.WalkDir(filepath.Join(r.Dir, "build"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(r.Dir, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dir, rel), 0o755)
		}
		return os.Link(path, filepath.Join(dir, rel))
	})
	if err != nil {
		t.Fatal(err)
	}
	// The same version and source date as the first run (the archive's
	// mtimes are the source date): HEAD may have moved since, in a shared
	// working tree.
	host := platform{runtime.GOOS, runtime.GOARCH}
	epoch := readArchive(t, filepath.Join(r.Dir, r.Archives[host]))[0].Mtime.Unix()
	cmd := exec.Command(filepath.Join(E.Root, "hack", "release.sh"), "archive", "manifests", "verify")
	cmd.Dir = E.Root
	cmd.Env = append(os.Environ(), "DIST_DIR="+dir, "VERSION="+r.Version, fmt.Sprintf("SOURCE_DATE_EPOCH=%d", epoch))
	cmd.Env = append(cmd.Env, r.releaseEnv()...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hack/release.sh archive manifests verify: %v\n%s", err, out)
	}
	for _, f := range []string{"checksums.txt", "krew/drift.yaml", "flux/drift.yaml"} {
		a, errA := os.ReadFile(filepath.Join(r.Dir, f))
		b, errB := os.ReadFile(filepath.Join(dir, f))
		if errA != nil || errB != nil || !bytes.Equal(a, b) {
			t.Errorf("%s differs between two runs (%v, %v):\n%s\n---\n%s", f, errA, errB, a, b)
		}
	}

	// The Go build itself: the host's again, into another dir. Only for
	// a release this test built from this checkout (DRIFT_DIST_DIR may come
	// from another commit).
	if os.Getenv("DRIFT_DIST_DIR") != "" {
		t.Log("DRIFT_DIST_DIR: not rebuilding the binary from this checkout")
		return
	}
	if commit, clean := gitState(t); !r.Clean || !clean || commit != r.Commit {
		t.Logf("not rebuilding the binary: the checkout has uncommitted changes or moved (%s -> %s) since the release was built", r.Commit, commit)
		return
	}
	again := t.TempDir()
	cmd = exec.Command(filepath.Join(E.Root, "hack", "release.sh"), "build")
	cmd.Dir = E.Root
	cmd.Env = append(os.Environ(), "DIST_DIR="+again, "VERSION="+r.Version, "PLATFORMS="+host.String(), fmt.Sprintf("SOURCE_DATE_EPOCH=%d", epoch))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hack/release.sh build: %v\n%s", err, out)
	}
	bin := filepath.Join("build", host.OS+"_"+host.Arch, "kubectl-drift"+host.exe())
	if a, b := sha256File(t, filepath.Join(r.Dir, bin)), sha256File(t, filepath.Join(again, bin)); a != b {
		t.Errorf("%s binary differs between two builds of the same commit: %s vs %s", host, a, b)
	}
}

// serveDist serves the release directory on loopback and returns a copy of
// a rendered manifest whose download URLs point at it. TLS for Flux, whose
// catalog schema requires https URLs; then certFile is the server's
// certificate (SSL_CERT_FILE for the flux process).
func serveDist(t *testing.T, r *release, useTLS bool, manifest, outName string) (manifestPath, certFile string) {
	t.Helper()
	var srv *httptest.Server
	if useTLS {
		srv = httptest.NewTLSServer(http.FileServer(http.Dir(r.Dir)))
	} else {
		srv = httptest.NewServer(http.FileServer(http.Dir(r.Dir)))
	}
	t.Cleanup(srv.Close)
	if !strings.HasPrefix(srv.URL, "http://127.0.0.1:") && !strings.HasPrefix(srv.URL, "https://127.0.0.1:") {
		t.Fatalf("test server is not on 127.0.0.1: %s", srv.URL)
	}
	b, err := os.ReadFile(filepath.Join(r.Dir, manifest))
	if err != nil {
		t.Fatal(err)
	}
	old := defaultBaseURL(r.Version) + "/"
	if n := strings.Count(string(b), old); n != len(r.Platforms) {
		t.Fatalf("%s has %d URLs under %s, want %d", manifest, n, old, len(r.Platforms))
	}
	dir := t.TempDir()
	manifestPath = filepath.Join(dir, outName)
	if err := os.WriteFile(manifestPath, []byte(strings.ReplaceAll(string(b), old, srv.URL+"/")), 0o644); err != nil {
		t.Fatal(err)
	}
	if useTLS {
		certFile = filepath.Join(dir, "ca.pem")
		pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
		if err := os.WriteFile(certFile, pemBytes, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return manifestPath, certFile
}

// tool builds the tools names (buildTools) and returns their paths; the
// test fails when one does not build.
func tool(t *testing.T, names ...string) []string {
	t.Helper()
	paths, err := buildTools(names...)
	if err != nil {
		t.Fatal(err)
	}
	return paths
}

// pathWithout is the process PATH with every directory that holds a
// kubectl-drift, argocd-drift or flux-drift removed (the harness puts its
// own build first): only the installed copies may be found.
func pathWithout(t *testing.T) string {
	var keep []string
	for _, d := range filepath.SplitList(E.ClusterEnv["PATH"]) {
		if d == E.BinDir || d == "" {
			continue
		}
		hasDoor := false
		for _, n := range []string{KubectlDrift, ArgoCDDrift, FluxDrift} {
			if _, err := os.Stat(filepath.Join(d, n)); err == nil {
				hasDoor = true
			}
		}
		if !hasDoor {
			keep = append(keep, d)
		}
	}
	return strings.Join(keep, string(os.PathListSeparator))
}

// krewEnv is the environment of a krew run: our kubectl, kubectl-krew and
// the krew bin dir on PATH, a private KREW_ROOT and HOME.
func krewEnv(t *testing.T, krewRoot string) (env []string, krew string) {
	krew = tool(t, "krew")[0]
	path := strings.Join([]string{filepath.Join(krewRoot, "bin"), filepath.Dir(krew), E.KubeBinDir, pathWithout(t)}, string(os.PathListSeparator))
	return []string{"PATH=" + path, "KREW_ROOT=" + krewRoot, "HOME=" + t.TempDir(), "KREW_NO_UPGRADE_CHECK=1"}, krew
}

func mustRun(t *testing.T, opts RunOpts, bin string, args ...string) Result {
	t.Helper()
	res := E.Run(t, opts, bin, args...)
	if res.Code != 0 {
		t.Fatalf("%s %s: exit %d\nstdout: %s\nstderr: %s", bin, strings.Join(args, " "), res.Code, res.Stdout, res.Stderr)
	}
	return res
}

func testKrewValidate(t *testing.T, r *release) {
	validate := tool(t, "validate-krew-manifest")[0]
	manifest, _ := serveDist(t, r, false, "krew/drift.yaml", "drift.yaml")
	env, _ := krewEnv(t, t.TempDir())
	// Without -skip-install: `kubectl krew install --manifest` for every
	// platform (KREW_OS/KREW_ARCH), downloading the archive from the
	// loopback server and checking its sha256, then a LICENSE check.
	res := mustRun(t, RunOpts{Env: env, Timeout: 10 * time.Minute}, validate, "-manifest", manifest)
	out := res.Stdout + res.Stderr
	for _, want := range []string{"structural validation OK", fmt.Sprintf("all %d spec.platforms installed fine", len(r.Platforms))} {
		if !strings.Contains(out, want) {
			t.Errorf("validate-krew-manifest output lacks %q:\n%s", want, out)
		}
	}

	// The validation can fail: a manifest whose sha256 does not match the
	// served archive is rejected.
	b, _ := os.ReadFile(manifest)
	bad := regexp.MustCompile(`sha256: [a-f0-9]{64}`).ReplaceAllString(string(b), "sha256: "+strings.Repeat("0", 64))
	badPath := filepath.Join(t.TempDir(), "drift.yaml")
	if err := os.WriteFile(badPath, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	if res := E.Run(t, RunOpts{Env: env, Timeout: 5 * time.Minute}, validate, "-manifest", badPath); res.Code == 0 {
		t.Errorf("validate-krew-manifest accepted wrong checksums:\n%s%s", res.Stdout, res.Stderr)
	}
}

// checkKubectlDoor runs the krew-installed plugin through kubectl's plugin
// discovery: version, help, completion and explain on a real object.
func checkKubectlDoor(t *testing.T, r *release, env []string, krewRoot string) {
	t.Helper()
	kubectl := filepath.Join(E.KubeBinDir, "kubectl")
	// Not mustRun: plugin list exits 1 on warnings about unrelated
	// plugins elsewhere on the machine's PATH.
	list := E.Run(t, RunOpts{Env: env}, kubectl, "plugin", "list", "--name-only")
	if !strings.Contains(list.Stdout, "kubectl-drift") {
		t.Errorf("kubectl plugin list does not show kubectl-drift:\n%s%s", list.Stdout, list.Stderr)
	}
	link := filepath.Join(krewRoot, "bin", "kubectl-drift")
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("%s is not krew's symlink: %v %v", link, fi, err)
	}

	ver := mustRun(t, RunOpts{Env: env}, kubectl, "drift", "version")
	if !strings.HasPrefix(ver.Stdout, "kubectl drift "+r.Version+" (commit ") {
		t.Errorf("kubectl drift version = %q, want the stamped release %s", ver.Stdout, r.Version)
	}
	help := mustRun(t, RunOpts{Env: env}, kubectl, "drift", "--help")
	if !strings.Contains(help.Stdout, "Usage:\n  kubectl drift [command]") {
		t.Errorf("kubectl drift --help does not say `kubectl drift`:\n%s", help.Stdout)
	}

	// kubectl completes plugin arguments through kubectl_complete-drift on
	// PATH (the krew caveat tells users to link it into KREW_ROOT/bin).
	shim := filepath.Join(krewRoot, "store", "drift", r.Version, "kubectl_complete-drift")
	if err := os.Symlink(shim, filepath.Join(krewRoot, "bin", "kubectl_complete-drift")); err != nil {
		t.Fatal(err)
	}
	comp := mustRun(t, RunOpts{Env: env}, kubectl, "__complete", "drift", "--engine", "")
	if got := completions(comp.Stdout); !slices.Equal(got, []string{"auto", "argocd", "flux"}) {
		t.Errorf("kubectl __complete drift --engine '' = %v, want [auto argocd flux]\n%s%s", got, comp.Stdout, comp.Stderr)
	}
	comp = mustRun(t, RunOpts{Env: env}, kubectl, "__complete", "drift", "")
	if got := completions(comp.Stdout); !slices.Contains(got, "version") {
		t.Errorf("kubectl __complete drift '' = %v, want the subcommands (version...)\n%s", got, comp.Stdout)
	}

	// explain, on a real object changed by a real kubectl operation.
	if !strings.Contains(help.Stdout, "\n  explain ") {
		t.Logf("this build has no explain command yet; only version/help/completion checked")
		return
	}
	// A real drift: the desired ConfigMap says a=b, `kubectl patch` made
	// it a=changed. Exit 1 (drift), the field and its manager reported.
	ns := E.Namespace(t, "e2e")
	E.Kubectl(t, "-n", ns, "create", "configmap", "install-probe", "--from-literal=a=b")
	E.Kubectl(t, "-n", ns, "patch", "configmap", "install-probe", "-p", `{"data":{"a":"changed"}}`)
	desired := filepath.Join(t.TempDir(), "desired.yaml")
	manifest := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: install-probe\n  namespace: " + ns + "\ndata:\n  a: b\n"
	if err := os.WriteFile(desired, []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	res := E.Run(t, RunOpts{Env: env}, kubectl, "drift", "explain", "configmap/install-probe", "-n", ns, "-f", desired)
	if res.Code != 1 {
		t.Errorf("kubectl drift explain: exit %d, want 1 (drift)\nstdout: %s\nstderr: %s", res.Code, res.Stdout, res.Stderr)
	}
	for _, want := range []string{"install-probe", ".data.a", "kubectl-patch"} {
		if !strings.Contains(res.Stdout, want) {
			t.Errorf("kubectl drift explain output lacks %q:\n%s", want, res.Stdout)
		}
	}
}

// completions drops cobra's trailing ":<directive>" line and descriptions.
func completions(out string) []string {
	var c []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l == "" || strings.HasPrefix(l, ":") || strings.HasPrefix(l, "Completion ended") {
			continue
		}
		name, _, _ := strings.Cut(l, "\t")
		c = append(c, name)
	}
	return c
}

func testKrewInstallArchive(t *testing.T, r *release) {
	krewRoot := t.TempDir()
	env, krew := krewEnv(t, krewRoot)
	archive := filepath.Join(r.Dir, r.Archives[platform{runtime.GOOS, runtime.GOARCH}])
	mustRun(t, RunOpts{Env: env}, krew, "install", "--manifest", filepath.Join(r.Dir, "krew", "drift.yaml"), "--archive", archive)
	checkKubectlDoor(t, r, env, krewRoot)
}

// testKrewIndex is the user's real flow, `kubectl krew install drift`, from
// a local git index holding plugins/drift.yaml.
func testKrewIndex(t *testing.T, r *release) {
	manifest, _ := serveDist(t, r, false, "krew/drift.yaml", "drift.yaml")
	index := t.TempDir()
	if err := os.MkdirAll(filepath.Join(index, "plugins"), 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(index, "plugins", "drift.yaml"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"init", "-q", "-b", "master"},
		{"add", "plugins/drift.yaml"},
		{"-c", "user.name=e2e", "-c", "user.email=e2e@example.invalid", "commit", "-q", "-m", "drift"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = index
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	krewRoot := t.TempDir()
	env, krew := krewEnv(t, krewRoot)
	env = append(env, "KREW_DEFAULT_INDEX_URI=file://"+index)
	mustRun(t, RunOpts{Env: env}, krew, "update")
	search := mustRun(t, RunOpts{Env: env}, krew, "search", "drift")
	if !strings.Contains(search.Stdout, "drift") {
		t.Errorf("kubectl krew search drift:\n%s", search.Stdout)
	}
	mustRun(t, RunOpts{Env: env}, krew, "install", "drift")
	checkKubectlDoor(t, r, env, krewRoot)
}

func testFluxPlugin(t *testing.T, r *release) {
	flux := tool(t, "flux")[0]
	manifest, cert := serveDist(t, r, true, "flux/drift.yaml", "drift.yaml")
	// The catalog base URL: `flux plugin install drift` fetches
	// <base>drift.yaml (fluxcd/flux2 internal/plugin/catalog.go). Serve
	// the rewritten manifest from its own loopback TLS server.
	catalog := httptest.NewTLSServer(http.FileServer(http.Dir(filepath.Dir(manifest))))
	t.Cleanup(catalog.Close)
	catCert := filepath.Join(t.TempDir(), "catalog.pem")
	pemBytes := append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: catalog.Certificate().Raw}), mustRead(t, cert)...)
	if err := os.WriteFile(catCert, pemBytes, 0o644); err != nil {
		t.Fatal(err)
	}
	plugins := t.TempDir()
	env := []string{
		"PATH=" + pathWithout(t), "HOME=" + t.TempDir(),
		"FLUXCD_PLUGINS=" + plugins, "FLUXCD_PLUGIN_CATALOG=" + catalog.URL + "/", "SSL_CERT_FILE=" + catCert,
	}
	p := platform{runtime.GOOS, runtime.GOARCH}
	sum := sha256File(t, filepath.Join(r.Dir, r.Archives[p]))
	// Pinned by digest: flux resolves the version whose checksum for this
	// platform equals the digest, then checks the download against it.
	inst := mustRun(t, RunOpts{Env: env, Timeout: 5 * time.Minute}, flux, "plugin", "install", "drift@sha256:"+sum)
	t.Logf("flux plugin install: %s%s", inst.Stdout, inst.Stderr)
	if _, err := os.Stat(filepath.Join(plugins, "flux-drift")); err != nil {
		t.Fatalf("flux plugin install left no flux-drift: %v", err)
	}
	list := mustRun(t, RunOpts{Env: env}, flux, "plugin", "list")
	if !strings.Contains(list.Stdout, "drift") || !strings.Contains(list.Stdout, strings.TrimPrefix(r.Version, "v")) {
		t.Errorf("flux plugin list does not show drift %s:\n%s", r.Version, list.Stdout)
	}

	ver := mustRun(t, RunOpts{Env: env}, flux, "drift", "version")
	if !strings.HasPrefix(ver.Stdout, "flux drift "+r.Version+" (commit ") {
		t.Errorf("flux drift version = %q, want the stamped release %s", ver.Stdout, r.Version)
	}
	help := mustRun(t, RunOpts{Env: env}, flux, "drift", "--help")
	if !strings.Contains(help.Stdout, "Usage:\n  flux drift [command]") || !strings.Contains(help.Stdout, `(default "flux")`) {
		t.Errorf("flux drift --help does not say `flux drift` with --engine default flux:\n%s", help.Stdout)
	}
	// Flux forwards no global flags: the plugin parses its own.
	kc := mustRun(t, RunOpts{Env: env}, flux, "drift", "version", "--context", "nope", "-n", "x", "--kubeconfig", "/nonexistent")
	if !strings.HasPrefix(kc.Stdout, "flux drift ") {
		t.Errorf("flux drift version with kube flags = %q", kc.Stdout)
	}
	// flux completes plugin arguments by running `flux-drift __complete`.
	comp := mustRun(t, RunOpts{Env: env}, flux, "__complete", "drift", "--engine", "")
	if got := completions(comp.Stdout); !slices.Equal(got, []string{"auto", "argocd", "flux"}) {
		t.Errorf("flux __complete drift --engine '' = %v\n%s%s", got, comp.Stdout, comp.Stderr)
	}
	comp = mustRun(t, RunOpts{Env: env}, flux, "__complete", "drift", "")
	if got := completions(comp.Stdout); !slices.Contains(got, "version") {
		t.Errorf("flux __complete drift '' = %v, want the subcommands\n%s", got, comp.Stdout)
	}
	// A flag error inside the plugin: exit 2 and the door's name.
	bad := E.Run(t, RunOpts{Env: env}, filepath.Join(plugins, "flux-drift"), "version", "--no-such-flag")
	AssertCleanError(t, bad, "unknown flag")
	if !strings.Contains(bad.Stderr, "See 'flux drift version --help'") {
		t.Errorf("flag error does not name the flux door:\n%s", bad.Stderr)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// extractDoor unpacks one file of this platform's archive into dir, as a
// user installing by hand would.
func extractDoor(t *testing.T, r *release, name, dir string) string {
	t.Helper()
	p := platform{runtime.GOOS, runtime.GOARCH}
	for _, e := range readArchive(t, filepath.Join(r.Dir, r.Archives[p])) {
		if e.Name == name {
			path := filepath.Join(dir, name)
			if err := os.WriteFile(path, e.Data, 0o755); err != nil {
				t.Fatal(err)
			}
			return path
		}
	}
	t.Fatalf("%s not in %s", name, r.Archives[p])
	return ""
}

func testArgoCDPlugin(t *testing.T, r *release) {
	dir := t.TempDir()
	door := extractDoor(t, r, ArgoCDDrift, dir)
	env := []string{"PATH=" + dir + string(os.PathListSeparator) + pathWithout(t), "HOME=" + t.TempDir()}

	var argocd string
	if os.Getenv("DRIFT_E2E_NO_ARGOCD") == "" {
		switch bins, err := buildTools("argocd"); {
		case err == nil:
			argocd = bins[0]
		case os.Getenv("CI") != "":
			// The fallback proves less than the real CLI: it never makes
			// CI green (issue 30).
			t.Fatalf("the argocd CLI did not build (%v, its log above): CI runs the real argocd", err)
		default:
			t.Logf("the argocd CLI did not build (%v, its log above); falling back to Argo CD's exec rule", err)
		}
	}
	run := func(args ...string) Result {
		t.Helper()
		if argocd != "" {
			return E.Run(t, RunOpts{Env: env}, argocd, append([]string{"drift"}, args...)...)
		}
		// Argo CD >= 3.1 (cmd/argocd/commands/plugin.go): on "unknown
		// command" it looks up argocd-<name> with exec.LookPath and runs it
		// with argv[0] = that path and the remaining arguments, unparsed.
		path, err := exec.LookPath(ArgoCDDrift) // with the test's PATH below
		if err != nil {
			t.Fatalf("LookPath: %v", err)
		}
		if path != door {
			t.Fatalf("PATH lookup found %s, want the installed %s", path, door)
		}
		return E.Run(t, RunOpts{Env: env}, path, args...)
	}
	if argocd == "" {
		t.Setenv("PATH", dir+string(os.PathListSeparator)+pathWithout(t))
		t.Log("door verified through Argo CD's exec rule (argv[0] + PATH), not the argocd CLI")
	} else {
		t.Logf("door verified through the real argocd CLI %s", argocd)
	}

	ver := run("version")
	if ver.Code != 0 || !strings.HasPrefix(ver.Stdout, "argocd drift "+r.Version+" (commit ") {
		t.Errorf("argocd drift version: exit %d, stdout %q, stderr %q; want the stamped release %s", ver.Code, ver.Stdout, ver.Stderr, r.Version)
	}
	help := run("--help")
	if help.Code != 0 || !strings.Contains(help.Stdout, "Usage:\n  argocd drift [command]") || !strings.Contains(help.Stdout, `(default "argocd")`) {
		t.Errorf("argocd drift --help (exit %d) does not say `argocd drift` with --engine default argocd:\n%s%s", help.Code, help.Stdout, help.Stderr)
	}
	// Argo CD forwards no global flags: the plugin parses its own.
	kc := run("version", "--context", "nope", "-n", "x", "--kubeconfig", "/nonexistent")
	if kc.Code != 0 || !strings.HasPrefix(kc.Stdout, "argocd drift ") {
		t.Errorf("argocd drift version with kube flags: exit %d, %q %q", kc.Code, kc.Stdout, kc.Stderr)
	}
	comp := E.Run(t, RunOpts{Env: env}, door, "__complete", "--engine", "")
	if got := completions(comp.Stdout); !slices.Equal(got, []string{"auto", "argocd", "flux"}) {
		t.Errorf("argocd-drift __complete --engine '' = %v\n%s", got, comp.Stdout)
	}
}
