package differential

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"
)

// Minimize drops settings, then changes, one at a time, keeping each drop
// while fails still holds (greedy one-minimal, as delta debugging ends).
// fails must be true of s itself; Minimize returns the kept indexes too,
// which is what Save records.
func Minimize(s Scenario, fails func(Scenario) bool) (min Scenario, settings, changes []int) {
	settings = seq(len(s.Settings))
	changes = seq(len(s.Changes))
	for i := 0; i < len(settings); {
		try := without(settings, i)
		if fails(s.Keep(try, changes)) {
			settings = try
			continue
		}
		i++
	}
	for i := 0; i < len(changes); {
		try := without(changes, i)
		// A scenario without any change still judges the Git apply (noise).
		if fails(s.Keep(settings, try)) {
			changes = try
			continue
		}
		i++
	}
	return s.Keep(settings, changes), settings, changes
}

func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

func without(xs []int, i int) []int {
	out := append([]int(nil), xs[:i]...)
	return append(out, xs[i+1:]...)
}

// Case is a saved regression case: the seed and what minimization kept.
// The scenario is redrawn from the seed, so a case file stays a few lines.
type Case struct {
	Engine   string `json:"engine"`
	Seed     uint64 `json:"seed"`
	Settings []int  `json:"settings"`
	Changes  []int  `json:"changes"`
	// Issue is the issue whose defect the case shows (it fails until that
	// is fixed).
	Issue int `json:"issue,omitempty"`
	// Found is what the differential run reported for it.
	Found []string `json:"found"`
	// Scenario is the scenario in words (informative; the seed rules).
	Scenario string `json:"scenario"`
}

// Draw redraws the case's scenario (DrawArgo for engine argocd, DrawHelm
// for flux-helm).
func (c Case) Draw() (Scenario, error) {
	s := Draw(c.Seed)
	switch c.Engine {
	case "argocd":
		s = DrawArgo(c.Seed)
	case "flux-helm":
		s = DrawHelm(c.Seed)
	}
	for _, i := range c.Settings {
		if i < 0 || i >= len(s.Settings) {
			return Scenario{}, fmt.Errorf("case seed %d: setting %d out of range (the generator changed?)", c.Seed, i)
		}
	}
	for _, i := range c.Changes {
		if i < 0 || i >= len(s.Changes) {
			return Scenario{}, fmt.Errorf("case seed %d: change %d out of range (the generator changed?)", c.Seed, i)
		}
	}
	return s.Keep(c.Settings, c.Changes), nil
}

// Save writes c as dir/<engine>-seed-<seed>.yaml and returns the path.
func Save(dir string, c Case) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("saving case: %w", err)
	}
	b, err := yaml.Marshal(c)
	if err != nil {
		return "", fmt.Errorf("saving case seed %d: %w", c.Seed, err)
	}
	p := filepath.Join(dir, c.Engine+"-seed-"+strconv.FormatUint(c.Seed, 10)+".yaml")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		return "", fmt.Errorf("saving case: %w", err)
	}
	return p, nil
}

// LoadCases reads every saved case of engine in dir.
func LoadCases(dir, engine string) ([]Case, error) {
	paths, err := filepath.Glob(filepath.Join(dir, engine+"-seed-*.yaml"))
	if err != nil {
		return nil, err
	}
	var out []Case
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("reading case: %w", err)
		}
		var c Case
		if err := yaml.UnmarshalStrict(b, &c); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		if want := engine + "-seed-" + strconv.FormatUint(c.Seed, 10) + ".yaml"; filepath.Base(p) != want || c.Engine != engine {
			return nil, fmt.Errorf("%s: holds engine %q seed %d (want file %s)", p, c.Engine, c.Seed, want)
		}
		if strings.TrimSpace(c.Scenario) == "" {
			return nil, fmt.Errorf("%s: no scenario line", p)
		}
		out = append(out, c)
	}
	return out, nil
}
