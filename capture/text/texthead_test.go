package text

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/netmortem/netmortem/internal/testutil"
)

// The expressions the hand-written readers stand for.
var (
	tcpdumpLineRe = regexp.MustCompile(`^(?:(\d{4}-\d{2}-\d{2}) )?(\d{2}:\d{2}:\d{2}\.\d+|\d{9,10}\.\d+)\s+(?:(?:(\S+)\s+)?(In|Out|M|B|P)\s+(?:ifindex \d+ )?)?(IP6?|ARP|[0-9a-f]{2}(?::[0-9a-f]{2}){5}) ?(.*)$`)
	// tcpdumpLinkWordRe is the line whose MAC addresses were replaced by
	// words (linkWordAt): "WORD ethertype ..." or "WORD > WORD2, ethertype ...".
	tcpdumpLinkWordRe = regexp.MustCompile(`^(?:(\d{4}-\d{2}-\d{2}) )?(\d{2}:\d{2}:\d{2}\.\d+|\d{9,10}\.\d+)\s+(?:(?:(\S+)\s+)?(In|Out|M|B|P)\s+(?:ifindex \d+ )?)?([0-9A-Za-z_.:-]+) ((?:ethertype |> [0-9A-Za-z_.:-]+, ethertype ).*)$`)
	tcpdumpAddrAnyRe  = regexp.MustCompile(`^([0-9A-Za-z._:-]+) > ([0-9A-Za-z._:-]+): (.*)$`)
	tsharkLineRe      = regexp.MustCompile(`^(\d+)\s+((?:\d{4}-\d{2}-\d{2} )?\d{1,2}:\d{2}:\d{2}\.\d+|-?\d+\.\d+)\s+(\S+)\s+(?:(?:→|->)\s+)?(\S+)\s+([A-Za-z0-9/._-]+)\s+(\d+)\s+(.*)$`)
	tsharkTCPRe       = regexp.MustCompile(`([\w.-]+(?:\(\d+\))?)\s+(?:→|->|>)\s+([\w.-]+(?:\(\d+\))?)\s+\[([A-Z, ]+)\]`)
)

// addFixtureLines seeds f with the first lines of the committed text
// captures whose names match pattern.
func addFixtureLines(f *testing.F, pattern string) {
	files, _ := filepath.Glob(filepath.Join(testutil.Root(), "fixtures/captures/text", pattern))
	if len(files) == 0 {
		f.Fatalf("no fixture matches %s", pattern)
	}
	for _, name := range files {
		fh, err := os.Open(name)
		if err != nil {
			f.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		for n := 0; sc.Scan() && n < 40; n++ {
			f.Add(strings.TrimSpace(sc.Text()))
		}
		fh.Close()
	}
}

// The hand-written readers of tcpdump lines agree with the regular
// expressions they stand for, on every line of the committed text
// captures and on whatever the fuzzer makes of them.
func FuzzTcpdumpHead(f *testing.F) {
	addFixtureLines(f, "*tcpdump*.txt")
	f.Add("12:00:00.000001 eth0 Out ifindex 3 02:00:00:00:00:01 ethertype IPv4 (0x0800), length 74: 10.0.0.1.1 > 10.0.0.2.80: Flags [S]")
	f.Add("2024-01-02 12:00:00.000001 In IP6 fd00::1.1 > fd00::2.80: Flags [S.]")
	f.Add("1663268942.533940 P ARP, Request who-has 10.0.0.2 tell 10.0.0.1")
	for _, l := range []string{
		"12:00:00.1\tIP 1.2.3.4.5 > 1.2.3.4.6: x",
		"12:00:00.1 ?     Out IP 1 > 2: x",
		"12:00:00.1 IPv4 stuff",
		"12:00:00.1 In In IP x",
		"12:00:00.1 eth0 Out ifindex 3 IP x",
		"12:00:00.1 eth0 Out ifindex x 02:00:00:00:00:01 y",
		"12:00:00.1 Out ifindex 3 02:00:00:00:00:0G y",
		"123456789.1 ARP",
		"2024-01-02 1:00:00.1 IP x",
		"2024-01-02  12:00:00.1 IP x",
		"12:00:00. IP x",
		"12:00:00.1 IP x\ny",
		"12:00:00.1 IP\n",
		"a.b > c.d: e",
		"a b > c.d: e",
		"a.b > c d: e",
		"a.b > c.d:e: f",
		"a.b > : e",
		" > c.d: e",
	} {
		f.Add(l)
	}
	f.Fuzz(func(t *testing.T, line string) {
		want := tcpdumpLineRe.FindStringSubmatch(line)
		if want == nil {
			want = tcpdumpLinkWordRe.FindStringSubmatch(line)
		}
		if got := tcpdumpHead(line); !slices.Equal(got, want) {
			t.Errorf("tcpdumpHead(%q) = %q, the expression gives %q", line, got, want)
		}
		m := tcpdumpAddrAnyRe.FindStringSubmatch(line)
		src, dst, rest, ok := splitAddrs(line)
		if ok != (m != nil) || ok && (src != m[1] || dst != m[2] || rest != m[3]) {
			t.Errorf("splitAddrs(%q) = %q %q %q %v, the expression gives %q", line, src, dst, rest, ok, m)
		}
	})
}

// The same for tshark's packet list lines and Info columns.
func FuzzTsharkHead(f *testing.F) {
	addFixtureLines(f, "*tshark*.txt")
	f.Add("5 2024-01-02 12:00:00.000001 10.0.0.1 -> 10.0.0.2 TCP 74 http(80) > 40000 [SYN, ACK] Seq=0 Ack=1 Win=1 Len=0")
	f.Add("7 -0.000010 fd00::1 fd00::2 TCPv6 86 [TCP Retransmission] 40000 → 443 [SYN] Seq=0")
	for _, l := range []string{
		"1\t0.000000\t10.0.0.1\t→\t10.0.0.2\tTCP\t74\t1 → 2 [SYN]",
		"1 2024-01-02  12:00:00.1 a b TCP 1 x",
		"1 0.1 a → b TCP 1 \n",
		"1 0.1 a → b TCP 1 x\ny",
		"1 0.1 → → b TCP 1 x",
		"1 0.1 a ->x b TCP 1 x",
		"1 0.1 a b c TCP 1 x",
		"1 0.1 a b TCP 1",
		"1 0.1 a b TCP 1 ",
		"12 9:59:59.9 a b TCP 1 a(1)(80) → 2 [SYN]",
		"x(80) → y(9) [A] 80-> 443 [SYN] a -> b [ACK] c > d [RST, ACK]",
		"Seq=1 xSeq=2 _Ack=3 Ack=4 Len= Len=5",
		"http(80)→ 1 [S] ht(tp(80) → 1 [S] -.- > _ [S,]",
	} {
		f.Add(l)
	}
	f.Fuzz(func(t *testing.T, line string) {
		want := tsharkLineRe.FindStringSubmatch(line)
		if got := tsharkHead(line); !slices.Equal(got, want) {
			t.Errorf("tsharkHead(%q) = %q, the expression gives %q", line, got, want)
		}
		w := tsharkTCPRe.FindStringSubmatch(line)
		g := tsharkTCP(line)
		if (g == nil) != (w == nil) || g != nil && !slices.Equal(g[1:], w[1:]) {
			t.Errorf("tsharkTCP(%q) = %q, the expression gives %q", line, g, w)
		}
		for key, re := range map[string]*regexp.Regexp{"Seq=": tsharkSeqRe, "Ack=": tsharkAckRe, "Len=": tsharkLenRe} {
			m := re.FindStringSubmatch(line)
			n, ok := wordNumber(line, key)
			if ok != (m != nil) || ok && n != m[1] {
				t.Errorf("wordNumber(%q, %q) = %q %v, the expression gives %q", line, key, n, ok, m)
			}
		}
	})
}

var (
	tsharkSeqRe = regexp.MustCompile(`\bSeq=(\d+)`)
	tsharkAckRe = regexp.MustCompile(`\bAck=(\d+)`)
	tsharkLenRe = regexp.MustCompile(`\bLen=(\d+)`)
)

func TestParseSeconds(t *testing.T) {
	for _, c := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"1795439503.290971", 1795439503*time.Second + 290971*time.Microsecond, true},
		{"0.000033", 33 * time.Microsecond, true},
		{"-0.000010", -10 * time.Microsecond, true},
		{"12", 12 * time.Second, true},
		{"1.123456789", time.Second + 123456789, true},
		{"1.1234567891", 0, false},
		{"x.1", 0, false},
		{"99999999999999999999.1", 0, false},
	} {
		got, ok := parseSeconds(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("parseSeconds(%q) = %v, %v; want %v, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}
