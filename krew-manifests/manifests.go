package krewmanifests

// KrewPlugin mirrors the part of krew's index.Plugin (sigs.k8s.io/krew
// pkg/index/types.go, v1alpha2) that drift.yaml renders.
type KrewPlugin struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Version          string `json:"version"`
		Homepage         string `json:"homepage"`
		ShortDescription string `json:"shortDescription"`
		Description      string `json:"description"`
		Caveats          string `json:"caveats"`
		Platforms        []struct {
			Selector struct {
				MatchLabels map[string]string `json:"matchLabels"`
			} `json:"selector"`
			URI    string `json:"uri"`
			Sha256 string `json:"sha256"`
			Files  []struct {
				From string `json:"from"`
				To   string `json:"to"`
			} `json:"files"`
			Bin string `json:"bin"`
		} `json:"platforms"`
	} `json:"spec"`
}

// FluxPlugin mirrors Flux's plugin catalog manifest (fluxcd/flux2
// pkg/plugin/types.go Manifest; fluxcd/plugins
// schemas/plugin-cli-v1beta1.json, which sets additionalProperties: false,
// so readers decode it strictly) that flux-plugin-drift.yaml renders.
type FluxPlugin struct {
	APIVersion  string `json:"apiVersion"`
	Kind        string `json:"kind"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Homepage    string `json:"homepage"`
	Source      string `json:"source"`
	Bin         string `json:"bin"`
	Versions    []struct {
		Version   string `json:"version"`
		Platforms []struct {
			OS       string `json:"os"`
			Arch     string `json:"arch"`
			URL      string `json:"url"`
			Checksum string `json:"checksum"`
		} `json:"platforms"`
	} `json:"versions"`
}
