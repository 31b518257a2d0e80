package parse

import (
	"context"
	"io"

	"github.com/netmortem/netmortem/capture"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/internal/text"
)

// captureFormat hands pcap and pcapng files to the capture package.
var captureFormat = &Format{
	Name: "pcap",
	Kind: model.KindCapture,
	Command: "tcpdump -w FILE (-i any writes Linux SLL2), tshark or dumpcap -w, editcap: pcap or " +
		"pcapng, optionally gzip'd",
	Doc: "pcap (micro- and nanosecond, both byte orders), pcapng (several interfaces and link " +
		"types, several sections), either gzip-compressed; see [capture.md](capture.md)",
	Sniff: func(_ string, head []byte) int {
		if _, ok := capture.Sniff(head); ok {
			return 100
		}
		return 0
	},
	Parse: func(ctx context.Context, r io.Reader, src *File, snap *model.Snapshot) (int, error) {
		res, err := capture.Read(ctx, r, src.Name, capture.Options{Node: src.Node, Summary: src.Summary, EachAttempt: src.EachAttempt,
			LendAttempts: src.LendAttempts, EachRow: src.EachRow})
		if res == nil {
			return 0, err
		}
		src.Format = res.Info.Format
		addCapture(snap, res)
		return res.Info.Packets, err
	},
}

// textSniff is what capture.SniffText makes of a head.
type textSniff struct {
	format string
	score  int
}

// textSniffKey keeps a head's textSniff (text.HeadValue).
type textSniffKey struct{}

// textCaptureFormat reads pasted tcpdump or tshark packet text (format is
// capture.FormatTcpdumpText or capture.FormatTsharkText) into the same
// evidence as a capture.
func textCaptureFormat(format, command, doc string) *Format {
	return &Format{
		Name:    format,
		Kind:    model.KindCapture,
		Command: command,
		Doc:     doc,
		Sniff: func(_ string, head []byte) int {
			if !text.IsText(head) {
				return 0
			}
			// Both text formats read the head the same way: while it is
			// shared, once.
			st := text.HeadValue(head, textSniffKey{}, func() textSniff {
				f, score := capture.SniffText(head)
				return textSniff{f, score}
			})
			f, score := st.format, st.score
			if f != format {
				return 0
			}
			return score
		},
		Parse: func(ctx context.Context, r io.Reader, src *File, snap *model.Snapshot) (int, error) {
			results, err := capture.ReadText(ctx, r, src.Name, format, capture.Options{Node: src.Node, Summary: src.Summary, EachAttempt: src.EachAttempt,
				LendAttempts: src.LendAttempts, EachRow: src.EachRow})
			n := 0
			for _, res := range results {
				addCapture(snap, res)
				n += res.Info.Packets
			}
			return n, err
		},
	}
}

var (
	tcpdumpTextFormat = textCaptureFormat(capture.FormatTcpdumpText,
		"tcpdump -nn -r FILE or a live tcpdump -nn pasted, with any of -v/-vv/-vvv, -e (Ethernet,"+
			" and Linux SLL/SLL2 on -i any), -t (no times), -tt, -ttt (since the previous packet), "+
			"-tttt, -ttttt (since the first), -S, -A, -X/-xx (hex and ASCII lines are skipped); "+
			"prompts naming the node start a new capture",
		"the same packets, attempts, ICMP errors and ARP claims as the capture they print, each "+
			"at its line, and the UDP packets -v printed with a wrong checksum (`[bad udp cksum ...]`); the pasted command line names the capture filter and tells `-ttt` from "+
			"`-ttttt` (without it, relative times count from the first packet until one goes back, "+
			"which only `-ttt` deltas do). `-q` prints no TCP flags: its TCP packets are counted with"+
			" one warning, and no attempt is told. Without `-n` tcpdump prints port names (`http`, "+
			"`domain`, `sun-sr-https`): they are read as their ports (Debian's /etc/services, then "+
			"the IANA registry); host names cannot be turned back into addresses, so their lines are "+
			"skipped with one warning")
	tsharkTextFormat = textCaptureFormat(capture.FormatTsharkText,
		"tshark -r FILE (-n) and Wireshark's packet list pasted (\"No. Time Source Destination "+
			"Protocol Length Info\"), with any -t time format: r (since the first packet), d/dd (since"+
			" the previous: summed), a/ad/u/ud, e (epoch, read exactly); frame details are skipped",
		"frame numbers as Wireshark numbers them; TCP flags, sequence numbers and ICMP types from"+
			" the Info column; ports as numbers, as Wireshark shows them with transport names "+
			"resolved (`46356 → http(80)`), or as bare names of older versions (`> http`)")
)

// addCapture adds what a capture yields to snap.
func addCapture(snap *model.Snapshot, res *capture.Result) {
	snap.Captures = append(snap.Captures, res.Info)
	capture.AddTo(snap, res)
}
