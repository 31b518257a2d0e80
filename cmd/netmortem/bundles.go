package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/netmortem/netmortem/internal/escape"
	"github.com/netmortem/netmortem/parse"
	"github.com/netmortem/netmortem/parse/bundle"
)

// A directory given to batch is one bundle or a directory of bundles; the
// rules (docs/scale.md, "A directory of bundles"):
//
//   - A directory with a bundle layout of its own (a sosreport, a
//     troubleshoot.sh bundle, one must-gather run of several images) is
//     one bundle, whatever it holds.
//   - A directory whose entries are bundles (archives, directories with a
//     layout, folders holding such) and nothing else that is evidence is a
//     directory of bundles: each entry is analyzed on its own, and batch
//     says so.
//   - A directory with one such entry is one bundle (a ticket's folder: the
//     archive and the files beside it); a folder that holds nothing but one
//     bundle folder is looked into.
//   - A directory without such entries (loose files, directories of a
//     node's files) is one bundle.
//   - A directory with several bundles and evidence beside them (node
//     collectors and a kubectl dump) could be one incident or several: it
//     is refused, and --as-one or naming the bundles decides.

// splitDir is what batch makes of one directory operand.
type splitDir struct {
	bundles []string
	// note is what batch says of the directory on stderr, "" for nothing.
	note string
}

// errMixed is a directory of bundles with evidence beside them.
type errMixed struct {
	dir            string
	bundles, loose []string
}

func (e *errMixed) Error() string {
	return fmt.Sprintf("%s holds %s (%s) and %s beside them (%s): they may be one incident's evidence (a "+
		"cluster's dump and its nodes' collectors) or several incidents; --as-one analyzes %s as one bundle, "+
		"and naming the bundles as operands analyzes each on its own",
		e.dir, count(len(e.bundles), "bundle"), names(e.dir, e.bundles), count(len(e.loose), "other input"), names(e.dir, e.loose), e.dir)
}

// names lists up to 3 paths by their names under dir.
func names(dir string, paths []string) string {
	var out []string
	for i, p := range paths {
		if i == 3 {
			out = append(out, fmt.Sprintf("and %d more", len(paths)-3))
			break
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			rel = p
		}
		out = append(out, rel)
	}
	return strings.Join(out, ", ")
}

// splitOperand says which bundles the batch operand p is: p itself, or,
// for a directory of bundles, each of them.
func splitOperand(ctx context.Context, p string) (splitDir, error) {
	one := splitDir{bundles: []string{p}}
	if st, err := os.Stat(p); err != nil || !st.IsDir() {
		return one, nil // a file; or unreadable, which its line says
	}
	s, err := bundle.SurveyDir(ctx, p, &parse.Options{Formats: parse.Formats()})
	if err != nil {
		return one, nil // reading it says why
	}
	var bundles, loose []string
	var loneHolder string
	for _, e := range s.Bundles {
		bundles = append(bundles, e.Path)
		if e.Kind == bundle.SurveyHolds {
			loneHolder = e.Path
		}
	}
	looseDirs := 0
	for _, e := range s.Loose {
		loose = append(loose, e.Path)
		if e.Dir {
			looseDirs++
		}
	}
	switch {
	case s.Layout != "":
		return one, nil
	case len(bundles) == 0 && looseDirs >= 2:
		one.note = fmt.Sprintf("%s: one bundle: it holds no archive and no bundle layout, only loose files, in %d directories "+
			"read as one bundle's; give %s to analyze each directory on its own", p, looseDirs, filepath.Join(p, "*"))
		return one, nil
	case len(bundles) == 0:
		return one, nil
	case len(bundles) == 1 && len(loose) == 0 && loneHolder != "":
		// A folder around one bundle folder: what counts is inside.
		return splitOperand(ctx, loneHolder)
	case len(bundles) == 1:
		return one, nil
	case len(loose) > 0:
		return one, &errMixed{dir: p, bundles: bundles, loose: loose}
	}
	return splitDir{bundles: bundles, note: fmt.Sprintf("%s: %d bundles, each analyzed on its own; --as-one to analyze %s as one bundle",
		p, len(bundles), p)}, nil
}

// splitOperands applies splitOperand to every operand of a batch, writing
// its notes on stderr unless quiet. The error is the first directory that
// cannot be split safely.
func splitOperands(ctx context.Context, operands []string, stderr io.Writer, quiet bool) ([]string, error) {
	var bundles []string
	for _, op := range operands {
		s, err := splitOperand(ctx, op)
		if err != nil {
			return nil, err
		}
		if s.note != "" && !quiet {
			escape.Fprintf(stderr, "netmortem batch: %s\n", s.note)
		}
		bundles = append(bundles, s.bundles...)
	}
	return bundles, nil
}

// noteMerged says on stderr, for analyze, which directory operands hold
// several bundles, which are then analyzed as one.
func noteMerged(ctx context.Context, operands []string, stderr io.Writer) {
	for _, op := range operands {
		s, err := splitOperand(ctx, op)
		held := s.bundles
		if mixed := (*errMixed)(nil); errors.As(err, &mixed) {
			held = mixed.bundles
		}
		if len(held) < 2 {
			continue
		}
		escape.Fprintf(stderr, "netmortem analyze: %s holds %d bundles (%s), analyzed here as one; "+
			"if they are not one incident's, netmortem batch analyzes each on its own\n", op, len(held), names(op, held))
	}
}
