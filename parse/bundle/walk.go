package bundle

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/internal/text"
)

// input is a file on its way through Open: found by the walk (on disk, in
// an archive, or inside a compressed file) and placed by the layout, it is
// decompressed and either walked as an archive or sniffed and parsed.
type input struct {
	name string // in positions: the path, or archive!member
	r    io.Reader
	// ra, when set, reads the file in place (a file on disk): an archive
	// is walked from it rather than copied first.
	ra    io.ReaderAt
	size  int64
	pl    placement
	depth int // archives around the file
	// scale is how many times larger than the bytes on disk that made
	// it the file already is (see boundReader.scale).
	scale float64
	// bound, when set, bounds r itself (stdin): its limit error is
	// reported on the file when r is read as it is.
	bound *boundReader
}

// openErr says that p could not be opened: err as it is when it names p
// already ("stat /x: no such file or directory"), wrapped otherwise.
func openErr(p string, err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) && pe.Path == p {
		return err
	}
	return fmt.Errorf("open %s: %w", p, err)
}

// open is the first stage of Open for one path: a directory is walked as a
// tree, a file read as an input.
func (o *opener) open(p string) error {
	if p == "-" && o.opts != nil && o.opts.Stdin != nil {
		// Not on disk: bounded as an archive member is, and made
		// random-access (spilled) only if it is an archive.
		br := &boundReader{r: o.opts.Stdin, max: o.bud.lim.MaxFileBytes, b: o.bud, what: "stdin"}
		o.file(input{name: StdinName, r: br, pl: placement{node: o.node, direct: true}, bound: br})
		if br.err != nil && !slices.ContainsFunc(o.warns, func(e *model.Error) bool { return errors.Is(e.Err, ErrLimit) }) {
			// Cut short inside a decompressor or an archive, whose
			// readers do not report it.
			o.warns.Add(model.Pos{File: StdinName}, "", br.err)
		}
		return o.stopErr()
	}
	fi, err := os.Stat(p)
	if err != nil {
		return openErr(p, err)
	}
	base := placement{node: o.node}
	if fi.IsDir() {
		root := p
		if li, err := os.Lstat(p); err == nil && li.Mode()&fs.ModeSymlink != 0 {
			// A bundle given as a link to a directory is read there;
			// links inside the bundle are still never followed.
			if root, err = filepath.EvalSymlinks(p); err != nil {
				return fmt.Errorf("open %s: %w", p, err)
			}
		}
		if err := o.tree(dirTree{root: root}, p, filepath.Separator, base, 0); err != nil {
			if model.IsStopped(err) {
				return fmt.Errorf("open %s: %w", p, err)
			}
			var pe *os.PathError
			if errors.As(err, &pe) && (pe.Path == p || pe.Path == root) {
				return fmt.Errorf("open %s: %w", p, err)
			}
			o.warns.Add(model.Pos{File: p}, "", err)
		}
		return o.stopErr()
	}
	f, err := os.Open(p)
	if err != nil {
		return openErr(p, err)
	}
	defer f.Close()
	// Read as a stream: a file of the proc or sys file systems says it
	// is empty.
	return o.readerAt(p, f, f, fi.Size())
}

// readerAt reads a file of size bytes, named name, that r reads from its
// start and ra reads in place (a file on disk, an object in a bucket): an
// archive is walked from ra rather than copied first.
func (o *opener) readerAt(name string, r io.Reader, ra io.ReaderAt, size int64) error {
	o.file(input{name: name, r: r, ra: ra, size: size, pl: placement{node: o.node, direct: true}})
	return o.stopErr()
}

// archive walks an archive tree, reporting a failure to read it (a corrupt
// archive, a limit) as a warning on the archive.
func (o *opener) archive(t tree, name string, base placement, depth int) {
	if err := o.tree(t, name, '!', base, depth); err != nil && o.ctx.Err() == nil {
		o.warns.Add(model.Pos{File: name}, "", fmt.Errorf("archive not read to its end: %w", err))
	}
}

// tree reads a tree in two passes: the first indexes its paths and the
// small files that reveal its layout, the second places every file (the
// node and command the layout gives it) and reads it. sep joins the tree's
// name and a member's path: the OS separator for a directory, "!" for an
// archive.
func (o *opener) tree(t tree, name string, sep rune, base placement, depth int) error {
	ix := newIndex()
	// The first pass is bounded like the second but not charged to the
	// bundle's total: the same bytes are counted once, when parsed.
	charged, entries := o.bud.total, o.bud.entries
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
	o.bud.total, o.bud.entries = charged, entries
	memberName := func(n string) string {
		if sep == '!' {
			return name + "!" + n
		}
		return filepath.Join(name, filepath.FromSlash(n))
	}
	if err != nil && o.ctx.Err() != nil {
		// Cut short while indexing: the files found so far, or else the
		// tree itself, are named as not read; and the tree is said to
		// be cut, for the files the index did not reach.
		o.cutShort(ix, nil, memberName, func(string) placement { return base })
		if len(ix.kinds) == 0 {
			o.skip(treeName(name, sep), model.SkippedCutShort, base)
		} else {
			o.warns = append(o.warns, model.Stopped(model.Pos{File: name}, o.ctx.Err()))
		}
		return err
	}
	if err != nil && len(ix.kinds) == 0 {
		return err
	}
	// A tree that failed midway is still read as far as it goes: the
	// second pass meets the same error at the same place.
	base.direct = false
	base.command = ""
	base.errorsFile = false
	base.blank = nil
	ls := detectLayouts(ix, name, base)
	if sep != '!' && o.settingAside() {
		o.series.countStems(ix, memberName)
	}
	podLinks := map[string]int{}
	visited := map[string]bool{}
	err = t.walk(o.ctx, func(e *entry) error {
		visited[e.name] = true
		if root, target, ok := podLogLink(ix, e); ok {
			// kubelet's /var/log/containers links of a node's copy:
			// the file they name is read where it lies in the bundle.
			podLinks[root]++
			o.skip(memberName(e.name), "link to "+target+", read there", ls.place(e.name))
			return nil
		}
		o.member(e, memberName(e.name), ls.place(e.name), depth)
		return nil
	})
	for _, root := range slices.Sorted(maps.Keys(podLinks)) {
		o.warns.Add(model.Pos{File: memberName(root + containerLogDir)}, "",
			fmt.Errorf("%d links under %s to files of %s read there", podLinks[root], containerLogDir, podLogDir))
	}
	if o.ctx.Err() != nil {
		// Cut short: the files the first pass found and the second did
		// not reach are named, not left out unsaid.
		o.cutShort(ix, visited, memberName, ls.place)
	}
	return err
}

// treeName is how a tree named name, whose members sep joins to it, is
// listed as an input: a directory with a separator at its end
// (model.IsDirPath).
func treeName(name string, sep rune) string {
	if sep == '!' || model.IsDirPath(name) {
		return name
	}
	return name + string(filepath.Separator)
}

// cutShort names the files of ix not visited as not read, the run cut
// short before them, by their names as member gives them and placed as
// place says.
func (o *opener) cutShort(ix *index, visited map[string]bool, member func(string) string, place func(string) placement) {
	for _, n := range slices.Sorted(maps.Keys(ix.kinds)) {
		if ix.kinds[n] == entFile && !visited[n] {
			o.skip(member(n), model.SkippedCutShort, place(n))
		}
	}
}

// containerLogDir holds kubelet's links to the Pods' log files, which lie
// under podLogDir: /var/log/containers/NAME.log -> /var/log/pods/...
const (
	containerLogDir = "var/log/containers"
	podLogDir       = "var/log/pods"
)

// podLogLink reports whether e is a link under a var/log/containers
// directory of the tree whose absolute target, taken relative to the root
// that directory is in (a node's copy of its file system), is a regular
// file of the tree under var/log/pods. It returns that root ("" or
// "sosreport-node1/") and the target's member name. The link itself is
// never followed: the target is read as the tree's own file.
func podLogLink(ix *index, e *entry) (root, target string, ok bool) {
	if e.kind != entSymlink || e.bad != nil || !strings.HasPrefix(e.link, "/") {
		return "", "", false
	}
	i := strings.Index("/"+e.name, "/"+containerLogDir+"/")
	if i < 0 {
		return "", "", false
	}
	root = e.name[:i]
	target = root + strings.TrimPrefix(path.Clean(e.link), "/")
	if k, found := ix.kinds[target]; !found || k != entFile || !strings.HasPrefix(target, root+podLogDir+"/") {
		return "", "", false
	}
	return root, target, true
}

// member reads one entry of a tree in the second pass, placed at pl.
func (o *opener) member(e *entry, name string, pl placement, depth int) {
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
			o.skip(name, err.Error(), pl)
			return
		}
		o.skip(name, "link to "+target+", read there", pl)
		return
	case entOther:
		o.skip(name, "not a regular file", pl)
		return
	}
	if strings.HasPrefix(base, "._") || base == ".DS_Store" {
		return // macOS resource forks and folder settings
	}
	rc, err := e.open()
	if err != nil {
		o.warns.Add(model.Pos{File: name}, "", err)
		o.skip(name, err.Error(), pl)
		return
	}
	defer rc.Close()
	var r io.Reader = rc
	scale := max(e.scale, 1)
	if e.inflated {
		// zip members are decompressed by archive/zip, sparse tar
		// members' holes filled by archive/tar: bound them here
		br := &boundReader{r: rc, max: o.bud.lim.MaxFileBytes, b: o.bud, scale: scale}
		if e.packed > 0 {
			br.in = &countReader{n: e.packed}
			if e.size > e.packed {
				scale *= float64(e.size) / float64(e.packed)
			}
		}
		r = br
	}
	if depth > 0 && e.size > o.bud.lim.MaxFileBytes {
		err := limitErr("member is %s, above %s (Limits.MaxFileBytes); not read", human(e.size), human(o.bud.lim.MaxFileBytes))
		o.warns.Add(model.Pos{File: name}, "", err)
		o.skip(name, err.Error(), pl)
		return
	}
	o.file(input{name: name, r: r, pl: pl, depth: depth, scale: scale})
}

// file reads one input: a compressed file is decompressed, an archive is
// walked (a nested tree), anything else goes to dispatch to be sniffed and
// parsed.
func (o *opener) file(in input) {
	if _, in.pl.disk = in.r.(*os.File); in.pl.disk {
		defer o.met(in.name, in.pl)
	}
	stop := &stopReader{ctx: o.ctx, r: in.r}
	br := bufio.NewReaderSize(stop, text.HeadSize)
	head, herr := br.Peek(text.HeadSize)
	switch {
	case stop.stopped && compressionOf(head) == noCompression:
		// Stopped in its head, the file cannot be told: its format
		// would be judged on part of what it is judged on. (A
		// compressed file is told from the head of what it holds.)
		o.skip(in.name, model.SkippedCutShort, in.pl)
		return
	case len(head) == 0:
		o.skip(in.name, emptyWhy(herr), in.pl)
		return
	}
	defer o.noteStopped(in.name, stop, len(o.warns))
	// head aliases br's buffer, which the next reads overwrite: what is
	// judged after them (archive and compression magic, an xz header)
	// is judged on a copy.
	magic := bytes.Clone(head[:min(len(head), magicSize)])
	c := compressionOf(magic)
	if c == noCompression {
		if isTar(magic) || isZip(magic) {
			o.nested(in, c, br, magic)
			return
		}
		o.decoded(in.name, br, in.pl, in.bound)
		return
	}
	tee := &switchTee{r: br, on: true}
	zr, err := decompress(c, tee, o.bud, o.bud.lim.MaxFileBytes, magic)
	if zr != nil {
		zr.scale = in.scale
	}
	if err != nil {
		o.warns.Add(model.Pos{File: in.name}, "", err)
		o.skip(in.name, "corrupt or refused "+c.String()+" stream", in.pl)
		return
	}
	zbr := bufio.NewReaderSize(zr, text.HeadSize)
	dhead, perr := zbr.Peek(text.HeadSize)
	if stop.stopped && len(dhead) < text.HeadSize {
		// Stopped in the head of what it holds: as above.
		o.skip(in.name, model.SkippedCutShort, in.pl)
		return
	}
	if isTar(dhead) {
		rest := io.MultiReader(&tee.buf, br)
		tee.on = false
		o.nested(in, c, rest, magic)
		return
	}
	tee.on = false
	tee.buf.Reset()
	if perr != nil && perr != io.EOF && perr != bufio.ErrBufferFull {
		err := fmt.Errorf("%s: %w: the file is corrupt or cut short", c, perr)
		if strings.HasPrefix(perr.Error(), c.String()+": ") {
			err = fmt.Errorf("%w: the file is corrupt or cut short", perr)
		}
		o.warns.Add(model.Pos{File: in.name}, "", err)
		if len(dhead) == 0 {
			o.skip(in.name, "corrupt "+c.String()+" stream", in.pl)
			return
		}
	}
	if len(dhead) == 0 {
		o.skip(in.name, emptyWhy(perr), in.pl)
		return
	}
	o.decoded(in.name, zbr, in.pl, zr)
}

// emptyFile is why a file of no byte is skipped.
const emptyFile = "empty file"

// emptyWhy returns why a file whose first read, which failed with err,
// gave no byte is skipped: it is empty, or the run was interrupted, or
// ran out of time, before its first byte was read (ctxReader), which
// is no reason to call it empty.
func emptyWhy(err error) string {
	if model.IsStopped(err) {
		return model.SkippedCutShort
	}
	return emptyFile
}

// magicSize is how much of a file's head is kept to judge it as an
// archive or a compressed stream (an xz block header included).
const magicSize = 4 << 10

// decoded hands a file that is neither compressed nor an archive to
// dispatch as UTF-8: a byte order mark is dropped and UTF-16 text
// transcoded.
func (o *opener) decoded(name string, br *bufio.Reader, pl placement, bound *boundReader) {
	r, _ := text.Decode(br)
	head, err := r.Peek(text.HeadSize)
	if len(head) == 0 {
		if err != nil && err != io.EOF && emptyWhy(err) == emptyFile {
			o.warns.Add(model.Pos{File: name}, "", err)
		}
		o.skip(name, emptyWhy(err), pl)
		return
	}
	o.dispatch(name, r, head, pl, bound)
}

// nested walks the archive in (a tar compressed as c, or a zip). A file on
// disk is walked in place; an archive found inside the bundle is made
// random-access first (in memory, or spilled to a temporary file), so it
// can be walked twice and a zip's central directory can be read. raw reads
// the archive from its start; head is its first bytes as stored.
func (o *opener) nested(in input, c compression, raw io.Reader, head []byte) {
	if in.depth+1 > o.bud.lim.MaxDepth {
		err := limitErr("archive nested deeper than %d (Limits.MaxDepth); not read", o.bud.lim.MaxDepth)
		o.warns.Add(model.Pos{File: in.name}, "", err)
		o.skip(in.name, err.Error(), in.pl)
		return
	}
	ra, size := in.ra, in.size
	if ra == nil {
		// Held in memory, the archive is charged to the memory budget
		// while it is walked: it is kept there only when it fits in a
		// quarter of what is left, so that its members can still be read.
		maxMem := min(o.bud.lim.MaxMemoryBuffer, max(o.bud.lim.MaxMemory-o.bud.mem, 0)/4)
		b, err := materialize(&boundReader{r: raw, max: o.bud.lim.MaxFileBytes, b: o.bud}, maxMem, o.tempDir)
		if err != nil && model.IsStopped(err) {
			o.skip(in.name, model.SkippedCutShort, in.pl) // nothing of it read
			return
		}
		if err != nil {
			o.warns.Add(model.Pos{File: in.name}, "", err)
			o.skip(in.name, "nested archive not read: "+err.Error(), in.pl)
			return
		}
		defer b.close()
		if b.file == nil {
			o.bud.mem += b.size
			defer func() { o.bud.mem -= b.size }()
		}
		ra, size = b.ra, b.size
	}
	var t tree
	if c == noCompression && isZip(head) {
		z, refused, err := newZipTree(ra, size, o.bud)
		if err != nil {
			o.warns.Add(model.Pos{File: in.name}, "", fmt.Errorf("archive not read to its end: %w", err))
			return
		}
		if refused != nil {
			o.warns.Add(model.Pos{File: in.name}, "", refused)
		}
		z.scale = in.scale
		t = z
	} else {
		t = tarTree{b: o.bud, open: func() (io.Reader, func() float64, error) {
			r := io.NewSectionReader(ra, 0, size)
			if c == noCompression {
				return ctxReader{o.ctx, r}, func() float64 { return max(in.scale, 1) }, nil
			}
			zr, err := decompress(c, r, o.bud, o.bud.lim.MaxTotalBytes, head)
			if err != nil {
				return nil, nil, err
			}
			zr.scale = in.scale
			return ctxReader{o.ctx, zr}, zr.ratio, nil
		}}
	}
	o.archive(t, in.name, in.pl, in.depth+1)
}

// blob is a nested archive made random-access: held in memory, or spilled
// to a temporary file.
type blob struct {
	ra   io.ReaderAt
	size int64
	file *os.File
}

func (b *blob) close() {
	if b.file != nil {
		name := b.file.Name()
		b.file.Close()
		os.Remove(name)
	}
}

// materialize reads r into a blob: in memory up to maxMem bytes, in a
// temporary file in dir beyond that. r is expected to be bounded already.
func materialize(r io.Reader, maxMem int64, dir string) (*blob, error) {
	var buf bytes.Buffer
	n, err := io.CopyN(&buf, r, maxMem+1)
	if err != nil && err != io.EOF {
		return nil, err
	}
	if n <= maxMem {
		return &blob{ra: bytes.NewReader(buf.Bytes()), size: n}, nil
	}
	f, err := os.CreateTemp(dir, "netmortem-nested-*")
	if err != nil {
		return nil, fmt.Errorf("spill nested archive: %w", err)
	}
	b := &blob{file: f}
	if _, err := f.Write(buf.Bytes()); err != nil {
		b.close()
		return nil, fmt.Errorf("spill nested archive: %w", err)
	}
	m, err := io.Copy(f, r)
	if err != nil {
		b.close()
		return nil, err
	}
	b.ra, b.size = f, n+m
	return b, nil
}

// ctxReader stops reading when ctx is done, so a parser working through a
// huge file honors the deadline.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// switchTee copies what is read through it into buf until stopped: it keeps
// the compressed bytes a sniffing decompressor consumed, so a compressed
// tar found inside an archive can be read again from its start.
type switchTee struct {
	r   io.Reader
	buf bytes.Buffer
	on  bool
}

func (t *switchTee) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if t.on && n > 0 {
		t.buf.Write(p[:n])
	}
	return n, err
}
