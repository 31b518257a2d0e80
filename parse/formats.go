package parse

import (
	"context"
	"io"

	"github.com/netmortem/netmortem/model"
)

// Format is one input format netmortem reads. Formats are recognized by
// their content (Sniff), never by their file name alone.
type Format struct {
	// Name identifies the format in reports: "pcap", "sysctl", "ipvsadm".
	Name string
	// Kind is the kind of evidence the format carries.
	Kind model.Kind
	// Command is the command (or source) that produces the format, for
	// docs/inputs.md and `netmortem inspect`.
	Command string
	// Sniff scores how well head (up to the first 64 KiB of the file,
	// decompressed) matches the format: 0 means no, 100 means certain.
	// name is the file's path; use it only to break ties.
	Sniff func(name string, head []byte) int
	// Parse reads the whole input into snap and returns how many records it
	// read. Problems are returned as a model.ErrorList of positioned errors;
	// whatever could be parsed is kept in snap.
	Parse func(ctx context.Context, r io.Reader, src *Source, snap *model.Snapshot) (records int, err error)
}

// Source names the input being parsed.
type Source struct {
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
	// SummarizeCaptures asks capture parsers to fold attempts into
	// per-server counters (Options.SummarizeCaptures), keeping
	// FailedSample failures per server when it is positive.
	SummarizeCaptures bool
	FailedSample      int
	// Details are per-format counts shown with the input, such as the
	// object kinds of a Kubernetes List. Parsers may set them.
	Details map[string]int
}

// Count adds n to the detail counter key.
func (s *Source) Count(key string, n int) {
	if s.Details == nil {
		s.Details = map[string]int{}
	}
	s.Details[key] += n
}

// Pos returns the position of line n of the source.
func (s *Source) Pos(line int) model.Pos { return model.Pos{File: s.Name, Line: line} }

// Formats returns every format netmortem reads, in the order they are tried
// when two sniff with the same score. The list is explicit.
func Formats() []*Format {
	return []*Format{
		captureFormat,
		sysctlFormat,
		sysctlJSONFormat,
		componentFlagsFormat,
		containersFormat,
		describeFormat,
		kubeTableFormat,
		klogFormat,
		etcdLogFormat,
		jsonLogFormat,
		logfmtFormat,
		nginxAccessFormat,
		nginxErrorFormat,
		dmesgFormat,
		corednsLogFormat,
		ipvsadmFormat,
		iptablesSaveFormat,
		iptablesListFormat,
		iptablesRulesFormat,
		nftFormat,
		kubeFormat,
		tcpdumpTextFormat,
		tsharkTextFormat,
		ssFormat,
		netstatFormat,
		neighFormat,
		addrFormat,
		routeFormat,
		neighJSONFormat,
		addrJSONFormat,
		routeJSONFormat,
		conntrackFormat,
		conntrackStatsFormat,
		settingsFormat,
		probesFormat,
		sessionFormat,
	}
}

// recordsParser makes a Format's Parse from a reader of records: what read
// returns is added to the snapshot by add and counted in the source's
// details under detail.
func recordsParser[T any](read func(io.Reader, *Source, *model.ErrorList) []T, add func(*model.Snapshot, []T), detail string) func(context.Context, io.Reader, *Source, *model.Snapshot) (int, error) {
	return func(_ context.Context, r io.Reader, src *Source, snap *model.Snapshot) (int, error) {
		var errs model.ErrorList
		out := read(r, src, &errs)
		add(snap, out)
		src.Count(detail, len(out))
		return len(out), errs.Err()
	}
}

// readRecords runs read over r for a package-level parser (Addrs, Routes
// ...): name is used in positions only.
func readRecords[T any](r io.Reader, name string, read func(io.Reader, *Source, *model.ErrorList) []T) ([]T, error) {
	var errs model.ErrorList
	out := read(r, &Source{Name: name}, &errs)
	return out, errs.Err()
}
