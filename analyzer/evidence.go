package analyzer

import (
	"slices"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/model"
)

// Evidence is one piece of proof: a position, what is there, and which
// kind of evidence it is.
type Evidence struct {
	model.Pos `yaml:",inline"`
	// Note says what the position shows: "SYN", "SYN/ACK", "client RST",
	// "ip_local_port_range".
	Note string `json:"note,omitempty" yaml:"note,omitempty"`
	// Kind is the kind of evidence at Pos: KindCapture for a frame,
	// KindKube for an object. A rule leaves it empty: Run sets it from the
	// input Pos is in (see Kinds). A finding's Sources are the kinds of
	// its evidence.
	Kind model.Kind `json:"-" yaml:"-"`
}

// String formats e as "pos (note)".
func (e Evidence) String() string {
	if e.Note == "" {
		return e.Pos.String()
	}
	return e.Pos.String() + " (" + e.Note + ")"
}

// Kinds tells the kind of evidence at a position from the inputs of a
// snapshot: each input file was read as one format, which carries one kind
// (model.Input.Kind). A terminal session's commands are inputs of their
// own, listed at their prompt's line ("session.txt:12"): a position in the
// session is of the kind of the command whose output holds its line.
type Kinds struct {
	files    map[string]model.Kind
	sessions map[string][]sessionInput // by the session's file, by line
}

// sessionInput is one command's output in a terminal session: the line of
// its prompt, and the kind its format carries.
type sessionInput struct {
	line int
	kind model.Kind
}

// NewKinds indexes the inputs of snap (nil: none).
func NewKinds(snap *model.Snapshot) *Kinds {
	k := &Kinds{files: map[string]model.Kind{}, sessions: map[string][]sessionInput{}}
	if snap == nil {
		return k
	}
	for _, in := range snap.Inputs {
		if in.Skipped == "" && in.Kind != "" {
			k.files[in.Path] = in.Kind
		}
	}
	for _, in := range snap.Inputs {
		file, line, ok := cutLine(in.Path)
		if in.Skipped != "" || in.Kind == "" || !ok || k.files[file] != model.KindSession {
			continue
		}
		k.sessions[file] = append(k.sessions[file], sessionInput{line, in.Kind})
	}
	for _, l := range k.sessions {
		slices.SortStableFunc(l, func(a, b sessionInput) int { return a.line - b.line })
	}
	return k
}

// cutLine splits "file:LINE" into its file and line.
func cutLine(path string) (string, int, bool) {
	i := strings.LastIndexByte(path, ':')
	if i < 0 {
		return "", 0, false
	}
	n, err := strconv.Atoi(path[i+1:])
	if err != nil || n < 1 {
		return "", 0, false
	}
	return path[:i], n, true
}

// Of returns the kind of evidence at p: that of the input p.File names
// (in a terminal session, that of the command whose output holds p.Line);
// failing that, KindCapture for a frame, KindKube for an object without a
// file; else "", a position of no input known.
func (k *Kinds) Of(p model.Pos) model.Kind {
	if k != nil {
		if l := k.sessions[p.File]; len(l) > 0 {
			i, _ := slices.BinarySearchFunc(l, p.Line+1, func(s sessionInput, line int) int { return s.line - line })
			if i > 0 {
				return l[i-1].kind
			}
		}
		if kind, ok := k.files[p.File]; ok && kind != model.KindSession {
			return kind
		}
	}
	switch {
	case p.Frame > 0:
		return model.KindCapture
	case p.Object != "" && p.File == "":
		return model.KindKube
	}
	return ""
}

// Sources returns the sources Run gives a finding that cites ev: the kinds
// of its evidence, told from the pass's inputs where a piece does not say,
// sorted, once each.
func (p *Pass) Sources(ev []Evidence) []model.Kind {
	if p.kinds == nil {
		p.kinds = NewKinds(p.Snap)
	}
	out := make([]Evidence, len(ev))
	for i, e := range ev {
		if e.Kind == "" {
			e.Kind = p.kinds.Of(e.Pos)
		}
		out[i] = e
	}
	return sources(out)
}

// Joins reports whether ev joins two kinds of evidence at least, which a
// Proven cause needs: a rule that words a finding differently when its
// cause cannot be proven asks here, and Run downgrades a Proven finding
// whose evidence does not.
func (p *Pass) Joins(ev []Evidence) bool { return joins(p.Sources(ev)) }
