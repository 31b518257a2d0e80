package analyzer

import (
	"fmt"
	"io"

	"gopkg.in/yaml.v3"
)

// Config adjusts rules: disable them, override their severity, set their
// thresholds. The zero Config (or a nil *Config) runs every rule as
// documented.
//
// In YAML (netmortem analyze --config FILE):
//
//	rules:
//	  connection-skew:
//	    disabled: true
//	  synack-reset:
//	    severity: warning
//	  timewait-churn:
//	    params:
//	      min_timewait: 500
type Config struct {
	Rules map[string]RuleConfig `yaml:"rules" json:"rules"`
}

// RuleConfig is the configuration of one rule.
type RuleConfig struct {
	Disabled bool               `yaml:"disabled" json:"disabled"`
	Severity Severity           `yaml:"severity" json:"severity"`
	Params   map[string]float64 `yaml:"params" json:"params"`
}

func (c *Config) rule(name string) RuleConfig {
	if c == nil {
		return RuleConfig{}
	}
	return c.Rules[name]
}

// Disable marks the named rules disabled.
func (c *Config) Disable(names ...string) {
	if c.Rules == nil {
		c.Rules = map[string]RuleConfig{}
	}
	for _, n := range names {
		rc := c.Rules[n]
		rc.Disabled = true
		c.Rules[n] = rc
	}
}

// LoadConfig reads a YAML configuration and checks that every rule it names
// exists in rules.
func LoadConfig(r io.Reader, name string, rules []*Rule) (*Config, error) {
	var c Config
	dec := yaml.NewDecoder(r)
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil && err != io.EOF {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	known := map[string]bool{}
	for _, r := range rules {
		known[r.Name] = true
	}
	for n := range c.Rules {
		if !known[n] {
			return nil, fmt.Errorf("%s: unknown rule %q", name, n)
		}
	}
	return &c, nil
}
