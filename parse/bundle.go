package parse

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"runtime/debug"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/internal/text"
)

// opener is one Open: it walks the bundle, recognizes its layout, and
// hands each file to the parser its content calls for.
type opener struct {
	ctx     context.Context
	opts    *Options
	node    string
	tempDir string
	formats []*Format
	bud     *budget
	snap    *model.Snapshot
	warns   model.ErrorList
}

func (o *opener) open(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return fmt.Errorf("open %s: %w", p, err)
	}
	base := placement{node: o.node}
	if fi.IsDir() {
		if err := o.walkTree(dirTree{root: p}, p, filepath.Separator, base, 0); err != nil {
			if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
				return fmt.Errorf("open %s: %w", p, err)
			}
			var pe *os.PathError
			if errors.As(err, &pe) && pe.Path == p {
				return fmt.Errorf("open %s: %w", p, err)
			}
			o.warns.Add(model.Pos{File: p}, "", err)
		}
		return o.ctx.Err()
	}
	f, err := os.Open(p)
	if err != nil {
		return fmt.Errorf("open %s: %w", p, err)
	}
	defer f.Close()
	base.direct = true
	head := make([]byte, text.HeadSize)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	if isZip(head) {
		o.walkArchive(zipTree{ra: f, size: fi.Size(), b: o.bud}, p, base, 1)
		return o.ctx.Err()
	}
	c := compressionOf(head)
	dhead := head
	if c != noCompression {
		if zr, err := decompress(c, io.NewSectionReader(f, 0, fi.Size()), o.bud, o.bud.lim.MaxFileBytes, head); err == nil {
			dhead = make([]byte, 512)
			m, _ := io.ReadFull(zr, dhead)
			dhead = dhead[:m]
		}
	}
	if isTar(dhead) {
		t := tarTree{b: o.bud, open: func() (io.Reader, func(), error) {
			r := io.Reader(io.NewSectionReader(f, 0, fi.Size()))
			if c == noCompression {
				return ctxReader{o.ctx, r}, func() {}, nil
			}
			zr, err := decompress(c, r, o.bud, o.bud.lim.MaxTotalBytes, head)
			if err != nil {
				return nil, nil, err
			}
			return ctxReader{o.ctx, zr}, func() {}, nil
		}}
		o.walkArchive(t, p, base, 1)
		return o.ctx.Err()
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("open %s: %w", p, err)
	}
	o.readFile(p, f, base, 0)
	return o.ctx.Err()
}

// walkArchive walks an archive tree, reporting a failure to read it (a
// corrupt archive, a limit) as a warning on the archive.
func (o *opener) walkArchive(t tree, name string, base placement, depth int) {
	if err := o.walkTree(t, name, '!', base, depth); err != nil && o.ctx.Err() == nil {
		o.warns.Add(model.Pos{File: name}, "", fmt.Errorf("archive not read to its end: %w", err))
	}
}

// walkTree reads a tree in two passes: the first indexes its paths and the
// small files that reveal its layout, the second reads every file with the
// node and command the layout gives it. sep joins the tree's name and a
// member's path: the OS separator for a directory, "!" for an archive.
func (o *opener) walkTree(t tree, name string, sep rune, base placement, depth int) error {
	ix := newIndex()
	// The first pass is bounded like the second but not charged to the
	// bundle's total: the same bytes are counted once, when parsed.
	charged := o.bud.total
	err := t.walk(o.ctx, func(e *entry) error {
		ix.add(e)
		if e.kind == entFile && e.bad == nil && wantContent(e.name) && e.size <= maxLayoutFileBytes &&
			ix.bytes+e.size <= maxLayoutIndexBytes {
			rc, err := e.open()
			if err != nil {
				return nil
			}
			b, _ := io.ReadAll(io.LimitReader(ctxReader{o.ctx, rc}, maxLayoutFileBytes))
			rc.Close()
			ix.files[e.name] = b
			ix.bytes += int64(len(b))
		}
		return nil
	})
	o.bud.total = charged
	if err != nil && (o.ctx.Err() != nil || len(ix.kinds) == 0) {
		return err
	}
	// A tree that failed midway is still read as far as it goes: the
	// second pass meets the same error at the same place.
	base.direct = false
	base.command = ""
	base.errorsFile = false
	base.blank = nil
	ls := detectLayouts(ix, name, base)
	member := func(n string) string {
		if sep == '!' {
			return name + "!" + n
		}
		return filepath.Join(name, filepath.FromSlash(n))
	}
	return t.walk(o.ctx, func(e *entry) error {
		o.entry(e, member(e.name), ls, depth)
		return nil
	})
}

// entry handles one tree entry in the second pass.
func (o *opener) entry(e *entry, name string, ls *layouts, depth int) {
	if e.bad != nil {
		o.warns.Add(model.Pos{File: name}, "", e.bad)
		o.skip(name, e.bad.Error(), placement{})
		return
	}
	base := path.Base(e.name)
	switch e.kind {
	case entDir:
		return
	case entSymlink, entHardlink:
		target, inside := linkTarget(e.name, e.link, e.kind == entHardlink)
		if !inside {
			err := fmt.Errorf("%w: link to %q refused", ErrUnsafePath, e.link)
			o.warns.Add(model.Pos{File: name}, "", err)
			o.skip(name, err.Error(), ls.place(e.name))
			return
		}
		o.skip(name, "link to "+target+", read there", ls.place(e.name))
		return
	case entOther:
		o.skip(name, "not a regular file", ls.place(e.name))
		return
	}
	if strings.HasPrefix(base, "._") || base == ".DS_Store" {
		return // macOS resource forks and folder settings
	}
	rc, err := e.open()
	if err != nil {
		o.warns.Add(model.Pos{File: name}, "", err)
		o.skip(name, err.Error(), ls.place(e.name))
		return
	}
	defer rc.Close()
	pl := ls.place(e.name)
	var r io.Reader = rc
	if e.inflated {
		// zip members are decompressed by archive/zip: bound them here
		r = &boundReader{r: rc, max: o.bud.lim.MaxFileBytes, b: o.bud}
	}
	if depth > 0 && e.size > o.bud.lim.MaxFileBytes {
		err := limitErr("member is %s, above %s (Limits.MaxFileBytes); not read", human(e.size), human(o.bud.lim.MaxFileBytes))
		o.warns.Add(model.Pos{File: name}, "", err)
		o.skip(name, err.Error(), pl)
		return
	}
	o.readFile(name, r, pl, depth)
}

// readFile reads one file: a compressed file is decompressed, an archive is
// walked (a nested tree), anything else is sniffed and parsed.
func (o *opener) readFile(name string, r io.Reader, pl placement, depth int) {
	br := bufio.NewReaderSize(ctxReader{o.ctx, r}, text.HeadSize)
	head, _ := br.Peek(text.HeadSize)
	if len(head) == 0 {
		o.skip(name, "empty file", pl)
		return
	}
	if c := compressionOf(head); c != noCompression {
		tee := &switchTee{r: br, on: true}
		zr, err := decompress(c, tee, o.bud, o.bud.lim.MaxFileBytes, head)
		if err != nil {
			o.warns.Add(model.Pos{File: name}, "", err)
			o.skip(name, "corrupt or refused "+c.String()+" stream", pl)
			return
		}
		zbr := bufio.NewReaderSize(zr, text.HeadSize)
		dhead, perr := zbr.Peek(text.HeadSize)
		if isTar(dhead) {
			rest := io.MultiReader(&tee.buf, br)
			tee.on = false
			o.nested(name, c, rest, head, pl, depth)
			return
		}
		tee.on = false
		tee.buf.Reset()
		if perr != nil && perr != io.EOF && perr != bufio.ErrBufferFull {
			o.warns.Add(model.Pos{File: name}, "", fmt.Errorf("%s: %w: the file is corrupt or cut short", c, perr))
			if len(dhead) == 0 {
				o.skip(name, "corrupt "+c.String()+" stream", pl)
				return
			}
		}
		if len(dhead) == 0 {
			o.skip(name, "empty file", pl)
			return
		}
		o.parse(name, zbr, dhead, pl, zr)
		return
	}
	if isTar(head) || isZip(head) {
		o.nested(name, noCompression, br, head, pl, depth)
		return
	}
	o.parse(name, br, head, pl, nil)
}

// nested reads an archive found inside the bundle. It is made random-access
// first (in memory, or spilled to a temporary file) so it can be walked
// twice, and so a zip's central directory can be read.
func (o *opener) nested(name string, c compression, raw io.Reader, head []byte, pl placement, depth int) {
	if depth+1 > o.bud.lim.MaxDepth {
		err := limitErr("archive nested deeper than %d (Limits.MaxDepth); not read", o.bud.lim.MaxDepth)
		o.warns.Add(model.Pos{File: name}, "", err)
		o.skip(name, err.Error(), pl)
		return
	}
	b, err := materialize(&boundReader{r: raw, max: o.bud.lim.MaxFileBytes, b: o.bud}, o.bud.lim.MaxMemoryBuffer, o.tempDir)
	if err != nil {
		o.warns.Add(model.Pos{File: name}, "", err)
		o.skip(name, "nested archive not read: "+err.Error(), pl)
		return
	}
	defer b.close()
	var t tree
	if c == noCompression && isZip(head) {
		t = zipTree{ra: b.ra, size: b.size, b: o.bud}
	} else {
		t = tarTree{b: o.bud, open: func() (io.Reader, func(), error) {
			if c == noCompression {
				return ctxReader{o.ctx, b.reader()}, func() {}, nil
			}
			zr, err := decompress(c, b.reader(), o.bud, o.bud.lim.MaxTotalBytes, head)
			if err != nil {
				return nil, nil, err
			}
			return ctxReader{o.ctx, zr}, func() {}, nil
		}}
	}
	o.walkArchive(t, name, pl, depth+1)
}

// sniffFor picks the format of a file. Content decides: only formats whose
// Sniff scores above zero are candidates. When the layout names the
// command that produced the file, a candidate whose Command runs the same
// program gets a bonus, so content that two formats could read goes the way
// the layout says.
func (o *opener) sniffFor(name string, head []byte, command string) *Format {
	var best *Format
	bestScore := 0
	prog := text.Program(command)
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

// parse sniffs and parses one (decompressed) file. bound, when set, is the
// decompressing reader whose limit errors are reported.
func (o *opener) parse(name string, r io.Reader, head []byte, pl placement, bound *boundReader) {
	if pl.errorsFile {
		if o.collectorErrors(name, r, pl) {
			return
		}
	}
	f := o.sniffFor(name, head, pl.command)
	if f == nil {
		if pl.direct {
			o.warns.Add(model.Pos{File: name}, "", ErrUnrecognized)
		}
		o.skip(name, "unrecognized content", pl)
		return
	}
	if pl.blank != nil {
		r = blankLines(r, pl.blank)
	}
	src := &Source{Name: name, Node: pl.node, Command: pl.command, Format: f.Name,
		SummarizeCaptures: o.opts != nil && o.opts.SummarizeCaptures}
	if o.opts != nil {
		src.FailedSample = o.opts.FailedSample
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
func (o *opener) runParser(f *Format, r io.Reader, src *Source) (n int, err error) {
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
