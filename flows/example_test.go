package flows_test

import (
	"context"
	"fmt"
	"os"

	"github.com/netmortem/netmortem/flows"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse"
)

// The table of a capture too large to hold its attempts, fitted to 100
// columns, written from two reads of the capture: the first sizes the
// table (a Builder for the summary and endpoints, TableWidths for the
// columns), the second writes each attempt as it comes. Memory follows
// the connections open at once, not the capture's length.
func ExampleFittedWriter() {
	ctx, file := context.Background(), "../fixtures/captures/handshakes.pcap"
	f := flows.Filter{States: []string{"refused"}}
	b, m := flows.NewBuilder(f), flows.NewTableWidths()
	snap, _, err := parse.Open(ctx, file, &parse.Options{EachAttempt: func(a model.Attempt) {
		if b.Add(&a) {
			m.Add(&a)
		}
	}})
	if err != nil || !m.Fits() {
		fmt.Println("the table is to be built whole:", err)
		return
	}
	w := flows.NewFittedWriter(os.Stdout, b.Table(snap.Captures), f, m, 100)
	if _, _, err := parse.Open(ctx, file, &parse.Options{EachAttempt: func(a model.Attempt) { w.Write(&a) }}); err != nil {
		fmt.Println(err)
	}
	if err := w.Close(); err != nil {
		fmt.Println(err)
	}
	// Output:
	// Captures under ../fixtures/captures (paths below are relative to it)
	//
	// 1 capture, 70 packets, 11 TCP streams: 4 established, 2 refused, 4 unanswered, 1 SYN/ACK reset by
	// the client; 2 SYN retransmissions, 3 ICMP unreachable, 0 ICMP redirects, 0 ICMPv6 unreachable, 0
	// ICMPv6 redirects, 0 ARP (0 gratuitous)
	//
	// ┌────────────────┬──────────┬─────────┬─────────────┬─────────┬────────────┬───────┬──────────┐
	// │     SERVER     │ ATTEMPTS │ CLIENTS │ ESTABLISHED │ REFUSED │ UNANSWERED │ RESET │ SYN RETX │
	// ├────────────────┼──────────┼─────────┼─────────────┼─────────┼────────────┼───────┼──────────┤
	// │ 10.99.0.2:81   │ 1        │ 1       │ 0           │ 1       │ 0          │ 0     │ 0        │
	// │ [fd99::2]:8081 │ 1        │ 1       │ 0           │ 1       │ 0          │ 0     │ 0        │
	// └────────────────┴──────────┴─────────┴─────────────┴─────────┴────────────┴───────┴──────────┘
	// Not shown at this width: MEDIAN SYN/ACK MS (--width 0, -o csv or -o json show every column).
	//
	// where: the first frame of each attempt in handshakes.pcap
	// ┌───────┬─────────────────┬────────────────┬─────────┬───────┬─────────┬─────┬──────────┬─────────┐
	// │ where │     client      │     server     │ outcome │ state │ history │ syn │ syn_retx │ packets │
	// ├───────┼─────────────────┼────────────────┼─────────┼───────┼─────────┼─────┼──────────┼─────────┤
	// │ #37   │ 10.99.0.1:38360 │ 10.99.0.2:81   │ refused │ REJ   │ Sr      │ #37 │ 0        │ 2       │
	// │ #69   │ [fd99::1]:34296 │ [fd99::2]:8081 │ refused │ REJ   │ Sr      │ #69 │ 0        │ 2       │
	// └───────┴─────────────────┴────────────────┴─────────┴───────┴─────────┴─────┴──────────┴─────────┘
	// Not shown at this width: start, synack, rst, synack_ms, bytes_out, bytes_in (--width 0, -o csv or -o
	// json show every column).
}

// The same table from one read of the capture: the Builder and
// TableWidths size it, and a Spool keeps each attempt, in a temporary
// file, until the FittedWriter takes them. The read's memory is the
// same; the file grows by some 85 bytes an attempt.
func ExampleSpool() {
	ctx, file := context.Background(), "../fixtures/captures/handshakes.pcap"
	tmp, err := os.CreateTemp("", "flows-*")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	f := flows.Filter{States: []string{"refused"}}
	b, m, spool := flows.NewBuilder(f), flows.NewTableWidths(), flows.NewSpool(tmp)
	snap, _, err := parse.Open(ctx, file, &parse.Options{EachAttempt: func(a model.Attempt) {
		if b.Add(&a) {
			m.Add(&a)
			spool.Add(&a)
		}
	}})
	if err != nil || !m.Fits() {
		fmt.Println("the table is to be built whole:", err)
		return
	}
	w := flows.NewFittedWriter(os.Stdout, b.Table(snap.Captures), f, m, 100)
	if err := spool.Replay(ctx, w); err != nil {
		fmt.Println(err)
	}
	if err := w.Close(); err != nil {
		fmt.Println(err)
	}
	// Output:
	// Captures under ../fixtures/captures (paths below are relative to it)
	//
	// 1 capture, 70 packets, 11 TCP streams: 4 established, 2 refused, 4 unanswered, 1 SYN/ACK reset by
	// the client; 2 SYN retransmissions, 3 ICMP unreachable, 0 ICMP redirects, 0 ICMPv6 unreachable, 0
	// ICMPv6 redirects, 0 ARP (0 gratuitous)
	//
	// ┌────────────────┬──────────┬─────────┬─────────────┬─────────┬────────────┬───────┬──────────┐
	// │     SERVER     │ ATTEMPTS │ CLIENTS │ ESTABLISHED │ REFUSED │ UNANSWERED │ RESET │ SYN RETX │
	// ├────────────────┼──────────┼─────────┼─────────────┼─────────┼────────────┼───────┼──────────┤
	// │ 10.99.0.2:81   │ 1        │ 1       │ 0           │ 1       │ 0          │ 0     │ 0        │
	// │ [fd99::2]:8081 │ 1        │ 1       │ 0           │ 1       │ 0          │ 0     │ 0        │
	// └────────────────┴──────────┴─────────┴─────────────┴─────────┴────────────┴───────┴──────────┘
	// Not shown at this width: MEDIAN SYN/ACK MS (--width 0, -o csv or -o json show every column).
	//
	// where: the first frame of each attempt in handshakes.pcap
	// ┌───────┬─────────────────┬────────────────┬─────────┬───────┬─────────┬─────┬──────────┬─────────┐
	// │ where │     client      │     server     │ outcome │ state │ history │ syn │ syn_retx │ packets │
	// ├───────┼─────────────────┼────────────────┼─────────┼───────┼─────────┼─────┼──────────┼─────────┤
	// │ #37   │ 10.99.0.1:38360 │ 10.99.0.2:81   │ refused │ REJ   │ Sr      │ #37 │ 0        │ 2       │
	// │ #69   │ [fd99::1]:34296 │ [fd99::2]:8081 │ refused │ REJ   │ Sr      │ #69 │ 0        │ 2       │
	// └───────┴─────────────────┴────────────────┴─────────┴───────┴─────────┴─────┴──────────┴─────────┘
	// Not shown at this width: start, synack, rst, synack_ms, bytes_out, bytes_in (--width 0, -o csv or -o
	// json show every column).
}

// The same table from one read of the capture, each row formatted once:
// TableWidths keeps the rows it sizes, in a temporary file, and writes
// them through the FittedWriter. The file grows by some 130 bytes a row.
func ExampleTableWidths_Keep() {
	ctx, file := context.Background(), "../fixtures/captures/handshakes.pcap"
	tmp, err := os.CreateTemp("", "flows-*")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	f := flows.Filter{States: []string{"refused"}}
	b, m := flows.NewBuilder(f), flows.NewTableWidths()
	m.Keep(tmp)
	snap, _, err := parse.Open(ctx, file, &parse.Options{EachAttempt: func(a model.Attempt) {
		if b.Add(&a) {
			m.Add(&a)
		}
	}})
	if err != nil || !m.Fits() {
		fmt.Println("the table is to be built whole:", err)
		return
	}
	w := flows.NewFittedWriter(os.Stdout, b.Table(snap.Captures), f, m, 100)
	if err := m.WriteRows(ctx, w); err != nil {
		fmt.Println(err)
	}
	if err := w.Close(); err != nil {
		fmt.Println(err)
	}
	// Output:
	// Captures under ../fixtures/captures (paths below are relative to it)
	//
	// 1 capture, 70 packets, 11 TCP streams: 4 established, 2 refused, 4 unanswered, 1 SYN/ACK reset by
	// the client; 2 SYN retransmissions, 3 ICMP unreachable, 0 ICMP redirects, 0 ICMPv6 unreachable, 0
	// ICMPv6 redirects, 0 ARP (0 gratuitous)
	//
	// ┌────────────────┬──────────┬─────────┬─────────────┬─────────┬────────────┬───────┬──────────┐
	// │     SERVER     │ ATTEMPTS │ CLIENTS │ ESTABLISHED │ REFUSED │ UNANSWERED │ RESET │ SYN RETX │
	// ├────────────────┼──────────┼─────────┼─────────────┼─────────┼────────────┼───────┼──────────┤
	// │ 10.99.0.2:81   │ 1        │ 1       │ 0           │ 1       │ 0          │ 0     │ 0        │
	// │ [fd99::2]:8081 │ 1        │ 1       │ 0           │ 1       │ 0          │ 0     │ 0        │
	// └────────────────┴──────────┴─────────┴─────────────┴─────────┴────────────┴───────┴──────────┘
	// Not shown at this width: MEDIAN SYN/ACK MS (--width 0, -o csv or -o json show every column).
	//
	// where: the first frame of each attempt in handshakes.pcap
	// ┌───────┬─────────────────┬────────────────┬─────────┬───────┬─────────┬─────┬──────────┬─────────┐
	// │ where │     client      │     server     │ outcome │ state │ history │ syn │ syn_retx │ packets │
	// ├───────┼─────────────────┼────────────────┼─────────┼───────┼─────────┼─────┼──────────┼─────────┤
	// │ #37   │ 10.99.0.1:38360 │ 10.99.0.2:81   │ refused │ REJ   │ Sr      │ #37 │ 0        │ 2       │
	// │ #69   │ [fd99::1]:34296 │ [fd99::2]:8081 │ refused │ REJ   │ Sr      │ #69 │ 0        │ 2       │
	// └───────┴─────────────────┴────────────────┴─────────┴───────┴─────────┴─────┴──────────┴─────────┘
	// Not shown at this width: start, synack, rst, synack_ms, bytes_out, bytes_in (--width 0, -o csv or -o
	// json show every column).
}

// The columns of a table sized on several goroutines: each RowSizer
// sizes the rows of the batches handed to it, and TableWidths.AddSized
// adds them in the order of the batches, to the sizes one TableWidths
// given every row would have. (Here the two sizers take turns on one
// goroutine, and the attempts are held, then written.)
func ExampleTableWidths_Sizer() {
	f := flows.Filter{States: []string{"established"}}
	var held []model.Attempt
	snap, _, err := parse.Open(context.Background(), "../fixtures/captures/handshakes.pcap", &parse.Options{
		EachAttempt: func(a model.Attempt) { held = append(held, a) }})
	if err != nil {
		fmt.Println(err)
		return
	}
	b, m := flows.NewBuilder(f), flows.NewTableWidths()
	sizers := []*flows.RowSizer{m.Sizer(), m.Sizer()}
	for i := 0; i < len(held); i += 2 { // batches of two attempts
		s := sizers[i/2%2]
		for j := i; j < min(i+2, len(held)); j++ {
			if b.Add(&held[j]) {
				r := held[j].Row()
				s.AddRow(&r)
			}
		}
		m.AddSized(s) // in the order of the batches
	}
	w := flows.NewFittedWriter(os.Stdout, b.Table(snap.Captures), f, m, 100)
	for i := range held {
		w.Write(&held[i])
	}
	if err := w.Close(); err != nil {
		fmt.Println(err)
	}
	// Output:
	// Captures under ../fixtures/captures (paths below are relative to it)
	//
	// 1 capture, 70 packets, 11 TCP streams: 4 established, 2 refused, 4 unanswered, 1 SYN/ACK reset by
	// the client; 2 SYN retransmissions, 3 ICMP unreachable, 0 ICMP redirects, 0 ICMPv6 unreachable, 0
	// ICMPv6 redirects, 0 ARP (0 gratuitous)
	//
	// ┌──────────┬──────────┬─────────┬─────────────┬─────────┬────────────┬───────┬──────────┬──────────┐
	// │  SERVER  │ ATTEMPTS │ CLIENTS │ ESTABLISHED │ REFUSED │ UNANSWERED │ RESET │ SYN RETX │  MEDIAN  │
	// │          │          │         │             │         │            │       │          │ SYN/ACK  │
	// │          │          │         │             │         │            │       │          │    MS    │
	// ├──────────┼──────────┼─────────┼─────────────┼─────────┼────────────┼───────┼──────────┼──────────┤
	// │ 10.99.0. │ 3        │ 1       │ 3           │ 0       │ 0          │ 0     │ 0        │ 0.031    │
	// │ 2:80     │          │         │             │         │            │       │          │          │
	// │ [fd99::  │ 1        │ 1       │ 1           │ 0       │ 0          │ 0     │ 0        │ 0.020    │
	// │ 2]:8080  │          │         │             │         │            │       │          │          │
	// └──────────┴──────────┴─────────┴─────────────┴─────────┴────────────┴───────┴──────────┴──────────┘
	//
	// where: the first frame of each attempt in handshakes.pcap
	// ┌───────┬─────────────────┬────────────────┬─────────────┬───────┬──────────┬──────────┬───────────┐
	// │ where │     client      │     server     │   outcome   │ state │ history  │ syn_retx │ synack_ms │
	// ├───────┼─────────────────┼────────────────┼─────────────┼───────┼──────────┼──────────┼───────────┤
	// │ #1    │ 10.99.0.1:46356 │ 10.99.0.2:80   │ established │ SF    │ ShADadFf │ 0        │ 0.033     │
	// │ #13   │ 10.99.0.1:46368 │ 10.99.0.2:80   │ established │ SF    │ ShADadFf │ 0        │ 0.030     │
	// │ #25   │ 10.99.0.1:46380 │ 10.99.0.2:80   │ established │ SF    │ ShADadfF │ 0        │ 0.031     │
	// │ #57   │ [fd99::1]:43494 │ [fd99::2]:8080 │ established │ SF    │ ShADadfF │ 0        │ 0.020     │
	// └───────┴─────────────────┴────────────────┴─────────────┴───────┴──────────┴──────────┴───────────┘
	// Not shown at this width: start, syn, synack, rst, packets, bytes_out, bytes_in (--width 0, -o csv or
	// -o json show every column).
}
