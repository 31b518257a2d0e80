package report

import (
	"time"

	"github.com/netmortem/netmortem/model"
)

// Timeline is what happened over time behind one finding: the connection
// attempts to each server by outcome, which MAC claimed a VIP, the ICMP
// errors, a container's restarts against its probe window, kube-proxy's
// errors against the first stale DNAT. The HTML report draws it as a chart
// under the finding. Timelines are built from the model (package timeline)
// and are not part of the JSON or YAML report.
type Timeline struct {
	// Title says what the chart shows: "Connection attempts to
	// 10.96.0.10:443 by outcome".
	Title string
	// Start and End bound the time shown: the capture's or the logs' span.
	Start, End time.Time
	// Lanes are the rows of the chart, one per server, VIP, container or
	// log source, in the order drawn.
	Lanes []Lane
	// Spans are windows shaded across every lane: the probe window, the
	// time a rule set was stale.
	Spans []Span
	// Marks are instants drawn as a line across every lane: "first stale
	// DNAT", "kube-proxy restarted".
	Marks []Mark
}

// Lane is one row of a Timeline.
type Lane struct {
	// Name labels the row: "10.244.1.7:8080", "VIP 10.0.0.100", "container
	// web (pod shop/web-0)".
	Name string
	// Events are the instants on the row, in time order.
	Events []Event
	// Spans are the row's states over time, such as which MAC owned a VIP
	// from when to when.
	Spans []Span
}

// Event is one instant on a Lane.
type Event struct {
	Time time.Time
	// Kind classes the event for its colour and legend: one of the
	// Event* constants.
	Kind string
	// Label says what it is: "SYN/ACK answered by client RST", "ICMP
	// port-unreachable from 10.0.0.1", "restart 3 (exit 137)".
	Label string
	// Count is how many events this one stands for (1 when zero): a
	// capture read in summary mode folds repeats.
	Count int
	// End, when after Time, is the time of the last of the Count events
	// this one stands for: they happened from Time to End, such as the
	// attempts a capture read in summary mode only counted.
	End time.Time
	// Pos is the frame or line that shows it, for the evidence appendix.
	Pos model.Pos
}

// Span is a stretch of time on a Lane or across a Timeline.
type Span struct {
	Start, End time.Time
	// Kind classes the span for its colour: one of the Span* constants.
	Kind string
	// Label says what holds during it: "aa:bb:cc:00:00:01",
	// "liveness probe window (3 × 10 s)".
	Label string
	// Pos is the frame or line where the span begins, if one shows it.
	Pos model.Pos
}

// Mark is an instant drawn across a whole Timeline.
type Mark struct {
	Time  time.Time
	Label string
	Pos   model.Pos
}

// Event kinds. The HTML report gives each a colour and a legend entry.
const (
	EventEstablished = "established" // the handshake completed
	EventFailed      = "failed"      // an attempt that failed without a reset: unanswered, no ACK
	EventReset       = "reset"       // an attempt ended by a reset (refused, client or server RST)
	EventICMP        = "icmp"        // an ICMP or ICMPv6 error
	EventARP         = "arp"         // an ARP reply or neighbor advertisement claiming an address
	EventRestart     = "restart"     // a container restart or a process start
	EventError       = "error"       // an error logged
	EventInfo        = "info"        // anything else worth placing in time
)

// Span kinds.
const (
	SpanOwner  = "owner"  // who held an address (a Lane's states; Label names the owner)
	SpanWindow = "window" // a window that matters, such as a probe's failure window
	SpanStale  = "stale"  // a time during which state was out of date
)

// Quote is the text at one evidence position, for the HTML report's
// appendix: the line of a file, or a one-line decode of a frame.
type Quote struct {
	Pos  model.Pos
	Text string
}
