package audit

import (
	"bytes"
	"errors"
	"fmt"
	"path"
	"regexp"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"github.com/kubectl-drift/kubectl-drift/internal/audit/auditapi"
	"github.com/kubectl-drift/kubectl-drift/internal/source"

	"github.com/kubectl-drift/kubectl-drift/internal/jq"
)

// DefaultConfigFile is looked up at the audit root when --config is not given.
const DefaultConfigFile = ".drift-audit.yaml"

// Config is the .drift-audit.yaml file.
type Config struct {
	// Checks switches checks on or off and changes their severity, keyed by
	// ID (DRIFT001) or name (too-broad).
	Checks map[string]CheckConfig `json:"checks,omitempty" yaml:"checks"`
	Budget Budget                 `json:"budget,omitempty" yaml:"budget"`
	// Justification configures DRIFT010.
	Justification Justification `json:"justification,omitempty" yaml:"justification"`
	Policy        Policy        `json:"policy,omitempty" yaml:"policy"`
	JQ            JQConfig      `json:"jq,omitempty" yaml:"jq"`
	// Allow suppresses findings; every entry must carry a reason.
	Allow []AllowEntry `json:"allow,omitempty" yaml:"allow"`

	// file is where the config was read from ("" for defaults).
	file string
}

// CheckConfig changes one check.
type CheckConfig struct {
	// Enabled defaults to true.
	Enabled  *bool  `json:"enabled,omitempty" yaml:"enabled"`
	Severity string `json:"severity,omitempty" yaml:"severity"`
}

// Budget caps the number of ignore rules. Zero means no cap.
type Budget struct {
	Total  int `json:"total,omitempty" yaml:"total"`
	PerApp int `json:"perApp,omitempty" yaml:"perApp"`
}

// Justification configures the "comment directly above each rule" check.
type Justification struct {
	// Required defaults to true.
	Required *bool `json:"required,omitempty" yaml:"required"`
	// Pattern, when set, is a regular expression the comment text (without
	// the leading '#') must match, e.g. "^(why|reason|ticket):".
	Pattern string `json:"pattern,omitempty" yaml:"pattern"`
}

// Policy holds repository policies that checks enforce.
type Policy struct {
	// RequireSelfHeal makes an Argo CD Application without
	// syncPolicy.automated.selfHeal a DRIFT008 finding, and enables
	// DRIFT008 (opt-in) unless checks switches it off.
	RequireSelfHeal bool `json:"requireSelfHeal,omitempty" yaml:"requireSelfHeal"`
}

// JQConfig tunes the slow-jq check.
type JQConfig struct {
	// Timeout is the limit each jq evaluation gets; default Argo's 1s.
	Timeout Duration `json:"timeout,omitempty" yaml:"timeout"`
	// SlowAfter is the measured time at which a jq rule is reported although
	// it finished; default half the timeout.
	SlowAfter Duration `json:"slowAfter,omitempty" yaml:"slowAfter"`
}

// Duration is a time.Duration written as "1s" in YAML.
type Duration struct{ time.Duration }

// UnmarshalYAML reads "500ms", "1s"...
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	d.Duration = v
	return nil
}

// AllowEntry suppresses the findings it matches. Empty fields match all.
type AllowEntry struct {
	// Check is an ID or name.
	Check string `json:"check,omitempty" yaml:"check"`
	// File is a path relative to the root, or a path.Match pattern.
	File string `json:"file,omitempty" yaml:"file"`
	Line int    `json:"line,omitempty" yaml:"line"`
	// Object is "Kind ns/name" as findings print it.
	Object string `json:"object,omitempty" yaml:"object"`
	Reason string `json:"reason,omitempty" yaml:"reason"`

	line, column int
}

// LoadConfig reads a config file. Unknown keys are an error: a misspelt
// "alow:" must not silently allow nothing.
func LoadConfig(file string) (*Config, error) {
	data, err := source.ReadFile(file, nil, 0)
	if err != nil {
		return nil, err
	}
	c, err := ParseConfig(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	c.file = file
	return c, nil
}

// ParseConfig parses .drift-audit.yaml content.
func ParseConfig(data []byte) (*Config, error) {
	c := &Config{}
	if len(bytes.TrimSpace(data)) == 0 {
		return c, c.validate()
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil {
		return nil, err
	}
	// Positions of allow entries, so that an entry without a reason is a
	// finding at its own line.
	if len(root.Content) == 1 && root.Content[0].Kind == yaml.MappingNode {
		m := root.Content[0]
		for i := 0; i+1 < len(m.Content); i += 2 {
			if m.Content[i].Value == "allow" && m.Content[i+1].Kind == yaml.SequenceNode {
				for j, item := range m.Content[i+1].Content {
					if j < len(c.Allow) {
						c.Allow[j].line, c.Allow[j].column = item.Line, item.Column
					}
				}
			}
		}
	}
	return c, c.validate()
}

func (c *Config) validate() error {
	var errs []error
	for k, v := range c.Checks {
		if _, ok := lookupCheck(k); !ok {
			errs = append(errs, fmt.Errorf("checks: unknown check %q", k))
		}
		if v.Severity != "" {
			if _, err := ParseSeverity(v.Severity); err != nil {
				errs = append(errs, fmt.Errorf("checks.%s: %w", k, err))
			}
		}
	}
	if c.Budget.Total < 0 || c.Budget.PerApp < 0 {
		errs = append(errs, errors.New("budget: values must not be negative"))
	}
	if c.Justification.Pattern != "" {
		if _, err := regexp.Compile(c.Justification.Pattern); err != nil {
			errs = append(errs, fmt.Errorf("justification.pattern: %w", err))
		}
	}
	for i, a := range c.Allow {
		if a.Check != "" {
			if _, ok := lookupCheck(a.Check); !ok {
				errs = append(errs, fmt.Errorf("allow[%d]: unknown check %q", i, a.Check))
			}
		}
		if a.File != "" {
			if _, err := path.Match(a.File, ""); err != nil {
				errs = append(errs, fmt.Errorf("allow[%d].file: %w", i, err))
			}
		}
	}
	if c.JQ.Timeout.Duration < 0 || c.JQ.SlowAfter.Duration < 0 {
		errs = append(errs, errors.New("jq: durations must not be negative"))
	}
	return errors.Join(errs...)
}

// enabled reports whether a check runs.
func (c *Config) enabled(id CheckID) bool {
	if id == auditapi.CheckNoJustification && c.Justification.Required != nil && !*c.Justification.Required {
		return false
	}
	if cc, ok := c.checkConfig(id); ok && cc.Enabled != nil {
		return *cc.Enabled
	}
	if chk, _ := lookupCheck(string(id)); chk.OptIn {
		// Requiring self-heal is asking for what the check reports.
		return id == auditapi.CheckDriftDetectionOff && c.Policy.RequireSelfHeal
	}
	return true
}

// severity returns the configured severity of a check, or its default.
func (c *Config) severity(id CheckID, def Severity) Severity {
	if cc, ok := c.checkConfig(id); ok && cc.Severity != "" {
		if s, err := ParseSeverity(cc.Severity); err == nil {
			return s
		}
	}
	return def
}

func (c *Config) checkConfig(id CheckID) (CheckConfig, bool) {
	chk, _ := lookupCheck(string(id))
	if cc, ok := c.Checks[string(id)]; ok {
		return cc, true
	}
	cc, ok := c.Checks[chk.Name]
	return cc, ok
}

func (c *Config) jqTimeout() time.Duration {
	if c.JQ.Timeout.Duration > 0 {
		return c.JQ.Timeout.Duration
	}
	return jq.DefaultTimeout
}

func (c *Config) jqSlowAfter() time.Duration {
	if c.JQ.SlowAfter.Duration > 0 {
		return c.JQ.SlowAfter.Duration
	}
	return c.jqTimeout() / 2
}

// allowed returns the allow entry with a reason that matches f, if any.
func (c *Config) allowed(f Finding) (AllowEntry, bool) {
	for _, a := range c.Allow {
		if a.Reason == "" {
			continue
		}
		if a.Check != "" {
			chk, _ := lookupCheck(a.Check)
			if chk.ID != f.Check {
				continue
			}
		}
		if a.File != "" && a.File != f.File {
			if ok, _ := path.Match(a.File, f.File); !ok {
				continue
			}
		}
		if a.Line != 0 && a.Line != f.Line {
			continue
		}
		if a.Object != "" && a.Object != f.Object {
			continue
		}
		return a, true
	}
	return AllowEntry{}, false
}
