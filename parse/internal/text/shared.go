package text

import (
	"sync"
	"unsafe"
)

// A file's format is sniffed by trying every format on its head, and
// many of them read it the same way: split into lines (HeadLines), or,
// for the log formats, every line read by every log shape. ShareHead
// lets the formats tried on one head share that work while the caller
// tries them: HeadLines, and HeadValue for a package's own reading, work
// each out once for the head and hand the same result to every format.
//
// A head is shared from ShareHead until the function it returns is
// called, and must not change in between: it is known by where its
// bytes are and how many there are, not by its content. Outside that
// span every call works its result out anew.

// headID is a shared head: where its bytes are and how many.
type headID struct {
	p *byte
	n int
}

// sharedHead is what the formats tried on one head have worked out.
type sharedHead struct {
	refs int
	mu   sync.Mutex
	// lines are HeadLines' result for up to max lines; all says they are
	// every line of the head, whatever the max.
	lines []string
	max   int
	all   bool
	vals  map[any]any
}

var shared struct {
	mu    sync.Mutex
	heads map[headID]*sharedHead
}

func idOf(head []byte) (headID, bool) {
	if len(head) == 0 {
		return headID{}, false
	}
	return headID{unsafe.SliceData(head), len(head)}, true
}

// ShareHead shares what formats work out from head until the returned
// function is called. Calls for one head may nest.
func ShareHead(head []byte) (done func()) {
	id, ok := idOf(head)
	if !ok {
		return func() {}
	}
	shared.mu.Lock()
	if shared.heads == nil {
		shared.heads = map[headID]*sharedHead{}
	}
	sh := shared.heads[id]
	if sh == nil {
		sh = &sharedHead{}
		shared.heads[id] = sh
	}
	sh.refs++
	shared.mu.Unlock()
	return func() {
		shared.mu.Lock()
		if sh.refs--; sh.refs == 0 {
			delete(shared.heads, id)
		}
		shared.mu.Unlock()
	}
}

// sharedOf returns head's shared results, nil when it is not shared.
func sharedOf(head []byte) *sharedHead {
	id, ok := idOf(head)
	if !ok {
		return nil
	}
	shared.mu.Lock()
	defer shared.mu.Unlock()
	return shared.heads[id]
}

// HeadValue returns compute's result for head, worked out once while
// head is shared (ShareHead) and kept under key, a value of a type of the
// caller's own; when it is not shared, compute's result. The result is
// handed to every caller: it must not be changed.
func HeadValue[T any](head []byte, key any, compute func() T) T {
	sh := sharedOf(head)
	if sh == nil {
		return compute()
	}
	sh.mu.Lock()
	v, ok := sh.vals[key]
	sh.mu.Unlock()
	if ok {
		return v.(T)
	}
	// Worked out unlocked: compute may read the head's lines, or another
	// value. Two callers at once each work it out, and the first kept is
	// handed on: both are the same.
	r := compute()
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if v, ok := sh.vals[key]; ok {
		return v.(T)
	}
	if sh.vals == nil {
		sh.vals = map[any]any{}
	}
	sh.vals[key] = r
	return r
}

// headLines is HeadLines, sharing its lines while head is shared.
func headLines(head []byte, max int) []string {
	sh := sharedOf(head)
	if sh == nil {
		return splitHead(head, max)
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if !sh.all && max > sh.max {
		sh.lines = splitHead(head, max)
		sh.max, sh.all = max, len(sh.lines) < max
	}
	n := min(max, len(sh.lines))
	return sh.lines[:n:n]
}
