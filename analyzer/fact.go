package analyzer

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/netmortem/netmortem/model"
)

// A Fact is a value derived from a Snapshot that several rules need: the
// nodes' dataplanes, what each address is in the cluster, the NodePort
// range. It is computed once per Snapshot, on first use, and shared by
// every rule that lists it in Rule.Requires (go/analysis's
// Requires/ResultOf). Facts are declared as package-level variables:
//
//	var NodePortRange = &analyzer.Fact[PortRange]{Name: "nodeport-range", Doc: "...",
//		Compute: func(fs *analyzer.FactSet) PortRange { ... fs.Snapshot() ... }}
//
// and read with NodePortRange.Of(pass) in a rule, or NodePortRange.Get(facts)
// elsewhere (in another fact's Compute, in a test). The value is shared:
// whoever reads it must not modify it.
type Fact[T any] struct {
	// Name is the fact's kebab-case name, shown by netmortem rules.
	Name string
	// Doc says in a sentence what the fact holds and where it comes from.
	Doc string
	// Compute derives the value. It may read other facts through fs.
	Compute func(fs *FactSet) T
}

// FactKey is what Rule.Requires lists: a *Fact of any type.
type FactKey interface {
	// FactName returns the fact's Name.
	FactName() string
	// FactDoc returns the fact's Doc.
	FactDoc() string
	isNil() bool
}

// FactName returns f.Name.
func (f *Fact[T]) FactName() string { return f.Name }

// FactDoc returns f.Doc.
func (f *Fact[T]) FactDoc() string { return f.Doc }

func (f *Fact[T]) isNil() bool { return f == nil }

// FactSet holds the facts of one Snapshot, each computed at most once,
// whichever goroutine asks first; it is safe for concurrent use. (Facts,
// the plural, is kept for the key values of a Finding, and facts for the
// package of netmortem's own facts.)
type FactSet struct {
	store *factStore
	// chain is the facts being computed on the way to this view, to name a
	// fact that needs itself instead of waiting for itself forever.
	chain []FactKey
}

type factStore struct {
	snap  *model.Snapshot
	mu    sync.Mutex
	slots map[FactKey]*factSlot
}

// factSlot holds one fact's value; mu is held while it is computed, so
// that a second reader waits for the first computation.
type factSlot struct {
	mu       sync.Mutex
	done     bool
	value    any
	panicked any // what Compute panicked with, given again to every reader
}

// NewFactSet returns the facts of snap, none computed yet.
func NewFactSet(snap *model.Snapshot) *FactSet {
	return &FactSet{store: &factStore{snap: snap, slots: map[FactKey]*factSlot{}}}
}

// Snapshot returns the snapshot the facts are derived from.
func (fs *FactSet) Snapshot() *model.Snapshot { return fs.store.snap }

func (fs *FactSet) slot(k FactKey) *factSlot {
	fs.store.mu.Lock()
	defer fs.store.mu.Unlock()
	sl := fs.store.slots[k]
	if sl == nil {
		sl = &factSlot{}
		fs.store.slots[k] = sl
	}
	return sl
}

// FactError is what reading a fact panics with when the fact cannot be
// given: a rule that did not require it, a fact whose Compute needs itself,
// a Compute that panicked. The engine reports it as the rule's error.
type FactError struct {
	Fact string // the fact's name
	Msg  string
}

func (e *FactError) Error() string { return fmt.Sprintf("fact %s: %s", e.Fact, e.Msg) }

// Get returns the fact's value for the snapshot of fs, computing it on
// first use. It panics with a *FactError when f has no Compute, when
// computing f needs f itself, or when Compute panicked (every later Get
// panics the same way).
func (f *Fact[T]) Get(fs *FactSet) T {
	if fs == nil {
		panic(&FactError{Fact: f.Name, Msg: "no facts (nil *FactSet)"})
	}
	if slices.Contains(fs.chain, FactKey(f)) {
		var names []string
		for _, k := range fs.chain {
			names = append(names, k.FactName())
		}
		panic(&FactError{Fact: f.Name, Msg: "computing it needs itself: " + strings.Join(append(names, f.Name), " -> ")})
	}
	sl := fs.slot(f)
	sl.mu.Lock()
	defer sl.mu.Unlock()
	if !sl.done {
		sl.value, sl.panicked = f.compute(fs)
		sl.done = true
	}
	if sl.panicked != nil {
		if fe, ok := sl.panicked.(*FactError); ok {
			panic(fe)
		}
		panic(&FactError{Fact: f.Name, Msg: fmt.Sprintf("computing it panicked: %v", sl.panicked)})
	}
	v, _ := sl.value.(T) // a hand-made nil value stays the zero T
	return v
}

func (f *Fact[T]) compute(fs *FactSet) (v any, panicked any) {
	defer func() {
		if r := recover(); r != nil {
			panicked = r
		}
	}()
	if f.Compute == nil {
		return nil, &FactError{Fact: f.Name, Msg: "it has no Compute function"}
	}
	view := &FactSet{store: fs.store, chain: append(slices.Clip(fs.chain), FactKey(f))}
	return f.Compute(view), nil
}

// Set gives the fact a value made by hand for the snapshot of fs, in place
// of what Compute would derive: a test can hand a rule a fact its
// evidence does not show. It replaces a value already computed.
func (f *Fact[T]) Set(fs *FactSet, v T) {
	sl := fs.slot(f)
	sl.mu.Lock()
	defer sl.mu.Unlock()
	sl.value, sl.panicked, sl.done = v, nil, true
}

// Of returns the fact's value for the pass's snapshot. A rule reads facts
// only through Of, and only those it lists in Rule.Requires: reading another
// panics with a *FactError, which Run reports as the rule's error naming the
// fact.
func (f *Fact[T]) Of(p *Pass) T { return f.of(p, true) }

// of is Of; mark says whether a value that stands for what a cut lost
// marks every finding of the pass.
func (f *Fact[T]) of(p *Pass, mark bool) T {
	if p.Rule == nil || !slices.Contains(p.Rule.Requires, FactKey(f)) {
		name := "<nil>"
		if p.Rule != nil {
			name = p.Rule.Name
		}
		panic(&FactError{Fact: f.Name, Msg: fmt.Sprintf("rule %s reads it without listing it in Requires", name)})
	}
	v := f.Get(p.FactSet)
	if l, ok := any(v).(Lost); ok && mark {
		if why := l.LostReason(); why != "" {
			p.lose(f.Name + ": " + why)
		}
	}
	return v
}

// Partly returns the fact's value for the pass's snapshot, as Of does, for
// a rule only some of whose findings rest on it: a value that stands for
// what a cut lost (Lost) marks none of the pass's findings; the rule marks
// those that rest on it with RestsOn. A collision between two Services
// does not rest on the NodePort range; an ephemeral range reaching into
// it does.
func (f *Fact[T]) Partly(p *Pass) T { return f.of(p, false) }

// RestsOn records that the finding fd of the pass rests on the fact's
// value: when that value stands for what a cut lost (Lost), fd is not
// taken as proof, as the findings of a rule that read it with Of.
func (f *Fact[T]) RestsOn(p *Pass, fd *Finding) {
	if l, ok := any(f.of(p, false)).(Lost); ok {
		if why := l.LostReason(); why != "" && !slices.Contains(fd.lost, f.Name+": "+why) {
			fd.lost = append(fd.lost, f.Name+": "+why)
		}
	}
}

// Lost is implemented by a fact's value that can stand for what the
// bundle lost: a default taken because the input that would have given
// the bundle's own setting was cut. LostReason says so, "" when the value
// is the bundle's own. The findings of a rule that read such a value are
// not taken as proof (see RunFactSet).
type Lost interface {
	LostReason() string
}

// FactNames returns the names of the facts a rule requires, in order.
func (r *Rule) FactNames() []string {
	out := make([]string, 0, len(r.Requires))
	for _, k := range r.Requires {
		if k != nil && !k.isNil() {
			out = append(out, k.FactName())
		}
	}
	return out
}
