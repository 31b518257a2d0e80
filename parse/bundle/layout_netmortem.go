package bundle

import (
	"bytes"
	"path"
	"strings"

	"github.com/netmortem/netmortem/collect"
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
