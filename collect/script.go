package collect

import (
	_ "embed" // the redaction program the script carries
	"fmt"
	"io"
	"strings"
	"text/template"
)

// ScriptVersion is the version of the collector script, recorded in its
// manifest. It changes when what the script collects, or where, changes.
const ScriptVersion = "1"

// ManifestFile is the name of the manifest the collector writes at the top
// of its bundle: what ran, with which status, the tools' versions, the
// node's name and the times.
const ManifestFile = "netmortem-manifest.txt"

// ClusterDir is the directory of a collected bundle that holds the
// cluster-wide (kubectl) outputs; each node's outputs are in a directory
// named after the node.
const ClusterDir = "cluster"

// Options are the bounds and choices of a collector script.
type Options struct {
	// CaptureSeconds is how long the capture runs (0: no capture).
	CaptureSeconds int
	// CaptureMB caps the capture file's size, in MB (tcpdump -C): past
	// it the capture starts over, keeping the newest packets.
	CaptureMB int
	// Filter is a tcpdump filter expression; "" captures everything.
	Filter string
	// Kubectl runs the cluster-wide kubectl commands too.
	Kubectl bool
	// ConntrackMax bounds the conntrack entries listed.
	ConntrackMax int
	// LogLines bounds each log copied, in lines from its end.
	LogLines int
	// Timeout bounds each command, in seconds (the capture gets its own
	// duration on top).
	Timeout int
}

// DefaultOptions are the bounds of `netmortem collect-script` without
// flags.
func DefaultOptions() Options {
	return Options{CaptureSeconds: 60, CaptureMB: 100, ConntrackMax: 200000, LogLines: 20000, Timeout: 120}
}

// Check reports the first option out of its range.
func (o Options) Check() error {
	switch {
	case o.CaptureSeconds < 0 || o.CaptureSeconds > 86400:
		return fmt.Errorf("capture seconds: expected 0 to 86400, got %d", o.CaptureSeconds)
	case o.CaptureMB < 1 || o.CaptureMB > 100000:
		return fmt.Errorf("capture size: expected 1 to 100000 MB, got %d", o.CaptureMB)
	case o.ConntrackMax < 1:
		return fmt.Errorf("conntrack max: expected at least 1 entry, got %d", o.ConntrackMax)
	case o.LogLines < 1:
		return fmt.Errorf("log lines: expected at least 1, got %d", o.LogLines)
	case o.Timeout < 1:
		return fmt.Errorf("timeout: expected at least 1 second, got %d", o.Timeout)
	case strings.ContainsAny(o.Filter, "\n\r\x00"):
		return fmt.Errorf("filter: expected one line, got %q", o.Filter)
	}
	return nil
}

//go:embed redact.awk
var redactAwk string

// sq quotes s for a POSIX shell, in single quotes.
func sq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// first is the first word of s, the program a command line runs.
func first(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		return f[0]
	}
	return ""
}

// scriptCommand is one command as the script template sees it.
type scriptCommand struct {
	Command
	Body    string // what runs, bounds filled in
	Timeout int
	Dir     string // the directory it writes into, as a shell word
	Record  string // the command line the manifest records
}

// Body returns the shell code the collector script runs for c with the
// options o: Script with o's bounds filled in, or Shell. It writes to
// standard output, or to "$out" (a directory when c.File ends with "/").
func (c Command) Body(o Options) (string, error) {
	if c.Script == "" {
		return c.Shell, nil
	}
	var b strings.Builder
	t, err := template.New(c.Name).Funcs(template.FuncMap{"sq": sq}).Parse(c.Script)
	if err != nil {
		return "", fmt.Errorf("command %s: %w", c.Name, err)
	}
	if err := t.Execute(&b, o); err != nil {
		return "", fmt.Errorf("command %s: %w", c.Name, err)
	}
	return b.String(), nil
}

// WriteScript writes the collector script for o: a POSIX sh script that a
// customer runs as root on a node and that writes one .tar.gz of the
// node's network evidence (Commands), with a manifest (ManifestFile).
func WriteScript(w io.Writer, o Options) error {
	if err := o.Check(); err != nil {
		return err
	}
	var node, cluster []scriptCommand
	for _, c := range Commands {
		if c.Name == "capture" && o.CaptureSeconds == 0 {
			continue
		}
		body, err := c.Body(o)
		if err != nil {
			return err
		}
		sc := scriptCommand{Command: c, Body: body, Timeout: o.Timeout, Dir: `"$nm_node"`, Record: strings.ReplaceAll(body, `"$out"`, c.File)}
		if strings.Contains(body, "\n") || strings.Contains(body, "nm_redact") || strings.Contains(body, "$(") {
			sc.Record = c.Shell
		}
		if c.Name == "capture" {
			sc.Timeout = o.CaptureSeconds + 30
		}
		if c.Scope == ScopeCluster {
			sc.Dir = sq(ClusterDir)
			cluster = append(cluster, sc)
		} else {
			node = append(node, sc)
		}
	}
	if !o.Kubectl {
		cluster = nil
	}
	t, err := template.New("script").Funcs(template.FuncMap{"sq": sq, "join": strings.Join, "first": first}).Parse(scriptTemplate)
	if err != nil {
		return fmt.Errorf("collector script: %w", err)
	}
	err = t.Execute(w, map[string]any{
		"Version": ScriptVersion, "Options": o, "Node": node, "Cluster": cluster, "Versions": Versions,
		"Manifest": ManifestFile, "ClusterDir": ClusterDir, "Redact": redactAwk,
	})
	if err != nil {
		return fmt.Errorf("collector script: %w", err)
	}
	return nil
}
