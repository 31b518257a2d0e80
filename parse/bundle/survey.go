package bundle

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/internal/text"
)

// Survey is what a directory holds, as bundles: whether it is one bundle by
// its own layout, and which of its entries are bundles of their own. Open
// reads a directory whole either way; Survey is for a caller that must
// decide whether a directory is one bundle or a directory of bundles
// (`netmortem batch DIR`).
type Survey struct {
	// Layout is the layout the directory itself has (LayoutSOSReport,
	// LayoutTroubleshoot ...), "" when it has none: a directory with a
	// layout is one bundle, whatever it holds.
	Layout string
	// Bundles are the entries of the directory that are bundles of their
	// own, in name order.
	Bundles []SurveyEntry
	// Loose are the other entries that hold evidence: files a format
	// recognizes (compressed or not), and directories holding such files
	// but no bundle (a node's files in a directory named after it), in
	// name order.
	Loose []SurveyEntry
}

// SurveyEntry is one entry of a surveyed directory.
type SurveyEntry struct {
	// Path is the directory's path joined with the entry's name.
	Path string
	// Dir is set for a directory.
	Dir bool
	// Kind says why the entry is a bundle: "archive" (a tar or zip,
	// compressed or not), a layout name for a directory whose root has
	// that layout, or "holds" for a directory holding bundles deeper (a
	// ticket's folder with its archive). It is "" for loose entries.
	Kind string
	// Cluster and Host say, for a loose entry, which evidence it holds:
	// Cluster the cluster's (Kubernetes objects, in-cluster DNS checks),
	// Host a host's (captures, command dumps of a node: rules, sockets,
	// addresses, kernel parameters ...). Logs, sessions and deployment
	// settings are neither. A folder holding both is a whole incident's
	// evidence (a ticket's attachments); one holding only a host's is a
	// node's folder of a bundle.
	Cluster, Host bool
}

// Kinds of SurveyEntry that are no layout.
const (
	SurveyArchive = "archive"
	SurveyHolds   = "holds"
)

// surveyDepth is how deep the first look at a directory indexes it: every
// layout is recognized from its root's entries and those one level below.
const surveyDepth = 2

// SurveyDir surveys the directory dir (see Survey), sniffing files with
// opts.Formats (parse.Formats() for every format). Entries whose names
// start with a dot (settings, a .git directory), macOS resource forks,
// symbolic links (never followed by Open inside a directory) and other
// special files are not counted. Only heads of files are read: a
// directory's layout is told by its paths and small layout files, an
// archive by its first bytes, a file's evidence by its sniffed head. A
// folder holding a tar or zip anywhere below is a bundle's folder, even
// when the archive is only part of a node's files: batch says so, and
// --as-one merges.
func SurveyDir(ctx context.Context, dir string, opts *Options) (*Survey, error) {
	o := newOpener(ctx, opts)
	// A directory given as a link is surveyed where it points, as Open
	// reads it; links inside it are not followed.
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, err
	}
	ix, err := indexDir(ctx, root, surveyDepth)
	if err != nil {
		return nil, err
	}
	if l := detectAt(ix, "", dir); l != nil {
		return &Survey{Layout: l.kind}, nil
	}
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	s := &Survey{}
	for _, de := range ents {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		name := de.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		e := SurveyEntry{Path: filepath.Join(dir, name), Dir: de.IsDir()}
		evidence := false
		switch {
		case de.IsDir():
			e.Kind, evidence = o.surveySubdir(&e)
		case de.Type().IsRegular():
			archive, ev, kind := o.sniffPath(e.Path, true)
			if archive {
				e.Kind = SurveyArchive
			}
			evidence = ev
			e.Cluster, e.Host = clusterKind(kind), hostKind(kind)
		default:
			continue
		}
		switch {
		case e.Kind != "":
			s.Bundles = append(s.Bundles, e)
		case evidence:
			s.Loose = append(s.Loose, e)
		}
	}
	if oneMustGather(ix, s) {
		// oc adm must-gather writes one directory per image it ran,
		// beside the run's timestamp: one cluster's collection.
		return &Survey{Layout: LayoutMustGather}, ctx.Err()
	}
	return s, ctx.Err()
}

// oneMustGather reports whether the bundles of a survey are the image
// directories of one must-gather run: all must-gather, with the run's
// timestamp file beside them.
func oneMustGather(ix *index, s *Survey) bool {
	if k, ok := ix.kinds["timestamp"]; len(s.Bundles) < 2 || !ok || k != entFile {
		return false
	}
	for _, b := range s.Bundles {
		if b.Kind != LayoutMustGather {
			return false
		}
	}
	return true
}

// surveySubdir says whether the directory e.Path is a bundle (its kind: a
// layout at its root, or "holds" for bundles deeper) or else whether it
// holds evidence, and which (e.Cluster, e.Host).
func (o *opener) surveySubdir(se *SurveyEntry) (kind string, evidence bool) {
	p := se.Path
	ix, err := indexDir(o.ctx, p, surveyDepth)
	if err != nil {
		return "", false
	}
	if l := detectAt(ix, "", p); l != nil {
		return l.kind, true
	}
	if ix, err = indexDir(o.ctx, p, 0); err != nil {
		return "", false
	}
	if len(detectLayouts(ix, p, placement{}).list) > 0 {
		return SurveyHolds, true
	}
	// No layout: an archive anywhere below makes it a bundle's folder;
	// else it is loose files, evidence when one of them is.
	err = dirTree{root: p}.walk(o.ctx, func(e *entry) error {
		if e.kind != entFile || e.bad != nil || strings.HasPrefix(filepath.Base(e.name), ".") {
			return nil
		}
		archive, ev, k := o.sniffPath(filepath.Join(p, filepath.FromSlash(e.name)), !se.Cluster || !se.Host)
		if archive {
			kind = SurveyHolds
			return filepath.SkipAll
		}
		evidence = evidence || ev
		se.Cluster = se.Cluster || clusterKind(k)
		se.Host = se.Host || hostKind(k)
		return nil
	})
	if err != nil || kind != "" {
		se.Cluster, se.Host = false, false
	}
	if err != nil {
		return "", false
	}
	return kind, evidence || kind != ""
}

// clusterKind reports whether evidence of kind k is the cluster's: one
// copy per incident, whichever node it was taken from.
func clusterKind(k model.Kind) bool { return k == model.KindKube || k == model.KindDNS }

// hostKind reports whether evidence of kind k is a host's: a node's
// packets, rules, sockets, addresses, kernel state or processes. Logs, a
// pasted session (which may hold any command) and deployment settings are
// neither the cluster's nor a host's.
func hostKind(k model.Kind) bool {
	switch k {
	case "", model.KindKube, model.KindDNS, model.KindLogs, model.KindSession, model.KindSettings:
		return false
	}
	return true
}

// indexDir indexes the tree at root as the first pass of Open does (paths,
// and the small files that tell a layout), down to depth levels below the
// root (0: all of it).
func indexDir(ctx context.Context, root string, depth int) (*index, error) {
	ix := newIndex()
	err := dirTree{root: root}.walk(ctx, func(e *entry) error {
		ix.add(e)
		if e.kind == entDir && depth > 0 && strings.Count(e.name, "/")+1 >= depth {
			return filepath.SkipDir
		}
		if e.kind == entFile && e.bad == nil && wantContent(e.name) && e.size <= maxLayoutFileBytes &&
			ix.bytes+e.size <= maxLayoutIndexBytes {
			rc, err := e.open()
			if err != nil {
				return nil
			}
			b, _ := io.ReadAll(io.LimitReader(ctxReader{ctx, rc}, maxLayoutFileBytes))
			rc.Close()
			ix.files[e.name] = b
			ix.bytes += int64(len(b))
		}
		return nil
	})
	if err != nil && err != fs.SkipAll {
		return nil, err
	}
	return ix, nil
}

// sniffPath reads the head of the file p (decompressed when it is
// compressed) and says whether it is an archive, or else, when sniff is
// set, whether a format recognizes it, and the kind of evidence it holds
// for that format. A file that cannot be read is neither.
func (o *opener) sniffPath(p string, sniff bool) (archive, evidence bool, kind model.Kind) {
	base := filepath.Base(p)
	if strings.HasPrefix(base, "._") || base == ".DS_Store" {
		return false, false, ""
	}
	f, err := os.Open(p)
	if err != nil {
		return false, false, ""
	}
	defer f.Close()
	br := bufio.NewReaderSize(ctxReader{o.ctx, f}, text.HeadSize)
	head, _ := br.Peek(text.HeadSize)
	if len(head) == 0 {
		return false, false, ""
	}
	magic := bytes.Clone(head[:min(len(head), magicSize)])
	c := compressionOf(magic)
	if c == noCompression {
		if isTar(magic) || isZip(magic) {
			return true, true, ""
		}
		return o.recognized(p, br, sniff)
	}
	zr, err := decompress(c, br, o.bud, o.bud.lim.MaxFileBytes, magic)
	if err != nil {
		return false, true, "" // a compressed file Open will warn about
	}
	zbr := bufio.NewReaderSize(zr, text.HeadSize)
	if dhead, _ := zbr.Peek(text.HeadSize); isTar(dhead) {
		return true, true, ""
	}
	return o.recognized(p, zbr, sniff)
}

// recognized reports, when sniff is set, whether a format recognizes the
// text br starts, and its kind of evidence.
func (o *opener) recognized(name string, br *bufio.Reader, sniff bool) (archive, evidence bool, kind model.Kind) {
	if !sniff {
		return false, false, ""
	}
	r, _ := text.Decode(br)
	head, _ := r.Peek(text.HeadSize)
	if len(head) == 0 {
		return false, false, ""
	}
	if f := o.sniffFor(name, head, ""); f != nil {
		return false, true, f.Kind
	}
	return false, false, ""
}
