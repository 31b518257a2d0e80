package report

import (
	"fmt"
	"slices"
	"strings"
)

// Output is one destination of a report: a format (one of Formats) and
// the file to write it to, or standard output.
type Output struct {
	Format string
	// Path is the file to write; empty for standard output.
	Path string
}

// String gives o back as ParseOutput reads it: "json=report.json", "table".
func (o Output) String() string {
	if o.Path == "" {
		return o.Format
	}
	return o.Format + "=" + o.Path
}

// ParseOutput reads one output: "FORMAT" (standard output) or
// "FORMAT=PATH" (the file PATH; "-" is standard output). Its errors quote
// s.
func ParseOutput(s string) (Output, error) {
	format, path, hasPath := strings.Cut(s, "=")
	o := Output{Format: format, Path: path}
	if !slices.Contains(Formats(), format) {
		return o, fmt.Errorf("%q: unknown output format %q (want %s, as FORMAT or FORMAT=PATH)", s, format, strings.Join(Formats(), ", "))
	}
	if hasPath && path == "" {
		return o, fmt.Errorf("%q: no file after %q (FORMAT=PATH; %q alone writes to standard output)", s, format+"=", format)
	}
	if path == "-" {
		o.Path = ""
	}
	return o, nil
}

// ParseOutputs reads several outputs, as ParseOutput, and checks that at
// most one goes to standard output and that no two write the same file.
func ParseOutputs(values []string) ([]Output, error) {
	var (
		outs   []Output
		stdout string
		files  = map[string]string{}
	)
	for _, v := range values {
		o, err := ParseOutput(v)
		if err != nil {
			return nil, err
		}
		if o.Path == "" {
			if stdout != "" {
				return nil, fmt.Errorf("%q and %q: at most one output goes to standard output (write the others to files: FORMAT=PATH)", stdout, v)
			}
			stdout = v
		} else {
			if prev, ok := files[o.Path]; ok {
				return nil, fmt.Errorf("%q and %q: two outputs write the same file", prev, v)
			}
			files[o.Path] = v
		}
		outs = append(outs, o)
	}
	return outs, nil
}
