// Package model is netmortem's common model: the plain Go types that every
// other package speaks. Parsers and the capture reader fill a Snapshot; rules
// read it. The package imports nothing of netmortem's own, so a library user
// can build a Snapshot by hand and run rules on it.
//
// Every fact in the model carries a Pos saying where it came from: a file and
// line for text, a file and frame number for a packet capture, or an object
// for a Kubernetes resource. Findings cite these positions as evidence.
package model

import (
	"strconv"
	"strings"
)

// Pos locates evidence in an input. Line is set for text, Frame for packet
// captures, Object (and optionally Path) for Kubernetes objects. The zero Pos
// means "unknown".
type Pos struct {
	// File is the input's path as given (for files inside an archive or
	// bundle directory: the bundle path, then the member path).
	File string `json:"file,omitempty" yaml:"file,omitempty"`
	// Line is 1-based; 0 means unknown.
	Line int `json:"line,omitempty" yaml:"line,omitempty"`
	// Col is a 1-based byte column; 0 means unknown.
	Col int `json:"col,omitempty" yaml:"col,omitempty"`
	// Frame is the 1-based packet number, the same as Wireshark's
	// frame.number.
	Frame int `json:"frame,omitempty" yaml:"frame,omitempty"`
	// Object names a Kubernetes object as "Kind namespace/name" (or
	// "Kind name" when cluster-scoped).
	Object string `json:"object,omitempty" yaml:"object,omitempty"`
	// Path is a field path inside the object, such as
	// spec.ports[0].nodePort.
	Path string `json:"path,omitempty" yaml:"path,omitempty"`
}

// IsZero reports whether p carries no location at all.
func (p Pos) IsZero() bool { return p == Pos{} }

// String formats p in the style of go/token.Position:
// "ipt.txt:42", "ipt.txt:42:7", "node1.pcap#frame=812",
// "svc.json:118 (Service kube-system/dns spec.ports[0])", or "-".
func (p Pos) String() string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.Line > 0 {
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(p.Line))
		if p.Col > 0 {
			b.WriteByte(':')
			b.WriteString(strconv.Itoa(p.Col))
		}
	}
	if p.Frame > 0 {
		b.WriteString("#frame=")
		b.WriteString(strconv.Itoa(p.Frame))
	}
	if p.Object != "" || p.Path != "" {
		obj := strings.TrimSpace(p.Object + " " + p.Path)
		if b.Len() > 0 {
			b.WriteString(" (" + obj + ")")
		} else {
			b.WriteString(obj)
		}
	}
	if b.Len() == 0 {
		return "-"
	}
	return b.String()
}

// Less orders positions by file, line, frame, object and path, for
// deterministic output.
func (p Pos) Less(q Pos) bool {
	if p.File != q.File {
		return p.File < q.File
	}
	if p.Line != q.Line {
		return p.Line < q.Line
	}
	if p.Frame != q.Frame {
		return p.Frame < q.Frame
	}
	if p.Object != q.Object {
		return p.Object < q.Object
	}
	if p.Path != q.Path {
		return p.Path < q.Path
	}
	return p.Col < q.Col
}

// LineAt returns a copy of p pointing at line n of the same file.
func (p Pos) LineAt(n int) Pos {
	p.Line = n
	return p
}
