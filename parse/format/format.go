// Package format defines what an input format of netmortem is: a Format
// (its name, the evidence it carries, the command that produces it, how to
// recognize it and how to read it), the File a parser is given, the
// sentinel errors parsers wrap, and the small generic helpers record
// formats are built from. It is the leaf of the parse tree: package parse
// and its domain packages import it, and it imports none of them.
package format

import (
	"context"
	"io"

	"github.com/netmortem/netmortem/capture"
	"github.com/netmortem/netmortem/model"
)

// Format is one input format netmortem reads. Formats are recognized by
// their content (Sniff), never by their file name alone.
type Format struct {
	// Name identifies the format in reports: "pcap", "sysctl", "ipvsadm".
	Name string
	// Kind is the kind of evidence the format carries.
	Kind model.Kind
	// Command is the command (or source) that produces the format, in
	// plain text, for docs/inputs.md and `netmortem formats`. Its first
	// word is the program: a bundle layout or a session prompt that names
	// the same program breaks a tie in the format's favor.
	Command string
	// Doc says what is read and how, for the notes column of
	// docs/inputs.md (Markdown; may be empty).
	Doc string
	// Sniff scores how well head (up to the first 64 KiB of the file,
	// decompressed) matches the format: 0 means no, 100 means certain.
	// name is the file's path; use it only to break ties.
	Sniff func(name string, head []byte) int
	// Parse reads the whole input into snap and returns how many records it
	// read. Problems are returned as a model.ErrorList of positioned errors;
	// whatever could be parsed is kept in snap.
	Parse func(ctx context.Context, r io.Reader, src *File, snap *model.Snapshot) (records int, err error)
}

// File is the file being parsed (a path, an archive member, standard
// input): its name in positions, what the bundle layout says of it, and
// the counts its parser adds.
type File struct {
	// Name is used in positions: the file path, or archive!member.
	Name string
	// Node is the node the input belongs to, "" when unknown.
	Node string
	// Command is the command that produced the input when the bundle
	// layout names it (sosreport file names, troubleshoot run-host info
	// files), "" when unknown. Parsers may use it to settle ambiguous
	// content; the content still decides the format.
	Command string
	// Format starts as the sniffed format's Name; a parser may refine it
	// (pcap becomes pcapng, kubectl-json names the List kind).
	Format string
	// Summary asks capture parsers to fold attempts into per-server
	// counters, as the Open options say.
	capture.Summary
	// EachAttempt, when set, asks capture parsers to hand their attempts
	// to it one by one rather than add them to the Snapshot (see
	// capture.Options.EachAttempt).
	EachAttempt func(model.Attempt)
	// LendAttempts, with EachAttempt, asks capture parsers to lend the
	// attempts (capture.Options.LendAttempts).
	LendAttempts bool
	// EachRow, when set, asks capture parsers to hand it each attempt's
	// row instead (capture.Options.EachRow).
	EachRow func(*model.Row)
	// Details are per-format counts shown with the input, such as the
	// object kinds of a Kubernetes List. Parsers may set them.
	Details map[string]int
}

// Count adds n to the detail counter key.
func (s *File) Count(key string, n int) {
	if s.Details == nil {
		s.Details = map[string]int{}
	}
	s.Details[key] += n
}

// Pos returns the position of line n of the file.
func (s *File) Pos(line int) model.Pos { return model.Pos{File: s.Name, Line: line} }
