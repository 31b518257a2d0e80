package model

import "net/netip"

// Setting is one deployment setting, as a kubespray inventory's group_vars
// file sets it ("kube_vip_services_enabled: true").
type Setting struct {
	Pos  Pos    `json:"pos"`
	Tool string `json:"tool"` // the deployment tool: "kubespray"
	Key  string `json:"key"`
	// Value is the value as written, without quotes; Jinja templates
	// ("{{ kube_vip_address }}") are kept as they are.
	Value string `json:"value"`
}

// Bool reads the setting as a YAML boolean.
func (s Setting) Bool() (value, ok bool) {
	switch s.Value {
	case "true", "True", "TRUE", "yes", "Yes", "on":
		return true, true
	case "false", "False", "FALSE", "no", "No", "off":
		return false, true
	}
	return false, false
}

// Setting returns the last setting of key (later files and lines override
// earlier ones, as Ansible's do), and whether there was one.
func (s *Snapshot) Setting(key string) (Setting, bool) {
	for i := len(s.Settings) - 1; i >= 0; i-- {
		if s.Settings[i].Key == key {
			return s.Settings[i], true
		}
	}
	return Setting{}, false
}

// ProbeRun is the result of a connect loop run by hand against one
// address, such as
//
//	for x in $(seq 1 1000); do nc 10.178.64.10 53 -nvz 2>&1 | grep -v open; done | wc -l
//	257
//
// that tries a TCP connection Attempts times and counts the failures (or
// the successes), or that prints each try's result.
type ProbeRun struct {
	Pos     Pos            `json:"pos"` // the command line
	Node    string         `json:"node,omitempty"`
	Tool    string         `json:"tool"` // "nc"
	Command string         `json:"command"`
	Target  netip.AddrPort `json:"target"`
	// Attempts is how many connections were tried; Failed how many
	// failed.
	Attempts int `json:"attempts"`
	Failed   int `json:"failed"`
	// Result is the line that gives the count, or the last result line.
	Result Pos `json:"result"`
}
