package analyzer

import (
	"errors"
	"fmt"
	"io"
	"net/netip"
	"time"
)

// Config adjusts rules (disable them, override their severity, set their
// parameters) and leaves out the findings that its Ignore entries select.
// The zero Config (or a nil *Config) runs every rule as documented and
// suppresses nothing.
//
// In YAML (netmortem analyze --config FILE, or .netmortem.yaml next to
// the bundle; docs/config.md lists every key):
//
//	rules:
//	  connection-skew:
//	    disabled: true
//	  synack-reset:
//	    severity: warning
//	  timewait-churn:
//	    params:
//	      min_timewait: 500
//	ignore:
//	  - rule: ephemeral-nodeport-overlap
//	    node: node1
//	    reason: the NodePort range moves in the next maintenance window
//	    expires: 2026-12-31
type Config struct {
	Rules map[string]RuleConfig `yaml:"rules" json:"rules"`
	// Ignore lists the findings to leave out of a report (Suppress).
	Ignore []Ignore `yaml:"ignore" json:"ignore"`
}

// RuleConfig is the configuration of one rule.
type RuleConfig struct {
	Disabled bool               `yaml:"disabled" json:"disabled"`
	Severity Severity           `yaml:"severity" json:"severity"`
	Params   map[string]float64 `yaml:"params" json:"params"`
}

// Ignore is one suppression: the findings that every one of its set
// selectors matches are suppressed, until it expires. At least one
// selector must be set.
type Ignore struct {
	// Fingerprint selects the finding with this Fingerprint (LoadConfig
	// writes it in lower case).
	Fingerprint string `yaml:"fingerprint,omitempty" json:"fingerprint,omitempty"`
	// Rule selects the findings of this rule.
	Rule string `yaml:"rule,omitempty" json:"rule,omitempty"`
	// Node selects the findings whose Subject's node is this one.
	Node string `yaml:"node,omitempty" json:"node,omitempty"`
	// Namespace selects the findings whose Subject's namespace, or the
	// namespace of its object, is this one.
	Namespace string `yaml:"namespace,omitempty" json:"namespace,omitempty"`
	// Object selects the findings whose Subject's object is this one:
	// "Kind namespace/name" (the kind compared without regard to case),
	// or "namespace/name" for an object of any kind.
	Object string `yaml:"object,omitempty" json:"object,omitempty"`
	// Address selects the findings with an address, client, backend,
	// vip, source or destination in their Subject that it matches: an IP matches the IP and
	// every IP:port of it, an IP:port that address only, a CIDR prefix
	// every address in it.
	Address string `yaml:"address,omitempty" json:"address,omitempty"`
	// Reason says why the findings are suppressed; required.
	Reason string `yaml:"reason" json:"reason"`
	// Expires is the last day (UTC) the entry applies; the zero time
	// means never. From the day after, the entry suppresses nothing and
	// Suppress warns about it.
	Expires time.Time `yaml:"expires,omitempty" json:"expires,omitzero"`
	// Pos is where the entry was read, "file:line"; empty for an entry
	// built by hand.
	Pos string `yaml:"-" json:"-"`
	// File and Line are Pos's parts.
	File string `yaml:"-" json:"-"`
	Line int    `yaml:"-" json:"-"`
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

// Enable marks the named rules not disabled.
func (c *Config) Enable(names ...string) {
	for _, n := range names {
		if rc, ok := c.Rules[n]; ok {
			rc.Disabled = false
			c.Rules[n] = rc
		}
	}
}

// LoadConfig reads a YAML configuration, strictly: every error in it is
// reported as "name:line: what was expected" (all of them, joined), for
// an unknown key, a rule not in rules, a parameter the rule does not
// declare, a value of the wrong type, a bad severity, a bad date, an
// ignore entry without a selector or without a reason, and a selector of
// an entry for one rule that the rule's SubjectKeys cannot match. An
// empty input is the zero Config.
func LoadConfig(r io.Reader, name string, rules []*Rule) (*Config, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	l := &configLoader{file: name, rules: rules}
	c := l.load(b)
	if len(l.errs) > 0 {
		return nil, errors.Join(l.errs...)
	}
	return c, nil
}

// matchAddress reports whether the selector sel (IP, IP:port or CIDR,
// already checked) matches the subject value v.
func matchAddress(sel, v string) bool {
	if sel == v {
		return true
	}
	ip, ok := parseIPOrAddrPort(v)
	if !ok {
		return false
	}
	if p, err := netip.ParsePrefix(sel); err == nil {
		return p.Contains(ip)
	}
	if a, err := netip.ParseAddr(sel); err == nil {
		return a.Unmap() == ip
	}
	if ap, err := netip.ParseAddrPort(sel); err == nil {
		vp, err := netip.ParseAddrPort(v)
		return err == nil && ap.Addr().Unmap() == vp.Addr().Unmap() && ap.Port() == vp.Port()
	}
	return false
}

// parseIPOrAddrPort returns the IP of an "IP" or "IP:port" string.
func parseIPOrAddrPort(s string) (netip.Addr, bool) {
	if a, err := netip.ParseAddr(s); err == nil {
		return a.Unmap(), true
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap(), true
	}
	return netip.Addr{}, false
}
