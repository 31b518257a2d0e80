package model

// KernelModules is one listing of the loaded kernel modules (lsmod), or
// of those a grep kept of it: Pattern is the grep's pattern ("" for the
// whole listing), Loaded the modules listed, none when the grep found
// nothing.
type KernelModules struct {
	Node    string   `json:"node,omitempty"`
	Command string   `json:"command,omitempty"`
	Pattern string   `json:"pattern,omitempty"`
	Loaded  []string `json:"loaded"`
	Pos     Pos      `json:"pos"` // the command line, or the listing's first line
}
