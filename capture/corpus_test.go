package capture_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/capture"
	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
)

// truth is the per-file summary written by ../shared/corpus/pcap/truth.sh
// with tshark.
type truth struct {
	File          string         `json:"file"`
	Encapsulation string         `json:"encapsulation"`
	Packets       int            `json:"packets"`
	TCPPackets    int            `json:"tcp_packets"`
	SYNOnly       int            `json:"syn_only"`
	SYNACK        int            `json:"synack"`
	RST           int            `json:"rst"`
	TCPStreams    int            `json:"tcp_streams"`
	SYNRetx       int            `json:"syn_retransmissions"`
	Outcomes      map[string]int `json:"outcomes"`
	ICMPUnreach   int            `json:"icmp_unreach"`
	ICMPRedirect  int            `json:"icmp_redirect"`
	ICMP6Unreach  int            `json:"icmp6_unreach"`
	ICMP6Redirect int            `json:"icmp6_redirect"`
	ARP           int            `json:"arp"`
	ARPGratuitous int            `json:"arp_gratuitous"`
}

func (tr truth) counts() model.Counts {
	return model.Counts{
		Packets: tr.Packets, TCPPackets: tr.TCPPackets, SYNOnly: tr.SYNOnly, SYNACK: tr.SYNACK, RST: tr.RST,
		TCPStreams: tr.TCPStreams, Established: tr.Outcomes["established"], Refused: tr.Outcomes["refused"],
		Unanswered: tr.Outcomes["unanswered"], SYNACKClientRST: tr.Outcomes["synack_client_rst"], SYNRetx: tr.SYNRetx,
		ICMPUnreach: tr.ICMPUnreach, ICMPRedirect: tr.ICMPRedirect, ICMP6Unreach: tr.ICMP6Unreach,
		ICMP6Redirect: tr.ICMP6Redirect, ARP: tr.ARP, ARPGratuitous: tr.ARPGratuitous,
	}
}

// divergent lists the corpus files where netmortem and tshark 4.0 are known
// to disagree, and why. Every other file must match exactly.
var divergent = map[string]string{
	"gopacket/pcapng-testsuite__be__test901.pcapng": "section header version 2.0: tshark refuses the file, netmortem reads its packets",
	"gopacket/pcapng-testsuite__le__test901.pcapng": "section header version 2.0: tshark refuses the file, netmortem reads its packets",
}

func TestCorpusAgainstTshark(t *testing.T) {
	dir := testutil.CorpusDir(t, "pcap")
	files, _ := filepath.Glob(filepath.Join(dir, "truth", "*.json"))
	if len(files) == 0 {
		t.Fatalf("%s: no truth files", dir)
	}
	for _, tf := range files {
		tr := readTruth(t, tf)
		t.Run(tr.File, func(t *testing.T) {
			checkAgainstTruth(t, filepath.Join(dir, "corpus", tr.File), tf, divergent[tr.File])
		})
	}
}

// TestFixturesAgainstTshark holds netmortem against tshark on the captures
// fixtures/make-fixtures.sh made from real kernel traffic; their truth files
// were written by tshark when the fixtures were made.
func TestFixturesAgainstTshark(t *testing.T) {
	root := filepath.Join(testutil.Root(), "fixtures")
	truthRoot := filepath.Join(root, "tshark-truth")
	var truths []string
	filepath.WalkDir(truthRoot, func(path string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(path, ".json") {
			truths = append(truths, path)
		}
		return err
	})
	if len(truths) < 8 {
		t.Fatalf("found %d fixture truth files, want at least 8", len(truths))
	}
	for _, tf := range truths {
		tr := readTruth(t, tf)
		rel, _ := filepath.Rel(truthRoot, filepath.Dir(tf))
		capDir := filepath.Join(root, rel)
		t.Run(filepath.Join(rel, tr.File), func(t *testing.T) {
			checkAgainstTruth(t, filepath.Join(capDir, tr.File), tf, "")
		})
	}
}

func readTruth(t *testing.T, path string) truth {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var tr truth
	if err := json.Unmarshal(b, &tr); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return tr
}

// checkAgainstTruth reads a capture and compares its counts, outcomes and
// streams with tshark's truth file. A non-empty divergence names a known
// disagreement: the test then checks that it is still there.
func checkAgainstTruth(t *testing.T, capPath, truthPath, divergence string) {
	t.Helper()
	tr := readTruth(t, truthPath)
	var res *capture.Result
	var err error
	if strings.HasSuffix(capPath, ".series.pcap") {
		// The truth of a rotated series is tshark's view of the files
		// merged; netmortem reads them as a series.
		res, err = readSeriesDir(filepath.Dir(capPath))
	} else {
		f, ferr := os.Open(capPath)
		if ferr != nil {
			t.Fatal(ferr)
		}
		defer f.Close()
		res, err = capture.Read(context.Background(), f, tr.File, capture.Options{})
	}
	if res == nil {
		t.Fatalf("read: %v", err)
	}
	for _, ev := range res.ARP {
		if mac, err := net.ParseMAC(ev.MAC); err != nil || len(mac) != 6 && len(mac) != 20 {
			t.Errorf("%s: ARP claim at %s names %q as a MAC", tr.File, ev.Pos, ev.MAC)
		}
	}
	want := tr.counts()
	got := res.Info.Counts
	outcomes := map[string]int{}
	for _, a := range res.Attempts {
		outcomes[string(a.Outcome)]++
	}
	same := got == want && sameOutcomes(outcomes, tr.Outcomes)
	if divergence != "" {
		if same {
			t.Errorf("%s: listed as divergent (%s) but now matches tshark", tr.File, divergence)
		}
		return
	}
	checkStreams(t, strings.TrimSuffix(truthPath, ".json")+".streams.tsv", res.Attempts)
	if !same {
		t.Errorf("%s (%s): counts differ from tshark\n got %+v\nwant %+v\n got outcomes %v\nwant outcomes %v\nerr %v",
			tr.File, tr.Encapsulation, got, want, outcomes, tr.Outcomes, err)
	}
}

func sameOutcomes(got, want map[string]int) bool {
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	for k, v := range got {
		if want[k] != v {
			return false
		}
	}
	return true
}

// checkStreams holds every attempt against tshark's tcp.stream of the same
// index: client, server and outcome.
func checkStreams(t *testing.T, path string, attempts []model.Attempt) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")[1:]
	if len(lines) != len(attempts) {
		t.Errorf("%d attempts, tshark has %d streams", len(attempts), len(lines))
		return
	}
	ep := func(a netip.AddrPort) string { return a.Addr().String() + ":" + strconv.Itoa(int(a.Port())) }
	bad := 0
	for i, line := range lines {
		f := strings.Split(line, "\t")
		a := attempts[i]
		outcome := f[len(f)-1]
		// tshark orients streams without a SYN by their first packet;
		// netmortem orients a lone SYN/ACK towards the client it answers.
		sameEnds := ep(a.Client) == f[1] && ep(a.Server) == f[2] ||
			outcome == "synack_only" && ep(a.Client) == f[2] && ep(a.Server) == f[1]
		if !sameEnds || string(a.Outcome) != outcome {
			if bad++; bad <= 5 {
				t.Errorf("stream %s: got %s -> %s %s, tshark %s -> %s %s", f[0], ep(a.Client), ep(a.Server), a.Outcome, f[1], f[2], outcome)
			}
			continue
		}
		// Packets, and TCP payload bytes both ways (tshark's tcp.len:
		// from the IP length, but no more than the frame had on the wire).
		pkts, _ := strconv.Atoi(f[4])
		cb, _ := strconv.ParseInt(f[12], 10, 64)
		sb, _ := strconv.ParseInt(f[13], 10, 64)
		if a.Packets != pkts || a.ClientBytes+a.ServerBytes != cb+sb {
			if bad++; bad <= 5 {
				t.Errorf("stream %s: got %d packets, %d+%d payload bytes; tshark %d, %d+%d", f[0], a.Packets, a.ClientBytes, a.ServerBytes, pkts, cb, sb)
			}
		}
	}
}

// readSeriesDir reads every pcap of dir as one rotated series, oldest file
// first (the names sort by time).
func readSeriesDir(dir string) (*capture.Result, error) {
	paths, _ := filepath.Glob(filepath.Join(dir, "*.pcap"))
	var files []capture.SeriesFile
	for _, p := range paths {
		files = append(files, capture.SeriesFile{Name: filepath.Base(p), Open: func() (io.ReadCloser, error) { return os.Open(p) }})
	}
	res, _, err := capture.ReadSeries(context.Background(), files, capture.Options{})
	return res, err
}
