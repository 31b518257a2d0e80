package model

// Collection is what netmortem's collector recorded in its manifest about
// one node: the commands it ran there and those it could not run. A
// command that ran with status 0 and left no evidence of its kind means
// that kind is empty on that node, not that it was never asked for.
type Collection struct {
	// Node is the node the manifest names.
	Node string `json:"node"`
	// ScriptVersion is the version of the collector script that ran.
	ScriptVersion string `json:"script_version,omitempty"`
	// Ran are the commands run, in order.
	Ran []CollectedRun `json:"ran"`
	// Skipped are the commands not run, with why.
	Skipped []CollectedSkip `json:"skipped"`
	// Pos is the manifest.
	Pos Pos `json:"pos"`
}

// CollectedRun is one command the collector ran on a node.
type CollectedRun struct {
	// Name is the command's name in the collector's catalog.
	Name string `json:"name"`
	// Status is its exit status.
	Status int `json:"status"`
	// File is its output's path in the bundle, relative to the manifest's
	// directory; empty when it printed nothing.
	File string `json:"file,omitempty"`
}

// CollectedSkip is one command the collector did not run on a node.
type CollectedSkip struct {
	// Name is the command's name in the collector's catalog.
	Name string `json:"name"`
	// Why is why it was not run ("ip_vs not loaded", "no ipvsadm").
	Why string `json:"why"`
}

// RanCommand returns the last record of the command name running, if the
// collector ran it.
func (c *Collection) RanCommand(name string) (CollectedRun, bool) {
	for i := len(c.Ran) - 1; i >= 0; i-- {
		if c.Ran[i].Name == name {
			return c.Ran[i], true
		}
	}
	return CollectedRun{}, false
}

// SkippedCommand returns why the collector did not run the command name,
// if it skipped it.
func (c *Collection) SkippedCommand(name string) (CollectedSkip, bool) {
	for _, s := range c.Skipped {
		if s.Name == name {
			return s, true
		}
	}
	return CollectedSkip{}, false
}
