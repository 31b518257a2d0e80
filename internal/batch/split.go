package batch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

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
//   - A directory without such entries holds folders of loose files: a
//     folder holding the cluster's evidence (Kubernetes objects) is one
//     incident's view of its cluster; a folder holding only a host's
//     evidence (captures, rules, sockets of a node) is a node's folder.
//     Several folders of the cluster's evidence, with nothing beside them
//     but other folders, are several tickets: each folder with any
//     evidence is analyzed on its own (one incident has one cluster, so
//     the folders of a host's evidence beside them are tickets of their
//     own, not their nodes). One cluster's evidence (a folder of it, or
//     files beside the folders) with node folders is one bundle. Several
//     node folders without the cluster's evidence and without files beside
//     them, several folders of the cluster's evidence with evidence files
//     beside them, and a folder with both (a ticket's) beside node folders
//     could be one incident or several: refused, and --as-one or DIR/*
//     decides.
//   - A directory with several bundles and evidence beside them (node
//     collectors and a kubectl dump) could be one incident or several: it
//     is refused, and --as-one or naming the bundles decides.

// Split is what batch makes of one directory operand.
type Split struct {
	Bundles []string
	// Note is what batch says of the directory on stderr, "" for nothing.
	Note string
}

// MixedError is a directory of bundles with evidence beside them.
type MixedError struct {
	Dir            string
	Bundles, Loose []string
}

func (e *MixedError) Error() string {
	return fmt.Sprintf("%s holds %s (%s) and %s beside them (%s): they may be one incident's evidence (a "+
		"cluster's dump and its nodes' collectors) or several incidents; --as-one analyzes %s as one bundle, "+
		"and naming the bundles as operands analyzes each on its own",
		e.Dir, count(len(e.Bundles), "bundle"), Names(e.Dir, e.Bundles), count(len(e.Loose), "other input"), Names(e.Dir, e.Loose), e.Dir)
}

// Names lists up to 3 paths by their names under dir.
func Names(dir string, paths []string) string {
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

// SplitOperand says which bundles the batch operand p is: p itself, or,
// for a directory of bundles, each of them (see the rules above). A
// directory that may be one incident's or several incidents' is a
// *MixedError or an *AmbiguousError.
func SplitOperand(ctx context.Context, p string) (Split, error) {
	one := Split{Bundles: []string{p}}
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
	for _, e := range s.Loose {
		loose = append(loose, e.Path)
	}
	switch {
	case s.Layout != "":
		return one, nil
	case len(bundles) == 0:
		return splitLoose(p, s.Loose)
	case len(bundles) == 1 && len(loose) == 0 && loneHolder != "":
		// A folder around one bundle folder: what counts is inside.
		return SplitOperand(ctx, loneHolder)
	case len(bundles) == 1:
		return one, nil
	case len(loose) > 0:
		return one, &MixedError{Dir: p, Bundles: bundles, Loose: loose}
	}
	return Split{Bundles: bundles, Note: fmt.Sprintf("%s: %d bundles, each analyzed on its own; --as-one to analyze %s as one bundle",
		p, len(bundles), p)}, nil
}

// AmbiguousError is a directory of folders of loose files that may be one
// incident's (its nodes' folders) or several incidents' (tickets).
type AmbiguousError struct {
	Dir, Why string
}

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("%s: %s: they may be one incident's evidence or several incidents'; --as-one analyzes %s as one bundle, "+
		"and %s analyzes each entry on its own", e.Dir, e.Why, e.Dir, filepath.Join(e.Dir, "*"))
}

// splitLoose says which bundles the directory p is when it holds no bundle
// but loose evidence: files, and folders of them (see the rules above).
func splitLoose(p string, loose []bundle.SurveyEntry) (Split, error) {
	one := Split{Bundles: []string{p}}
	var cluster, host, tickets, others []string
	clusterBeside := false // the cluster's evidence in a file beside the folders
	for _, e := range loose {
		switch {
		case e.Dir && e.Cluster:
			cluster = append(cluster, e.Path)
			if e.Host {
				tickets = append(tickets, e.Path)
			}
			continue
		case e.Dir && e.Host:
			host = append(host, e.Path)
		case !e.Dir && e.Cluster:
			clusterBeside = true
		}
		others = append(others, e.Path)
	}
	files := len(others) - len(host)
	switch {
	case len(cluster) >= 2 && len(others) == 0:
		return Split{Bundles: cluster, Note: fmt.Sprintf("%s: %d folders, each with its own cluster's evidence (Kubernetes objects), "+
			"each analyzed on its own; --as-one to analyze %s as one bundle", p, len(cluster), p)}, nil
	case len(cluster) >= 2 && files == 0:
		folders := append(slices.Clone(cluster), host...)
		slices.Sort(folders)
		return Split{Bundles: folders, Note: fmt.Sprintf("%s: %d folders, %d with a cluster's evidence (Kubernetes objects) and %d "+
			"with a host's only, each analyzed on its own; --as-one to analyze %s as one bundle", p, len(folders), len(cluster), len(host), p)}, nil
	case len(cluster) >= 2:
		return one, &AmbiguousError{p, fmt.Sprintf("it holds %d folders with a cluster's evidence (%s) and %s beside them (%s)",
			len(cluster), Names(p, cluster), count(len(others), "other input"), Names(p, others))}
	case len(tickets) == 1 && len(host) > 0:
		return one, &AmbiguousError{p, fmt.Sprintf("it holds a folder with a cluster's and a host's evidence (%s) beside %s of a host's evidence only (%s)",
			Names(p, tickets), count(len(host), "folder"), Names(p, host))}
	case len(host) >= 2 && len(cluster) == 0 && !clusterBeside && files == 0:
		return one, &AmbiguousError{p, fmt.Sprintf("it holds %d folders of a host's evidence (%s) and no cluster's evidence (Kubernetes objects) "+
			"that would make them one incident's nodes", len(host), Names(p, host))}
	}
	return one, nil
}
