package source

import (
	"path/filepath"
	"strings"

	"sigs.k8s.io/kustomize/api/konfig"
	kustypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// RemoteRef is one kustomization entry that kustomize would fetch from
// the network.
type RemoteRef struct {
	// File is the kustomization file that names it; URL the entry.
	File, URL string
}

// RemoteRefs walks the kustomizations reachable from dir (resources,
// components, the legacy bases) and lists the remote ones, so that a
// build can refuse them (--no-remote-bases) or say that it fetches them
// before it does. kfile is dir's kustomization file when the caller
// holds it elsewhere than on disk ("" finds it). Missing or unreadable
// entries are left to the build, which reports them.
func RemoteRefs(fs filesys.FileSystem, dir, kfile string) []RemoteRef {
	var out []RemoteRef
	remoteRefs(fs, dir, kfile, map[string]bool{}, &out)
	return out
}

func remoteRefs(fs filesys.FileSystem, dir, kfile string, seen map[string]bool, out *[]RemoteRef) {
	if seen[dir] {
		return
	}
	seen[dir] = true
	if kfile == "" {
		for _, name := range konfig.RecognizedKustomizationFileNames() {
			if p := filepath.Join(dir, name); fs.Exists(p) && !fs.IsDir(p) {
				kfile = p
				break
			}
		}
		if kfile == "" {
			return
		}
	}
	data, err := fs.ReadFile(kfile)
	if err != nil {
		return
	}
	var k kustypes.Kustomization
	if err := yaml.Unmarshal(data, &k); err != nil {
		return
	}
	entries := append(append(append([]string{}, k.Resources...), k.Components...), k.Bases...) //nolint:staticcheck // Bases still builds, so it still fetches.
	for _, r := range entries {
		if IsRemoteRef(r) {
			*out = append(*out, RemoteRef{File: kfile, URL: r})
			continue
		}
		if p := filepath.Join(dir, r); fs.IsDir(p) {
			remoteRefs(fs, p, "", seen, out)
		}
	}
}

// IsRemoteRef tells a kustomization entry kustomize would fetch: a URL,
// an scp-like git address or a host-qualified repository path
// (sigs.k8s.io/kustomize/api/internal/git repospec.go).
func IsRemoteRef(r string) bool {
	if strings.Contains(r, "://") || strings.HasPrefix(r, "git@") || strings.HasPrefix(r, "git::") {
		return true
	}
	for _, host := range []string{"github.com/", "gitlab.com/", "bitbucket.org/"} {
		if strings.HasPrefix(r, host) {
			return true
		}
	}
	return false
}

// RemoteURLs are the URLs of refs, comma-separated, for a message.
func RemoteURLs(refs []RemoteRef) string {
	urls := make([]string, len(refs))
	for i, r := range refs {
		urls[i] = r.URL
	}
	return strings.Join(urls, ", ")
}
