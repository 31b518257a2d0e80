package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/netmortem/netmortem/flows"
	"github.com/netmortem/netmortem/internal/escape"
	"github.com/netmortem/netmortem/internal/operand"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse"
)

// outOfRange warns, on stderr, of the packet times written with their
// year clamped: the captures' in snap, and n more, the first at pos.
func outOfRange(stderr io.Writer, snap *model.Snapshot, n int, pos model.Pos) {
	m, at := (&flows.Table{Captures: snap.Captures}).OutOfRange()
	if m > 0 {
		pos = at
	}
	warnOutOfRange(stderr, n+m, pos)
}

// flowsHandedOn writes flows' output as the captures' attempts are handed
// on, holding none of them (handOnFlows says when it can): the CSV form
// as they come; the JSON and table forms, whose summary and endpoints come
// before the attempts, once the read has built the table without its
// attempts (flows.Builder) and sized the table's columns, from the
// temporary file of sp that kept them: the attempts for JSON, the
// table's rows, formatted, for the table (its attempts for standard
// input, for a table tablewriter writes, built from them).
// Without them (sp nil, or they failed),
// the captures are read twice: the first read builds and sizes, the
// second writes the attempts; a capture that changed during the first
// read (one still being written) is then read again with every attempt
// held, and one that changed between the reads is said to, with exit 3,
// since the attempts listed may then not be those the summary counts. The
// table is fitted to the output's width (outputWidth), or, at no width,
// written as tablewriter writes it. It returns flows' exit code, or -1,
// having written nothing, when the table is to be written from every
// attempt held: cells tablewriter sizes its own way (runes that are not
// printable), positions that are not frames or lines of a capture, or,
// without the temporary file, a capture that changed during the first
// read or a directory (whose files could change between the reads
// unseen).
func flowsHandedOn(ctx context.Context, stdout, stderr io.Writer, output string, paths []string,
	opts *parse.Options, filter flows.Filter, sp *flowsSpool) int {
	handOnMemory()
	read := func(ws ...attemptWriter) operand.Opened {
		h := newHandedOn(ws...)
		o := *opts
		o.EachAttempt, o.LendAttempts = h.write, true
		in := operand.OpenPaths(ctx, paths, &o)
		h.close()
		return in
	}
	readRows := func(split []splitWriter, ws ...rowWriter) operand.Opened {
		h := newRowsHandedOn(split, ws...)
		o := *opts
		o.EachRow = h.writeRow
		in := operand.OpenPaths(ctx, paths, &o)
		h.close()
		return in
	}
	var err error
	var in operand.Opened
	cut := ""             // what the output covers, when the reading was cut short
	inconsistent := false // a capture changed between two reads
	if output == "csv" {
		w := flows.NewCSVWriter(stdout, filter)
		d := &direct{w: w}
		o := *opts
		o.EachRow = d.write
		in = operand.OpenPaths(ctx, paths, &o)
		d.close()
		printWarnings(stderr, notCaptures(stderr, in.Warns))
		n, pos := w.OutOfRange()
		outOfRange(stderr, in.Snap, n, pos)
		warnUnplaced(stderr, w, filter, nil)
		err = w.Close()
	} else {
		before := statFiles(paths)
		b, m := flows.NewBuilder(filter), flows.NewTableWidths()
		selected := 0
		// The summary, the columns' widths and the file each take the
		// attempts on a goroutine of their own.
		ws := []attemptWriter{func(a *model.Attempt) {
			if b.Add(a) {
				selected++
			}
		}}
		stdinRead := slices.Contains(paths, operand.Stdin)
		// The table keeps in the file its rows as it sizes them,
		// formatted: they are written from it without being formatted
		// again. JSON keeps the attempts, and so does a table of standard
		// input, which a table tablewriter writes, built from every
		// attempt, could not read again.
		keepRows := output == "table" && sp != nil && !stdinRead
		keepAttempts := sp != nil && !keepRows
		switch {
		case keepRows:
			// The attempts' rows, which the tracker works out without
			// building them, are all the table needs.
			m.Keep(sp.f)
			in = readRows([]splitWriter{sizeRows(m, filter)}, func(r *model.Row) {
				if b.AddRow(r) {
					selected++
				}
			})
		default:
			if output == "table" {
				ws = append(ws, func(a *model.Attempt) {
					if filter.Match(a) {
						m.Add(a)
					}
				})
			}
			if keepAttempts {
				ws = append(ws, func(a *model.Attempt) {
					if filter.Match(a) {
						sp.s.Add(a)
					}
				})
			}
			in = read(ws...)
		}
		rowsKept := keepRows && m.Kept() == nil
		attemptsKept := keepAttempts && sp.ok()
		once := rowsKept || attemptsKept // one read
		if once {
			testHook("kept")
		}
		switch {
		case !once && stdinRead:
			// Standard input is read once: its attempts are gone.
			return sp.stdinLost(stderr)
		case !once && !regularFiles(paths):
			// A directory read twice could change between the reads
			// unseen.
			heldMemory()
			return -1
		}
		if ctx.Err() != nil {
			cut = firstReadCut(in, once)
		}
		width := outputWidth(stdout)
		if output == "table" && ctx.Err() == nil && ((width <= 0 && !m.Plain()) || (width > 0 && !m.Fits())) {
			heldMemory()
			switch {
			case attemptsKept:
				// The table from every attempt kept, rather than read again.
				return heldTable(ctx, stdout, stderr, in, b, filter, sp, width)
			case stdinRead:
				return sp.stdinLost(stderr)
			}
			return -1 // the table from every attempt held
		}
		testHook("first read")
		read1 := statFiles(paths)
		if changed := changedFile(paths, before, read1); changed != "" && ctx.Err() == nil && !once {
			escape.Fprintf(stderr, "warning: %s changed while it was read (a capture still being written?): read once more, every attempt held\n", changed)
			heldMemory()
			return -1
		}
		printWarnings(stderr, notCaptures(stderr, in.Warns))
		n, pos := b.OutOfRange()
		outOfRange(stderr, in.Snap, n, pos)
		warnUnplaced(stderr, b, filter, nil)
		t := b.Table(in.Snap.Captures)
		var w interface {
			Write(a *model.Attempt)
			Close() error
		}
		switch {
		case output == "table" && width > 0:
			w = flows.NewFittedWriter(stdout, t, filter, m, width)
		case output == "table":
			w = flows.NewTableWriter(stdout, t, filter, m)
		default:
			w = flows.NewJSONWriter(stdout, t, filter)
		}
		if once {
			// The rows or the attempts kept: nothing is read again.
			if ctx.Err() == nil {
				secondReadMemory()
				var err error
				if rowsKept {
					err = m.WriteRows(ctx, w)
				} else {
					err = sp.s.Replay(ctx, w)
				}
				switch {
				case ctx.Err() != nil:
					cut = "the listing of the attempts was cut short: the summary and endpoints cover the captures whole, and the attempts those listed until then"
				case err != nil:
					escape.Fprintln(stderr, "netmortem flows: listing the attempts kept in a temporary file:", err)
					inconsistent = true
				}
			} else if cut == "" {
				// Interrupted since the first read: nothing is listed.
				cut = firstReadCut(in, once)
			}
		} else {
			testHook("between reads")
			if ctx.Err() == nil {
				secondReadMemory()
				listed := 0
				in2 := read(func(a *model.Attempt) {
					if filter.Match(a) {
						listed++
					}
					w.Write(a)
				})
				switch changed := changedFile(paths, read1, statFiles(paths)); {
				case ctx.Err() != nil:
					cut = "the second of two reads of the captures was cut short: the summary and endpoints cover the captures whole, and the attempts those read until then"
				case in2.Err != nil && in.Err == nil:
					// Its warnings are the first read's again; an error the
					// first did not meet is the second's own.
					escape.Fprintln(stderr, "netmortem flows: reading the captures again to list their attempts:", in2.Err)
					inconsistent = true
				case changed != "" || listed != selected:
					if changed == "" {
						changed = "a capture"
					}
					escape.Fprintf(stderr, "netmortem flows: %s changed between the two reads of the captures: %d attempts listed, %d in the summary and endpoints above; read a copy of it, or -o csv, which reads once\n",
						changed, listed, selected)
					inconsistent = true
				}
			} else if cut == "" {
				cut = firstReadCut(in, once)
			}
		}
		err = w.Close()
	}
	if err != nil {
		escape.Fprintln(stderr, "netmortem flows:", err)
		return exitUnreadable
	}
	testHook("written")
	if code := flowsExit(stderr, in, in.Snap, cut); code != exitOK || !inconsistent {
		return code
	}
	return exitUnreadable
}

// handOnFlows reports whether flows can write its output in the form
// output as the attempts come, for the same bytes as from the table built
// whole: when every operand is a regular file, or a directory or standard
// input for the CSV form and for the others read once (spool: a temporary
// file keeps their attempts) (files of a rotated series are read as one
// timeline as their attempts are handed on); when --since and --until are
// absolute times, not offsets from the first packet; and without
// --anonymize, whose tokens are drawn from the whole snapshot. Without a
// temporary file, the JSON and table forms read their captures twice, and
// tell a capture that changed between the reads from its file's size and
// time: not those of a directory's files.
func handOnFlows(paths []string, output, since, until string, ao anonymizeOptions, spool bool) bool {
	if ao.enabled() || strings.HasPrefix(since, "+") || strings.HasPrefix(until, "+") || len(paths) == 0 {
		return false
	}
	for _, p := range paths {
		if p == operand.Stdin {
			if output == "csv" || spool {
				continue
			}
			return false
		}
		st, err := os.Stat(p)
		if err != nil || !(st.Mode().IsRegular() || ((output == "csv" || spool) && st.IsDir())) {
			return false
		}
	}
	return true
}

// regularFiles reports whether every one of paths is a regular file.
func regularFiles(paths []string) bool {
	for _, p := range paths {
		if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
			return false
		}
	}
	return true
}

// flowsSpool keeps, in a temporary file, the attempts flows' JSON and
// table forms write after their summary and endpoints: the captures are
// then read once, not twice. The file is removed at once where the system
// allows (it is then gone with the process), else when flows is done. A
// nil flowsSpool, when no temporary file can be made, keeps nothing.
type flowsSpool struct {
	f       *os.File
	s       *flows.Spool // the attempts, unless f keeps a table's rows (flows.TableWidths.Keep)
	removed bool         // the file's name is gone already
}

func newFlowsSpool() *flowsSpool {
	f, err := os.CreateTemp("", "netmortem-flows-*")
	if err != nil {
		return nil
	}
	return &flowsSpool{f: f, s: flows.NewSpool(f), removed: os.Remove(f.Name()) == nil}
}

// ok reports whether sp has kept every attempt: it exists, and neither
// writing the file, what it buffered included, nor an attempt (a time not
// in UTC) failed.
func (sp *flowsSpool) ok() bool { return sp != nil && sp.s.Flush() == nil }

// why says why sp has not kept every attempt, naming the directory of
// its file (the file itself is gone) rather than the file.
func (sp *flowsSpool) why() error {
	if sp == nil {
		return errors.New("no temporary file could be made")
	}
	err := sp.s.Flush()
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s %s: %w", pe.Op, filepath.Dir(pe.Path), pe.Err)
	}
	return err
}

// stdinLost says that standard input's attempts, read once, are gone
// since sp could not keep them, and returns flows' exit code.
func (sp *flowsSpool) stdinLost(stderr io.Writer) int {
	escape.Fprintf(stderr, "netmortem flows: keeping the attempts of standard input in a temporary file: %v (set TMPDIR to a directory with room, or give the capture as a file)\n", sp.why())
	return exitUnreadable
}

// close lets go of the file, and of the disk it takes; it may be called
// again.
func (sp *flowsSpool) close() {
	if sp != nil && sp.f != nil {
		sp.f.Close()
		if !sp.removed {
			os.Remove(sp.f.Name())
		}
		sp.f = nil
	}
}

// firstReadCut says what flows' output covers when it was interrupted by
// the end of its first read, in: the read may have been stopped, or have
// read the captures whole before the interrupt. once says the read is
// the only one.
func firstReadCut(in operand.Opened, once bool) string {
	switch {
	case !in.Stopped():
		return "the captures were read whole: the summary and endpoints cover them, and no attempt is listed"
	case once:
		return "the reading of the captures was cut short: the summary and endpoints cover what was read until then, and no attempt is listed"
	}
	return "the first of two reads of the captures was cut short: the summary and endpoints cover what was read until then, and no attempt is listed"
}

// fileState is what tells that a file changed: the file itself, its
// size and its modification time.
type fileState struct {
	info os.FileInfo
	size int64
	mod  time.Time
}

// statFiles returns the state of each of paths (the zero state for one
// that cannot be read).
func statFiles(paths []string) []fileState {
	out := make([]fileState, len(paths))
	for i, p := range paths {
		if st, err := os.Stat(p); err == nil {
			out[i] = fileState{st, st.Size(), st.ModTime()}
		}
	}
	return out
}

// changedFile returns the first of paths whose states a and b
// (statFiles) differ, "" when none does.
func changedFile(paths []string, a, b []fileState) string {
	for i := range a {
		if a[i].size != b[i].size || !a[i].mod.Equal(b[i].mod) || (a[i].info == nil) != (b[i].info == nil) ||
			(a[i].info != nil && !os.SameFile(a[i].info, b[i].info)) {
			return paths[i]
		}
	}
	return ""
}

// heldTable writes the table of the attempts sp kept (those b selected),
// held in memory, as flows writes the table built whole, fitted to width;
// for the tables only tablewriter writes (cells of runes that are not
// printable, positions that are not frames or lines of a capture). It
// returns flows' exit code.
func heldTable(ctx context.Context, stdout, stderr io.Writer, in operand.Opened, b *flows.Builder, filter flows.Filter, sp *flowsSpool, width int) int {
	printWarnings(stderr, notCaptures(stderr, in.Warns))
	t := b.Table(in.Snap.Captures)
	t.Attempts = make([]model.Attempt, 0, sp.s.Len())
	err := sp.s.Each(ctx, func(a *model.Attempt) {
		// Lent: what it points to is copied.
		t.Attempts = append(t.Attempts, model.Attempt{})
		a.CloneInto(&t.Attempts[len(t.Attempts)-1],
			func(n int) []model.Seg { return make([]model.Seg, n) },
			func(n int) []model.DataSizes { return make([]model.DataSizes, n) })
	})
	switch {
	case ctx.Err() != nil:
		return flowsExit(stderr, in, in.Snap, "the listing of the attempts was cut short, and nothing written")
	case err != nil:
		escape.Fprintln(stderr, "netmortem flows: listing the attempts kept in a temporary file:", err)
		return exitUnreadable
	}
	n, pos := t.OutOfRange()
	warnOutOfRange(stderr, n, pos)
	warnUnplaced(stderr, t, filter, nil)
	if err := t.WriteTable(stdout, width); err != nil {
		escape.Fprintln(stderr, "netmortem flows:", err)
		return exitUnreadable
	}
	testHook("written")
	return flowsExit(stderr, in, in.Snap, "")
}
