package track

import "github.com/netmortem/netmortem/model"

// Options set up a Tracker.
type Options struct {
	// Node is the node the packets were captured on, "" when unknown.
	Node string
	// Summary says whether attempts are summarized.
	Summary
	// EachAttempt, when set, is handed each attempt the Tracker keeps,
	// in the order Result.Attempts would list them (its stream's
	// creation order), as soon as the attempts before it are handed on,
	// rather than all of them being held in Result.Attempts, which stays
	// empty: memory then follows the live streams, not the capture. It is
	// called on the goroutine that calls Add, Feed or Finish.
	EachAttempt func(model.Attempt)
	// LendAttempts, with EachAttempt, lends each attempt rather than
	// giving it: the attempt, with what its slices and pointers hold
	// (segments, data sizes), is EachAttempt's only until it returns, and
	// the Tracker builds the next one in the same memory. A large
	// capture's attempts then make no garbage; an EachAttempt that keeps
	// an attempt copies what it holds.
	LendAttempts bool
	// EachRow, when set, is handed each attempt's row instead, as
	// EachAttempt would be handed the attempt (model.Attempt.Row): the
	// row is worked out from the stream without building the attempt,
	// or, when the attempt's times are not all nanoseconds since 1970 in
	// UTC (rowInto), holds it (model.Row.Attempt). The row, and the attempt it holds, are
	// EachRow's only until it returns (as with LendAttempts). EachAttempt
	// is not called when EachRow is set.
	EachRow func(*model.Row)
}

// Summary says whether a capture's attempts are summarized and how: the
// one setting of summary mode, which parse.Options, format.File and a
// Tracker's Options all carry.
type Summary struct {
	// Enabled folds attempts into per-server counters (Result.Endpoints)
	// instead of returning each of them, so that memory follows the live
	// connections, not the capture's size: established attempts that
	// ended normally (Zeek SF, S1, S2, S3) all, and refused and unanswered
	// ones (REJ, S0) beyond the first FailedSample to each server
	// endpoint, or beyond ten times that to each host, all its ports
	// together, which are kept one by one as evidence. The ports of a host
	// first tried once its sample is full (a scan) are counted per host (a
	// server port of 0, with the ports listed). Attempts an ICMP error
	// answers, attempts inside an overlay and every other outcome are
	// always kept; so many identical ICMP errors or ARP packets are kept
	// as failed attempts to one server, the next counted on the last kept.
	Enabled bool
	// FailedSample is how many refused, and how many unanswered, attempts
	// to one server endpoint are kept one by one: the package's
	// FailedSample when 0, none (but those an ICMP error answers) when
	// negative.
	FailedSample int
}

// sample returns how many failed attempts to one server a summarizing
// tracker keeps one by one.
func (s Summary) sample() int {
	switch {
	case s.FailedSample > 0:
		return s.FailedSample
	case s.FailedSample < 0:
		return 0
	}
	return FailedSample
}

// Result is what a capture yields.
type Result struct {
	Info     model.CaptureInfo
	Attempts []model.Attempt
	// Endpoints sums up, per server endpoint, the attempts folded when
	// Options.Summary.Enabled is set.
	Endpoints []model.EndpointStats
	ICMP      []model.ICMPEvent
	ARP       []model.ARPEvent
	// BadChecksums are the packets a text capture printed with a wrong
	// UDP checksum.
	BadChecksums []model.ChecksumError
}
