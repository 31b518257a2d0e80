package facts

import (
	"time"

	"github.com/netmortem/netmortem/model"
)

// ReplyDue is how long after a packet its answer is due: Linux's initial
// retransmission timeout of a SYN (1 s). A client that got no answer
// within it sends the SYN again; a capture that ends sooner shows neither.
const ReplyDue = time.Second

// NotYetDue reports whether the capture file, cut short (its own cut, or
// that of an archive it is in: model.Snapshot.CutOf), ends before an
// answer to a packet it holds at t was due: its last frame comes less
// than ReplyDue after t. What such a capture does not show after t is no
// sign that it did not happen. A whole capture, or a packet time not
// known, is never so.
func NotYetDue(s *model.Snapshot, file string, t time.Time) bool {
	if s == nil || t.IsZero() {
		return false
	}
	if _, cut := s.CutOf(file); !cut {
		return false
	}
	for _, c := range s.Captures {
		if c.File == file {
			return !c.Last.IsZero() && c.Last.Sub(t) < ReplyDue
		}
	}
	return false
}
