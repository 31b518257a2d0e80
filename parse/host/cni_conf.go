package host

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/internal/text"
)

// CNIConfFormat reads a node's CNI network configuration, the files of
// /etc/cni/net.d.
var CNIConfFormat = &format.Format{
	Name:    "cni-conf",
	Kind:    model.KindCNI,
	Command: "cat /etc/cni/net.d/*.conflist (or a .conf): the node's CNI network configuration",
	Doc: "a CNI network configuration, a list (`plugins`) or a single plugin, one or several as `cat` prints " +
		"them, under a prompt or not: settings of tool `cni`, `name` and `cniVersion`, then for each plugin " +
		"`TYPE.type`, `TYPE.bridge`, `TYPE.mtu`, `TYPE.ipam.type` and each address range of its IPAM " +
		"(`TYPE.ipam.subnet`: `subnet` and the `ranges`' subnets), at the line that writes it; " +
		"`pod-cidr-overlap` reads the IPAM's subnets as the Pod network",
	Sniff: sniffCNIConf,
	Parse: format.Records(readCNIConf, func(s *model.Snapshot, out []model.Setting) { s.Settings = append(s.Settings, out...) }, "settings"),
}

// CNIConf parses CNI network configurations (see CNIConfFormat). name is
// used only in positions.
func CNIConf(r io.Reader, name string) ([]model.Setting, error) {
	return format.ReadAll(r, name, readCNIConf)
}

// cniNetwork is the part of a CNI network configuration read: a list's
// plugins, or the single plugin a .conf is.
type cniNetwork struct {
	CNIVersion string      `json:"cniVersion"`
	Name       string      `json:"name"`
	Plugins    []cniPlugin `json:"plugins"`
	cniPlugin
}

type cniPlugin struct {
	Type   string `json:"type"`
	Bridge string `json:"bridge"`
	MTU    *int   `json:"mtu"`
	IPAM   *struct {
		Type   string `json:"type"`
		Subnet string `json:"subnet"`
		Ranges [][]struct {
			Subnet string `json:"subnet"`
		} `json:"ranges"`
	} `json:"ipam"`
	// Delegate is flannel's: the plugin it hands the Pod to, with its
	// settings.
	Delegate *cniPlugin `json:"delegate"`
}

// maxCNIConf bounds the configuration read: the files are a few kB.
const maxCNIConf = 1 << 20

func readCNIConf(r io.Reader, src *format.File, errs *model.ErrorList) []model.Setting {
	name := src.Name
	data, err := io.ReadAll(io.LimitReader(r, maxCNIConf+1))
	if err != nil {
		errs.Addf(model.Pos{File: name}, "", "%w", err)
		return nil
	}
	if len(data) > maxCNIConf {
		errs.Addf(model.Pos{File: name}, "", "%w: a CNI configuration of more than %d bytes", format.ErrSyntax, maxCNIConf)
		return nil
	}
	lines := strings.Split(string(data), "\n")
	var out []model.Setting
	// The JSON objects, each after the prompt lines and command lines
	// before it: `cat` of several files prints them one after another.
	var buf bytes.Buffer
	start := -1 // the line the object being gathered starts on
	depth := 0
	flush := func(end int) {
		if start < 0 {
			return
		}
		out = append(out, cniSettings(buf.Bytes(), lines, start, end, name, errs)...)
		buf.Reset()
		start, depth = -1, 0
	}
	for i, line := range lines {
		t := strings.TrimSpace(line)
		if start < 0 {
			if t == "" {
				continue
			}
			if _, _, ok := text.Prompt(line); ok || !strings.HasPrefix(t, "{") {
				continue // a prompt, a command or a file's name (`==> f <==`)
			}
			start = i
		}
		buf.WriteString(line)
		buf.WriteByte('\n')
		depth += jsonDepth(line)
		if depth <= 0 {
			flush(i)
		}
	}
	if start >= 0 {
		errs.Addf(model.Pos{File: name, Line: start + 1}, "", "%w: a CNI configuration that does not end", format.ErrSyntax)
	}
	return out
}

// jsonDepth returns how much line opens JSON objects and arrays, outside
// strings.
func jsonDepth(line string) int {
	d, in, esc := 0, false, false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case esc:
			esc = false
		case in && c == '\\':
			esc = true
		case c == '"':
			in = !in
		case in:
		case c == '{' || c == '[':
			d++
		case c == '}' || c == ']':
			d--
		}
	}
	return d
}

// cniSettings reads one configuration, lines[start:end+1] of the file,
// into settings placed at the line each value is written on.
func cniSettings(obj []byte, lines []string, start, end int, name string, errs *model.ErrorList) []model.Setting {
	var n cniNetwork
	if err := json.Unmarshal(obj, &n); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		line, off := start+1, int64(-1)
		switch {
		case errors.As(err, &se):
			off = se.Offset
		case errors.As(err, &te):
			off = te.Offset
		}
		if off > 0 {
			line += bytes.Count(obj[:min(int(off), len(obj))], []byte("\n"))
		}
		errs.Addf(model.Pos{File: name, Line: line}, "", "%w: a CNI configuration: %v", format.ErrSyntax, err)
		return nil
	}
	if n.CNIVersion == "" && n.Type == "" && len(n.Plugins) == 0 {
		errs.Addf(model.Pos{File: name, Line: start + 1}, "", "%w: expected a CNI configuration (cniVersion, type or plugins)", format.ErrSyntax)
		return nil
	}
	at := start // where the search for the next value's line starts
	var out []model.Setting
	add := func(key, jsonKey, value string) {
		line := findLine(lines, at, end, jsonKey, value)
		if line < 0 {
			line = findLine(lines, start, end, jsonKey, value) // written before the last value found
		}
		if line < 0 {
			line = start
		} else {
			at = line
		}
		out = append(out, model.Setting{Pos: model.Pos{File: name, Line: line + 1}, Tool: "cni", Key: key, Value: value})
	}
	if n.Name != "" {
		add("name", "name", n.Name)
	}
	if n.CNIVersion != "" {
		add("cniVersion", "cniVersion", n.CNIVersion)
	}
	plugins := n.Plugins
	if len(plugins) == 0 {
		plugins = []cniPlugin{n.cniPlugin}
	}
	var addPlugin func(p cniPlugin)
	addPlugin = func(p cniPlugin) {
		if p.Type == "" {
			return
		}
		add(p.Type+".type", "type", p.Type)
		if p.Bridge != "" {
			add(p.Type+".bridge", "bridge", p.Bridge)
		}
		if p.MTU != nil {
			add(p.Type+".mtu", "mtu", fmt.Sprint(*p.MTU))
		}
		if p.IPAM != nil {
			if p.IPAM.Type != "" {
				add(p.Type+".ipam.type", "type", p.IPAM.Type)
			}
			if p.IPAM.Subnet != "" {
				add(p.Type+".ipam.subnet", "subnet", p.IPAM.Subnet)
			}
			for _, set := range p.IPAM.Ranges {
				for _, r := range set {
					if r.Subnet != "" {
						add(p.Type+".ipam.subnet", "subnet", r.Subnet)
					}
				}
			}
		}
		if p.Delegate != nil {
			addPlugin(*p.Delegate)
		}
	}
	for _, p := range plugins {
		addPlugin(p)
	}
	return out
}

// findLine returns the index of the first line of lines[from:to+1] that
// writes key with value ("subnet": "10.96.0.0/16"), or -1.
func findLine(lines []string, from, to int, key, value string) int {
	for i := from; i <= to && i < len(lines); i++ {
		l := lines[i]
		if strings.Contains(l, `"`+key+`"`) && strings.Contains(l, value) {
			return i
		}
	}
	return -1
}

// sniffCNIConf claims a JSON object that names a CNI version and a
// plugin's type or a list of plugins.
func sniffCNIConf(_ string, head []byte) int {
	if !text.IsText(head) {
		return 0
	}
	t := bytes.TrimSpace(head)
	for len(t) > 0 && t[0] != '{' {
		// Prompt and command lines before the object.
		i := bytes.IndexByte(t, '\n')
		if i < 0 {
			return 0
		}
		line := string(t[:i])
		if _, _, ok := text.Prompt(line); !ok && !strings.HasPrefix(line, "==>") && !strings.HasPrefix(line, "cat ") {
			return 0
		}
		t = bytes.TrimSpace(t[i+1:])
	}
	if !bytes.Contains(t, []byte(`"cniVersion"`)) || bytes.Contains(t, []byte(`"apiVersion"`)) {
		return 0
	}
	if !bytes.Contains(t, []byte(`"plugins"`)) && !bytes.Contains(t, []byte(`"type"`)) {
		return 0
	}
	return 95
}
