package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/netmortem/netmortem"
	"github.com/netmortem/netmortem/flows"
	"github.com/netmortem/netmortem/inspect"
	"github.com/netmortem/netmortem/internal/escape"
	"github.com/netmortem/netmortem/internal/jsontime"
	"github.com/netmortem/netmortem/internal/operand"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse"
	"github.com/netmortem/netmortem/parse/format"
)

func newFlowsCmd(c *cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "flows [flags] CAPTURE...",
		Short: "list the TCP connection attempts of captures, Zeek-style",
		Long: "Prints every TCP connection attempt of the captures (pcap, pcapng, gzip'd, or pasted\n" +
			"tcpdump/tshark text; directories and archives are searched for them) with its outcome,\n" +
			"Zeek state and history, and the frames of its SYN, SYN/ACK and RST packets, after a\n" +
			"summary per server endpoint. For the table and JSON forms, whose summary comes first, the\n" +
			"attempts wait in a temporary file ($TMPDIR, removed at once: some 85 bytes an attempt, or\n" +
			"130 a table's row, formatted); where none can be made, capture files are read twice, and\n" +
			"directories and standard input (-) held whole in memory; where it cannot be written (a\n" +
			"full disk), capture files are read twice, directories held, and standard input, which\n" +
			"cannot be read again, is an error.",
		Example: "  netmortem flows fixtures/captures/handshakes.pcap\n" +
			"  netmortem flows -o csv --state RSTO fixtures/incidents/ephemeral-nodeport\n" +
			"  netmortem flows --port 443 --since +2s -o json fixtures/captures/handshakes.pcapng",
		Annotations: map[string]string{exitCodesKey: exitCodesFlows},
	}
	fs := cmd.Flags()
	output := fs.StringP("output", "o", "table", "output format: "+strings.Join(flows.Formats, ", "))
	hosts := fs.StringSlice("host", nil, "keep attempts to or from these addresses (comma separated or repeated)")
	ports := fs.StringSlice("port", nil, "keep attempts with these client or server ports")
	states := fs.StringSlice("state", nil, "keep attempts with these outcomes (established, refused, unanswered, synack_client_rst, ...) or Zeek states (S0, REJ, RSTO, ...)")
	since := fs.String("since", "", "keep attempts that started at or after this time: RFC 3339, or +DURATION from the first packet (attempts without a time are left out)")
	until := fs.String("until", "", "keep attempts that started before this time: RFC 3339, or +DURATION from the first packet (attempts without a time are left out)")
	node := fs.String("node", "", "attribute the captures to this node")
	fs.BoolP("quiet", "q", false, "print no progress on stderr, as analyze's -q (flows prints none: its warnings and errors are always printed)")
	var ao anonymizeOptions
	addAnonymizeFlags(fs, &ao)
	completeFlags(cmd, map[string]cobra.CompletionFunc{"output": completeValues(flows.Formats...),
		"host": cobra.NoFileCompletions, "port": cobra.NoFileCompletions, "state": cobra.NoFileCompletions,
		"since": cobra.NoFileCompletions, "until": cobra.NoFileCompletions, "node": cobra.NoFileCompletions})
	c.runs(cmd, "CAPTURE", func([]string) int {
		return runFlows(fs, c.stdout, c.stderr, output, hosts, ports, states, since, until, node, ao)
	})
	return cmd
}

func runFlows(fs *pflag.FlagSet, stdout, stderr io.Writer, output *string, hosts, ports, states *[]string, since, until, node *string, ao anonymizeOptions) int {
	if err := oneOf("output", *output, flows.Formats); err != nil {
		escape.Fprintln(stderr, "netmortem flows:", err)
		return exitUsage
	}
	if err := ao.loadKey(); err != nil {
		escape.Fprintln(stderr, "netmortem flows:", err)
		return exitUsage
	}
	filter, err := flows.ParseFilter(*hosts, *ports, *states)
	if err != nil {
		escape.Fprintln(stderr, "netmortem flows:", err)
		return exitUsage
	}
	var abs [2]time.Time // the bounds given as times, not offsets
	for i, v := range []string{*since, *until} {
		var err error
		if abs[i], _, err = parseWhen(v); err != nil {
			escape.Fprintln(stderr, "netmortem flows:", err)
			return exitUsage
		}
	}
	if err := windowKinds(abs[0], abs[1]); err != nil {
		escape.Fprintln(stderr, "netmortem flows:", err)
		return exitUsage
	}

	ctx, stop := signalContext()
	defer stop()
	opts := &parse.Options{Node: *node, Formats: captureFormats(), KeepAttempts: true, Stdin: stdin}
	// A path given twice, under any spelling, or inside a directory given,
	// is read once, as analyze reads it.
	seen := map[string]bool{}
	paths := operand.DropInside(slices.DeleteFunc(slices.Clone(fs.Args()), func(p string) bool {
		dup := seen[p]
		seen[p] = true
		return dup
	}), nil)
	// The JSON and table forms keep their attempts in a temporary file,
	// read once, when one can be made; without it, those of a directory
	// or standard input are held (they would be read twice).
	hand := handOnFlows(paths, *output, *since, *until, ao, true)
	var sp *flowsSpool
	if hand && *output != "csv" {
		sp = newFlowsSpool()
		defer sp.close()
		hand = sp != nil || regularFiles(paths)
	}
	if hand {
		f := filter
		f.Since, f.Until = resolveWhen(*since, time.Time{}), resolveWhen(*until, time.Time{})
		if code := flowsHandedOn(ctx, stdout, stderr, *output, paths, opts, f, sp); code >= 0 {
			return code
		}
		sp.close() // its disk is not needed to hold every attempt
	}
	in := operand.OpenPaths(ctx, paths, opts)
	snap := in.Snap
	printWarnings(stderr, notCaptures(stderr, in.Warns))
	first := firstPacket(snap)
	filter.Since = resolveWhen(*since, first)
	filter.Until = resolveWhen(*until, first)
	if err := windowKinds(filter.Since, filter.Until); err != nil {
		escape.Fprintln(stderr, "netmortem flows:", err)
		return exitUsage
	}
	t := flows.Build(snap, filter)
	// The warnings after the read name their places as the output does.
	anonymizer := ao.anonymizer(snap)
	n, pos := t.OutOfRange()
	warnOutOfRange(stderr, n, netmortem.Anonymize(anonymizer, pos))
	warnUnplaced(stderr, t, filter, anonymizer)
	t = netmortem.Anonymize(anonymizer, t)
	write := t.Write
	if *output == "table" {
		write = func(w io.Writer, _ string) error { return t.WriteTable(w, outputWidth(w)) }
	}
	if err := write(stdout, *output); err != nil {
		escape.Fprintln(stderr, "netmortem flows:", err)
		return exitUnreadable
	}
	if err := ao.writeMapping(anonymizer); err != nil {
		escape.Fprintln(stderr, "netmortem flows:", err)
		return exitUnreadable
	}
	testHook("written")
	return flowsExit(stderr, in, snap, "")
}

// warnOutOfRange says that n packet times, the first at pos, are written
// with their year clamped.
func warnOutOfRange(stderr io.Writer, n int, pos model.Pos) {
	if n > 0 {
		escape.Fprintf(stderr, "warning: %s: %s outside the years %d-%d (a corrupt or forged timestamp), written with the year clamped\n",
			pos, count(n, "packet time"), jsontime.MinYear, jsontime.MaxYear)
	}
}

// unplaced is what counts the attempts a time window left out for want
// of a time it can place: flows.Table, Builder and CSVWriter.
type unplaced interface {
	Untimed() (n int, first model.Pos)
	Undated() (n int, first model.Pos, dated bool)
}

// warnUnplaced says how many attempts passed f but for its time window
// (--since, --until), which left them out since it cannot place them, and
// where the first of each kind is, named through a (nil: as it is):
// those without a time (text pasted from tcpdump -t, or a first packet
// read without its corrupt time), in no window; and those in year 0,
// without a date (text with times of day, or with times counted from its
// first packet), in a window of dates, or, dated, the other way round.
func warnUnplaced(stderr io.Writer, c unplaced, f flows.Filter, a *netmortem.Anonymizer) {
	if n, pos := c.Untimed(); n > 0 {
		escape.Fprintf(stderr, "warning: %s: %s without a time (text pasted without times, as tcpdump -t prints it, or a first packet read without its corrupt time): %s left %s out\n",
			netmortem.Anonymize(a, pos), count(n, "attempt"), windowFlags(f), them(n))
	}
	switch n, pos, dated := c.Undated(); {
	case n == 0:
	case dated:
		escape.Fprintf(stderr, "warning: %s: %s with dated times: %s, in year 0 without a date, left %s out\n",
			netmortem.Anonymize(a, pos), count(n, "attempt"), windowFlags(f), them(n))
	default:
		escape.Fprintf(stderr, "warning: %s: %s timed in year 0, without a date (text with times of day, as tcpdump prints them by default, or times counted from its first packet): %s, with a date, left %s out\n",
			netmortem.Anonymize(a, pos), count(n, "attempt"), windowFlags(f), them(n))
	}
}

// windowKinds reports an error when since and until are both set and one
// has a date while the other lies in year 0 (a time of day without a
// date, or a time counted from a text's first packet): no attempt's time
// could lie in both.
func windowKinds(since, until time.Time) error {
	if since.IsZero() || until.IsZero() || (since.Year() == 0) == (until.Year() == 0) {
		return nil
	}
	return fmt.Errorf("--since %s and --until %s: one has a date and the other lies in year 0, without one (a time of day, or a time counted from a text's first packet): no time lies in both",
		since.Format(time.RFC3339Nano), until.Format(time.RFC3339Nano))
}

// windowFlags names the flags that set f's time window.
func windowFlags(f flows.Filter) string {
	var flags []string
	if !f.Since.IsZero() {
		flags = append(flags, "--since")
	}
	if !f.Until.IsZero() {
		flags = append(flags, "--until")
	}
	return strings.Join(flags, " and ")
}

// them is the pronoun of n attempts.
func them(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

// flowsExit says why flows' output may be short, and returns its exit
// code. cut says what the output covers when an interrupt cut it short;
// "" when none did, or when it stopped the reading (in.Stopped), for what
// was read until then. An interrupt that came once the output was made
// cut nothing short.
func flowsExit(stderr io.Writer, in operand.Opened, snap *model.Snapshot, cut string) int {
	bad := snap.UnreadableCaptures()
	switch {
	case cut != "" || in.Stopped():
		if cut == "" {
			cut = "the output covers what was read until then"
		}
		fmt.Fprintln(stderr, "netmortem flows: interrupted: "+cut)
		sayNotReached(stderr, snap)
		return exitUnreadable
	case in.Err != nil:
		escape.Fprintln(stderr, "netmortem flows:", in.Err)
		return exitUnreadable
	case len(bad) > 0:
		escape.Fprintf(stderr, "netmortem flows: %s could not be read: %s\n", count(len(bad), "capture"), strings.Join(bad, ", "))
		return exitUnreadable
	case len(snap.Captures) == 0:
		// Why files were skipped (an empty file, content no capture
		// format reads in a directory ...), but for the operands whose
		// content a warning or a note has named already.
		named := map[string]bool{}
		for _, w := range in.Warns {
			if w != nil && errors.Is(w.Err, format.ErrUnrecognized) {
				named[w.Pos.File] = true
			}
		}
		rest := *snap
		rest.Inputs = slices.DeleteFunc(slices.Clone(snap.Inputs), func(in model.Input) bool {
			return in.Skipped == format.ErrUnrecognized.Error() && named[in.Path]
		})
		why := ""
		if line, _ := inspect.SkippedParts(&rest, nil); line != "" {
			why = ": " + line
		}
		escape.Fprintln(stderr, "netmortem flows: no capture could be read"+why)
		return exitUnreadable
	}
	return exitOK
}

// sayNotReached names the inputs of snap that a run cut short did not
// reach, the first few of them, so that flows' output is not taken for
// all of its inputs'.
func sayNotReached(stderr io.Writer, snap *model.Snapshot) {
	var names []string
	for _, in := range snap.Inputs {
		if in.Skipped == model.SkippedCutShort {
			names = append(names, in.Path)
		}
	}
	if len(names) == 0 {
		return
	}
	escape.Fprintf(stderr, "netmortem flows: %s not read, the run cut short before them: %s\n", count(len(names), "input"), firstThree(names))
}

// captureFormats are the formats whose records are packets.
func captureFormats() []*parse.Format {
	var out []*parse.Format
	for _, f := range parse.Formats() {
		if f.Kind == model.KindCapture {
			out = append(out, f)
		}
	}
	return out
}

// parseWhen reads a --since/--until value: "" (none), RFC 3339, or
// "+DURATION" from the first packet.
func parseWhen(v string) (abs time.Time, rel time.Duration, err error) {
	switch {
	case v == "":
		return time.Time{}, 0, nil
	case strings.HasPrefix(v, "+"):
		d, err := time.ParseDuration(v[1:])
		if err != nil {
			return time.Time{}, 0, fmt.Errorf("%q: expected +DURATION such as +90s: %w", v, err)
		}
		return time.Time{}, d, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, 0, fmt.Errorf("%q: expected an RFC 3339 time such as 2022-09-15T19:09:02Z, or +DURATION", v)
	}
	return t, 0, nil
}

// resolveWhen returns the time v names, an offset counted from first. With
// no first packet time (no capture has one), an offset names no time at
// all, and no attempt has one: it returns an instant past Go's zero time,
// a bound every attempt without a time is outside of.
func resolveWhen(v string, first time.Time) time.Time {
	abs, rel, _ := parseWhen(v)
	if strings.HasPrefix(v, "+") {
		if first.IsZero() {
			return time.Time{}.Add(time.Nanosecond)
		}
		return first.Add(rel)
	}
	return abs
}

// firstPacket returns the time of the first packet of snap's captures
// that has a date, when one has; else that of the first packet timed in
// year 0 (text with times of day, as tcpdump prints them by default, or
// with times counted from its first packet), which has no day among
// theirs.
func firstPacket(snap *model.Snapshot) time.Time {
	var first, undated time.Time
	for _, c := range snap.Captures {
		at := &first
		if c.First.Year() == 0 {
			at = &undated
		}
		if !c.First.IsZero() && (at.IsZero() || c.First.Before(*at)) {
			*at = c.First
		}
	}
	if first.IsZero() {
		return undated
	}
	return first
}

// notCaptures returns warns without the "unrecognized content" of the
// files given that another format than a capture's recognizes (flows reads
// captures only): for each of them, a note on w says what it holds.
func notCaptures(w io.Writer, warns model.ErrorList) model.ErrorList {
	var out model.ErrorList
	for _, wn := range warns {
		if wn == nil || !errors.Is(wn.Err, format.ErrUnrecognized) || wn.Pos.Line != 0 {
			out = append(out, wn)
			continue
		}
		f := sniffFile(wn.Pos.File)
		if f == nil {
			out = append(out, wn)
			continue
		}
		fprintfFitted(w, outputWidth(w), "netmortem flows: %s: %s output (%s evidence), not a capture: skipped (netmortem analyze reads it)\n",
			wn.Pos.File, f.Name, string(f.Kind))
	}
	return out
}

// sniffFile is the format that recognizes the start of the file at path
// best, among those that are not captures; nil if none does or the file
// cannot be read.
func sniffFile(path string) *parse.Format {
	file, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer file.Close()
	head := make([]byte, 64<<10)
	n, _ := io.ReadFull(file, head)
	var best *parse.Format
	bestScore := 0
	for _, f := range parse.Formats() {
		if f.Kind == model.KindCapture {
			continue
		}
		if sc := f.Sniff(path, head[:n]); sc > bestScore {
			best, bestScore = f, sc
		}
	}
	return best
}
