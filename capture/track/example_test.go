package track_test

import (
	"fmt"
	"io"
	"os"

	"github.com/netmortem/netmortem/capture/decode"
	"github.com/netmortem/netmortem/capture/pcapfile"
	"github.com/netmortem/netmortem/capture/track"
	"github.com/netmortem/netmortem/model"
)

// Read the records of a capture file, decode each frame and fold the
// packets into connection attempts, one at a time: what capture.Read does,
// without its sharded pipeline.
func Example() {
	f, err := os.Open("../../fixtures/incidents/ephemeral-nodeport/capture.pcap")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	src, err := pcapfile.NewReader(f)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer src.Close()
	t := track.NewTracker("capture.pcap", track.Options{Node: "node1"})
	var d decode.Decoder
	var rec pcapfile.Record
	for frame := 1; ; frame++ {
		if err := src.Next(&rec); err != nil {
			if err != io.EOF {
				fmt.Println(err)
			}
			break
		}
		p := decode.Packet{Pos: model.Pos{Frame: frame}, Time: rec.Time()}
		if err := d.Decode(src.LinkType(rec.Iface), rec.Data, rec.Cut(), &p); err != nil {
			fmt.Println(frame, err)
		}
		if frame == 38 {
			fmt.Println(decode.OneLine(&p, len(rec.Data), nil))
		}
		t.Add(&p)
	}
	res := t.Finish()
	fmt.Println(src.Format(), decode.LinkName(src.LinkType(0)), len(res.Attempts), "attempts")
	for _, a := range res.Attempts {
		if a.Outcome.Failed() {
			fmt.Println(a.Client, "->", a.Server, a.Outcome)
		}
	}
	// Output:
	// 2026-11-23 12:34:02.466367 IP 10.23.77.129.36704 > 10.23.77.138.80: Flags [S], seq 2187022639, options [mss 1460], length 0
	// pcap Linux SLL2 8 attempts
	// 10.23.77.129:36704 -> 10.23.77.138:80 synack_client_rst
	// 10.23.77.129:32080 -> 10.23.77.138:80 synack_client_rst
}
