package bundle

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"runtime/debug"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/netmortem/netmortem/collect"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/internal/text"
)

// sniffFor picks the format of a file. Content decides: only formats whose
// Sniff scores above zero are candidates. When the layout names the
// command that produced the file, a candidate whose Command runs the same
// program gets a bonus, so content that two formats could read goes the way
// the layout says. The formats share what they work out from head
// (text.ShareHead).
func (o *opener) sniffFor(name string, head []byte, command string) *format.Format {
	var best *format.Format
	bestScore := 0
	prog := text.Program(command)
	defer text.ShareHead(head)()
	for _, f := range o.formats {
		sc := f.Sniff(name, head)
		if sc <= 0 {
			continue
		}
		if prog != "" && text.Program(f.Command) == prog {
			sc += layoutCommandBonus
		}
		if sc > bestScore {
			best, bestScore = f, sc
		}
	}
	return best
}

// ConfigFile is the name of netmortem's configuration file, which
// netmortem analyze finds next to a bundle: inside a bundle it is listed
// as skipped, not read as evidence.
const ConfigFile = ".netmortem.yaml"

// ManifestSkipped is why the manifest of netmortem's collector
// (collect.ManifestFile) is listed as skipped: it says what ran to make the
// bundle, and is not evidence itself.
const ManifestSkipped = "netmortem collector's manifest (docs/collect.md): what ran to make this bundle, not evidence"

// dispatch is the last stage of Open for one file: it sniffs and parses it
// (decompressed). bound, when set, is the
// decompressing reader whose limit errors are reported.
func (o *opener) dispatch(name string, r io.Reader, head []byte, pl placement, bound *boundReader) {
	if pl.errorsFile {
		if o.collectorErrors(name, r, pl) {
			return
		}
	}
	switch path.Base(filepath.ToSlash(name)) {
	case ConfigFile:
		o.skip(name, "netmortem's configuration (docs/config.md), not evidence", pl)
		return
	case collect.ManifestFile:
		o.skip(name, ManifestSkipped, pl)
		if pl.layout == LayoutNetmortem {
			o.collection(name, r)
		}
		return
	}
	f := o.sniffFor(name, head, pl.command)
	if f == nil && !pl.direct && strings.EqualFold(path.Ext(name), ".md") {
		// A README or notes beside the evidence: nothing to read, nothing
		// to warn of.
		o.skip(name, model.SkippedDocumentation, pl)
		return
	}
	if f == nil {
		if pl.direct {
			o.warns.Add(model.Pos{File: name}, "", format.ErrUnrecognized)
		}
		o.skip(name, "unrecognized content", pl)
		return
	}
	if o.hold(name, f, pl, bound) {
		return
	}
	raw := r
	var charge *chargeReader
	if charged(f.Kind) {
		if o.bud.spent() {
			err := limitErr("not read: the memory budget of the bundle (%s, Limits.MaxMemory) is spent", human(o.bud.lim.MaxMemory))
			o.warns.Add(model.Pos{File: name}, "", err)
			o.skip(name, err.Error(), pl)
			return
		}
		charge = newChargeReader(r, o.bud, f.Name)
		r = charge
	}
	if pl.blank != nil {
		r = blankLines(r, pl.blank)
	}
	src := &format.File{Name: name, Node: pl.node, Command: pl.command, Format: f.Name}
	if o.opts != nil {
		src.Summary, src.EachAttempt, src.LendAttempts = o.opts.Summary, o.opts.EachAttempt, o.opts.LendAttempts
		src.EachRow = o.opts.EachRow
	}
	n, err := o.runParser(f, r, src)
	var list model.ErrorList
	list.Append(err)
	for _, e := range list {
		if e.Pos.File == "" {
			e.Pos.File = name
		}
	}
	if lerr := bound.limitHit(); lerr != nil && !errors.Is(list.Err(), ErrLimit) {
		list.Add(model.Pos{File: name}, "", lerr)
	}
	if charge != nil && charge.err != nil {
		charge.refund()
		if !errors.Is(list.Err(), ErrLimit) {
			list.Add(model.Pos{File: name}, "", charge.err)
		}
	}
	if charge == nil || charge.err == nil {
		addTrailerErr(name, o.trailerErr(raw, bound), &list)
	}
	o.warns = append(o.warns, list...)
	o.add(model.Input{
		Path:     name,
		Format:   src.Format,
		Kind:     f.Kind,
		Node:     src.Node,
		Layout:   pl.layout,
		Command:  pl.command,
		Records:  n,
		Warnings: len(list),
		Details:  src.Details,
	})
}

// runParser calls a format's parser, turning a panic into an error: one
// parser's bug must not stop the bundle.
func (o *opener) runParser(f *format.Format, r io.Reader, src *format.File) (n int, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("parser %s failed: %v\n%s", f.Name, v, debug.Stack())
		}
	}()
	return f.Parse(o.ctx, r, src, o.snap)
}

// collectorErrors reads a collector's error list (troubleshoot writes
// ["message", ...] or {"error": "message"}) and reports each entry as a
// warning at its line. It returns false when the content is not such a
// list, so the file is sniffed as usual.
func (o *opener) collectorErrors(name string, r io.Reader, pl placement) bool {
	b, err := io.ReadAll(io.LimitReader(r, maxLayoutFileBytes))
	if err != nil {
		return false
	}
	var doc yaml.Node
	if yaml.Unmarshal(b, &doc) != nil || len(doc.Content) == 0 {
		return false
	}
	root := doc.Content[0]
	var msgs []*yaml.Node
	switch root.Kind {
	case yaml.SequenceNode:
		for _, c := range root.Content {
			if c.Kind != yaml.ScalarNode {
				return false
			}
			msgs = append(msgs, c)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(root.Content); i += 2 {
			if root.Content[i].Value == "error" && root.Content[i+1].Kind == yaml.ScalarNode {
				msgs = append(msgs, root.Content[i+1])
			}
		}
		if len(msgs) == 0 {
			return false
		}
	default:
		return false
	}
	for _, m := range msgs {
		o.warns.Addf(model.Pos{File: name, Line: m.Line}, "", "collector error: %s", m.Value)
	}
	o.add(model.Input{
		Path:     name,
		Format:   "collector-errors",
		Node:     pl.node,
		Layout:   pl.layout,
		Command:  pl.command,
		Records:  len(msgs),
		Warnings: len(msgs),
	})
	return true
}

func (o *opener) add(in model.Input) {
	o.snap.Inputs = append(o.snap.Inputs, in)
	if o.opts != nil && o.opts.Progress != nil {
		o.opts.Progress(in)
	}
}

func (o *opener) skip(name, why string, pl placement) {
	o.add(model.Input{Path: name, Skipped: why, Node: pl.node, Layout: pl.layout, Command: pl.command})
}

// blankLines returns r with the lines blank reports replaced by empty
// lines, so parsers never see a collector's banners and line numbers stay
// those of the file.
func blankLines(r io.Reader, blank func(string) bool) io.Reader {
	return &blanker{br: bufio.NewReaderSize(r, 64<<10), blank: blank}
}

type blanker struct {
	br      *bufio.Reader
	blank   func(string) bool
	pending []byte
	err     error
}

func (b *blanker) Read(p []byte) (int, error) {
	for len(b.pending) == 0 {
		if b.err != nil {
			return 0, b.err
		}
		line, err := b.br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			// an over-long line is passed through as it is
			b.pending = append(b.pending[:0], line...)
			break
		}
		b.err = err
		text := strings.TrimRight(string(line), "\r\n")
		if len(line) > 0 && b.blank(text) {
			line = line[len(text):]
		}
		b.pending = append(b.pending[:0], line...)
	}
	n := copy(p, b.pending)
	b.pending = b.pending[n:]
	return n, nil
}

// maxTrailerCheck is how much of a compressed file a parser left unread
// is still read, to reach the end of the stream and check its trailer.
const maxTrailerCheck = 1 << 20

// trailerErr reads what the parser left of a compressed file (a parser
// may stop at the end of a document), up to maxTrailerCheck, so that the
// decompressor reaches the end of the stream and checks its trailer (the
// CRC and size of gzip), and returns the error that ended the read: nil
// when there is none to tell (not compressed, cut by a limit, the stream
// whole). addTrailerErr makes a corrupt trailer a warning naming the
// file, unless the parser reported it already.
func (o *opener) trailerErr(r io.Reader, bound *boundReader) error {
	if bound == nil || bound.in == nil || bound.err != nil || o.ctx.Err() != nil {
		return nil // nothing to check, or no time to
	}
	_, err := io.CopyN(io.Discard, r, maxTrailerCheck)
	if err == nil || err == io.EOF || errors.Is(err, ErrLimit) || o.ctx.Err() != nil {
		return nil
	}
	return err
}

// addTrailerErr adds err, which trailerErr returned for the file name, to
// list, unless it is nil or list tells it already.
func addTrailerErr(name string, err error, list *model.ErrorList) {
	if err == nil || errors.Is(list.Err(), err) {
		return
	}
	for _, e := range *list {
		if strings.Contains(e.Error(), err.Error()) {
			return
		}
	}
	list.Add(model.Pos{File: name}, "", fmt.Errorf("%w: the compressed file is corrupt (its trailer does not match what was read)", err))
}
