package collect

import (
	"bufio"
	"io"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/model"
)

// ManifestFormat is the first field of the manifest's format line.
const ManifestFormat = "netmortem-collect"

// Manifest is what the collector's manifest (ManifestFile) records: one
// line per fact, its fields separated by tabs.
type Manifest struct {
	// ScriptVersion is the version of the script that wrote it.
	ScriptVersion string
	// Node is the node's name, which is also the name of the directory
	// holding its outputs.
	Node string
	// Started and Ended are the collection's UTC times, as written.
	Started, Ended string
	// Options are the script's options, "name=value".
	Options []string
	// Tools are the versions recorded, tool by tool, in order.
	Tools []ToolVersion
	// Ran are the commands run, in order.
	Ran []Ran
	// Skipped are the commands not run, with why.
	Skipped []Skipped
	// Notes are the other remarks (a command stopped by its time bound,
	// its first lines of standard error), "name: text".
	Notes []string
}

// ToolVersion is one tool's version as the manifest records it.
type ToolVersion struct{ Tool, Version string }

// Ran is one command the collector ran.
type Ran struct {
	// Name is the command's name in Commands.
	Name string
	// Status is its exit status.
	Status int
	// File is its output's path in the bundle (relative to the
	// manifest's directory; a directory ends with "/"), "" when it
	// printed nothing.
	File string
	// Shell is the command line that ran.
	Shell string
}

// Skipped is one command the collector did not run.
type Skipped struct{ Name, Why string }

// ReadManifest reads a collector manifest. name is used in errors, which
// are positioned (*model.Error at name:line: what was expected).
func ReadManifest(name string, r io.Reader) (*Manifest, error) {
	m := &Manifest{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	n := 0
	sawFormat := false
	for sc.Scan() {
		n++
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		want := func(k int, what string) error {
			if len(f) < k {
				return model.Errorf(model.Pos{File: name, Line: n}, "", "%s line: expected %s, got %q", f[0], what, line)
			}
			return nil
		}
		var err error
		switch f[0] {
		case "format":
			if err = want(2, "the format"); err == nil && f[1] != ManifestFormat {
				err = model.Errorf(model.Pos{File: name, Line: n}, "", "expected format %s, got %q", ManifestFormat, f[1])
			}
			sawFormat = true
		case "script-version":
			if err = want(2, "a version"); err == nil {
				m.ScriptVersion = f[1]
			}
		case "node":
			if err = want(2, "the node's name"); err == nil {
				m.Node = f[1]
			}
		case "started":
			if err = want(2, "a time"); err == nil {
				m.Started = f[1]
			}
		case "ended":
			if err = want(2, "a time"); err == nil {
				m.Ended = f[1]
			}
		case "options":
			m.Options = append(m.Options, f[1:]...)
		case "tool":
			if err = want(3, "a tool and its version"); err == nil {
				m.Tools = append(m.Tools, ToolVersion{Tool: f[1], Version: f[2]})
			}
		case "ran":
			if err = want(5, "name, status, file and command"); err != nil {
				break
			}
			st, perr := strconv.Atoi(f[2])
			if perr != nil {
				err = model.Errorf(model.Pos{File: name, Line: n}, "", "ran line: expected an exit status, got %q", f[2])
				break
			}
			file := f[3]
			if file == "-" {
				file = ""
			}
			m.Ran = append(m.Ran, Ran{Name: f[1], Status: st, File: file, Shell: strings.Join(f[4:], "\t")})
		case "skipped":
			if err = want(3, "a name and why"); err == nil {
				m.Skipped = append(m.Skipped, Skipped{Name: f[1], Why: f[2]})
			}
		case "note", "stderr":
			if err = want(3, "a name and a text"); err == nil {
				m.Notes = append(m.Notes, f[1]+": "+strings.Join(f[2:], " "))
			}
		default:
			err = model.Errorf(model.Pos{File: name, Line: n}, "", "expected a manifest line (format, node, ran, skipped ...), got %q", line)
		}
		if err != nil {
			return m, err
		}
	}
	if err := sc.Err(); err != nil {
		return m, model.Errorf(model.Pos{File: name, Line: n + 1}, "", "%w", err)
	}
	if !sawFormat {
		return m, model.Errorf(model.Pos{File: name, Line: 1}, "", "expected a line \"format\\t%s\"", ManifestFormat)
	}
	return m, nil
}

// Command returns the command that wrote the file rel (relative to the
// manifest's directory): the first command whose File is rel, or the
// directory holding it.
func (m *Manifest) Command(rel string) (string, bool) {
	for _, r := range m.Ran {
		if r.File == "" {
			continue
		}
		if r.File == rel || strings.HasSuffix(r.File, "/") && strings.HasPrefix(rel, r.File) {
			return r.Shell, true
		}
	}
	return "", false
}
