package capture_test

import (
	"context"
	"fmt"
	"os"

	"github.com/netmortem/netmortem/capture"
	"github.com/netmortem/netmortem/model"
)

// Read a capture and list the connection attempts the client reset after
// the server's SYN/ACK.
func ExampleRead() {
	f, err := os.Open("../fixtures/incidents/ephemeral-nodeport/capture.pcap")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	res, err := capture.Read(context.Background(), f, "capture.pcap", capture.Options{Node: "node1"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Info.Format, res.Info.LinkType, res.Info.Counts.TCPStreams, "attempts")
	for _, a := range res.Attempts {
		if a.Outcome.Failed() {
			fmt.Printf("%s -> %s %s: SYN frames %d..%d, %d SYN retransmissions\n",
				a.Client, a.Server, a.Outcome, a.SYN[0].Frame, a.SYN[len(a.SYN)-1].Frame, a.SYNRetransmissions())
		}
	}
	// Output:
	// pcap Linux SLL2 8 attempts
	// 10.23.77.129:36704 -> 10.23.77.138:80 synack_client_rst: SYN frames 38..44, 2 SYN retransmissions
	// 10.23.77.129:32080 -> 10.23.77.138:80 synack_client_rst: SYN frames 59..65, 2 SYN retransmissions
}

// Read a capture with its attempts lent, keeping only the failed ones:
// a lent attempt's segments are rewritten by the next attempt, so the
// ones kept are cloned.
func ExampleRead_lendAttempts() {
	f, err := os.Open("../fixtures/incidents/ephemeral-nodeport/capture.pcap")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	var failed []model.Attempt
	opts := capture.Options{LendAttempts: true, EachAttempt: func(a model.Attempt) {
		if a.Outcome.Failed() {
			failed = append(failed, a.Clone())
		}
	}}
	if _, err := capture.Read(context.Background(), f, "capture.pcap", opts); err != nil {
		fmt.Println(err)
		return
	}
	for _, a := range failed {
		fmt.Println(a.Client, a.Outcome, "first SYN at frame", a.SYN[0].Frame)
	}
	// Output:
	// 10.23.77.129:36704 synack_client_rst first SYN at frame 38
	// 10.23.77.129:32080 synack_client_rst first SYN at frame 59
}

// Read a capture's attempts as the rows of a connection table, worked out
// without building the attempts: the frames of their first SYN and
// SYN/ACK, and how many times the SYN was sent again.
func ExampleRead_eachRow() {
	f, err := os.Open("../fixtures/incidents/ephemeral-nodeport/capture.pcap")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	opts := capture.Options{EachRow: func(r *model.Row) {
		if r.Attempt != nil {
			row := r.Attempt.Row() // times not in UTC nanoseconds since 1970: handed on as the attempt
			r = &row
		}
		fmt.Printf("%s %s SYN #%d (%d more), SYN/ACK #%d\n", r.Client, r.ConnState, r.SYN.Frame[0],
			r.SYNRetransmissions, r.SYNACK.Frame[0])
	}}
	if _, err := capture.Read(context.Background(), f, "capture.pcap", opts); err != nil {
		fmt.Println(err)
	}
	// Output:
	// 10.23.77.129:53154 SF SYN #1 (0 more), SYN/ACK #2
	// 10.23.77.129:53164 SF SYN #12 (0 more), SYN/ACK #13
	// 10.23.77.129:53172 SF SYN #25 (0 more), SYN/ACK #26
	// 10.23.77.129:36704 RSTO SYN #38 (2 more), SYN/ACK #39
	// 10.23.77.129:53180 SF SYN #47 (0 more), SYN/ACK #48
	// 10.23.77.129:32080 RSTO SYN #59 (2 more), SYN/ACK #60
	// 10.23.77.129:15406 SF SYN #68 (0 more), SYN/ACK #69
	// 10.23.77.129:15416 SF SYN #80 (0 more), SYN/ACK #81
}
