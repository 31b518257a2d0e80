package bundle

import (
	"bytes"
	"io"
	"path"
	"strings"

	"github.com/netmortem/netmortem/collect"
	"github.com/netmortem/netmortem/model"
)

// netmortemLayout reads the manifest of a bundle written by netmortem's
// collector script: the node it names owns the directory of that name,
// and each file's command is the one the manifest records for it. A
// manifest that cannot be read still marks the layout, with the node taken
// from the only directory beside it.
func netmortemLayout(ix *index, d string) *layout {
	l := newLayout(LayoutNetmortem, d)
	m, _ := collect.ReadManifest(collect.ManifestFile, bytes.NewReader(ix.files[join(d, collect.ManifestFile)]))
	l.manifest = m
	l.node = m.Node
	return l
}

// placeNetmortem places a file of a collected bundle: under the node's
// directory it is the node's, under the cluster directory it belongs to no
// node; its command is the manifest's.
func (l *layout) placeNetmortem(rel string) placement {
	pl := placement{}
	top, _, _ := strings.Cut(rel, "/")
	if l.node != "" && top == l.node {
		pl.node = l.node
	}
	if l.manifest != nil {
		pl.command, _ = l.manifest.Command(path.Clean(rel))
	}
	return pl
}

// collection reads the manifest name of a collected bundle into the
// snapshot's Collections: what the collector ran on its node and what it
// skipped. A manifest that does not parse is a warning at its line, and
// gives no Collection.
func (o *opener) collection(name string, r io.Reader) {
	m, err := collect.ReadManifest(name, r)
	if err != nil {
		o.warns.Append(err)
		return
	}
	c := model.Collection{Node: m.Node, ScriptVersion: m.ScriptVersion, Pos: model.Pos{File: name},
		Ran: []model.CollectedRun{}, Skipped: []model.CollectedSkip{}}
	for _, r := range m.Ran {
		c.Ran = append(c.Ran, model.CollectedRun{Name: r.Name, Status: r.Status, File: r.File})
	}
	for _, s := range m.Skipped {
		c.Skipped = append(c.Skipped, model.CollectedSkip{Name: s.Name, Why: s.Why})
	}
	o.snap.Collections = append(o.snap.Collections, c)
}
