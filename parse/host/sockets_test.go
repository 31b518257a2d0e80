package host

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/internal/parsetest"
)

func socketsFile(t *testing.T, rel string) ([]model.Socket, []model.SocketCount) {
	t.Helper()
	f, err := os.Open(filepath.Join(testutil.Root(), rel))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	socks, counts, err := Sockets(f, filepath.Base(rel))
	if err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
	return socks, counts
}

// sockLine formats a socket for comparison: line node proto state local
// peer [iface] [process/pid/fd truncated] [timer] [note].
func sockLine(s model.Socket) string {
	out := fmt.Sprintf("%d %s %s %s %s %s", s.Pos.Line, s.Node, s.Proto, s.State, s.Local, s.Peer)
	if s.Iface != "" {
		out += " %" + s.Iface
	}
	if s.RecvQ != 0 || s.SendQ != 0 {
		out += fmt.Sprintf(" q=%d/%d", s.RecvQ, s.SendQ)
	}
	if s.Process != "" {
		out += fmt.Sprintf(" %s/%d", s.Process, s.PID)
		if len(s.Users) > 0 && s.Users[0].FD != 0 {
			out += fmt.Sprintf("/fd%d", s.Users[0].FD)
		}
		if s.ProcessTruncated {
			out += "..."
		}
	}
	if s.Timer != "" {
		out += " timer=" + s.Timer
	}
	if s.Note != "" {
		out += " note=" + s.Note
	}
	return out
}

func countLine(c model.SocketCount) string {
	out := fmt.Sprintf("%d %s proto=%s", c.Pos.Line, c.Node, c.Proto)
	if c.State != "" {
		out += " state=" + c.State
	}
	if c.Family != "" {
		out += " family=" + c.Family
	}
	if c.Local.IsValid() {
		out += " local=" + c.Local.String()
	}
	if c.Peer.IsValid() {
		out += " peer=" + c.Peer.String()
	}
	if c.Addr.IsValid() {
		out += " addr=" + c.Addr.String()
	}
	if c.Port != 0 {
		out += fmt.Sprintf(" port=%d", c.Port)
	}
	return out + fmt.Sprintf(" n=%d", c.Count)
}

func byLine(socks []model.Socket) map[int]string {
	m := map[int]string{}
	for _, s := range socks {
		m[s.Pos.Line] = sockLine(s)
	}
	return m
}

func checkLines(t *testing.T, file string, got map[int]string, want []string) {
	t.Helper()
	for _, w := range want {
		var line int
		fmt.Sscanf(w, "%d", &line)
		if got[line] != w {
			t.Errorf("%s:%d:\n got %q\nwant %q", file, line, got[line], w)
		}
	}
}

func TestSocketsSeeds(t *testing.T) {
	socks, counts := socketsFile(t, "fixtures/seeds/002-synack-reset/ss-timewait.txt")
	var got []string
	for _, c := range counts {
		got = append(got, countLine(c))
	}
	want := []string{
		"2  proto=tcp state=TIME-WAIT local=10.10.85.105 n=161",
		"3  proto=tcp state=TIME-WAIT local=10.23.77.129 n=849",
		"4  proto=tcp state=TIME-WAIT local=169.254.20.10 n=69",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("ss-timewait.txt counts:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(socks) != 11 {
		t.Fatalf("ss-timewait.txt: %d sockets, want 11", len(socks))
	}
	if g := sockLine(socks[0]); g != "6  tcp TIME-WAIT 169.254.20.10:50967 169.254.20.10:8080" {
		t.Errorf("first socket %q", g)
	}
	if g := sockLine(socks[10]); g != "16  tcp TIME-WAIT 169.254.20.10:56233 169.254.20.10:8080" {
		t.Errorf("last socket %q", g)
	}

	// three nodes' outputs pasted one after another, no-break spaces and all
	socks, counts = socketsFile(t, "fixtures/seeds/000-apiserver-affinity/netstat.txt")
	got = nil
	for _, s := range socks {
		got = append(got, sockLine(s))
	}
	want = []string{
		"8 node3 tcp6 LISTEN [::]:10251 [::]:0 kube-schedule/29933...",
		"9 node3 tcp6 LISTEN [::]:10252 [::]:0 kube-controll/30029...",
		"13 node1 tcp6 LISTEN [::]:6443 [::]:0 kube-apiserver/880",
		"16 node2 tcp6 LISTEN [::]:6443 [::]:0 kube-apiserver/880",
		"19 node3 tcp6 LISTEN [::]:6443 [::]:0 kube-apiserver/880",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") || len(counts) != 0 {
		t.Errorf("netstat.txt:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !socks[1].MatchesProcess("kube-controller-manager") || !socks[0].MatchesProcess("kube-scheduler") || socks[2].MatchesProcess("kube-apiserver-x") {
		t.Errorf("truncated names do not match their processes: %+v", socks[:3])
	}
}

// Real outputs of ss on this machine's kernel, in two network namespaces
// (parse/testdata/make-sockets-neigh.sh).
func TestSocketsRealSS(t *testing.T) {
	socks, _ := socketsFile(t, "parse/testdata/sockets/ss-tanp.txt")
	if len(socks) != 16 {
		t.Errorf("ss-tanp.txt: %d sockets, want 16", len(socks))
	}
	checkLines(t, "ss-tanp.txt", byLine(socks), []string{
		"2  tcp LISTEN 127.0.0.1:10257 0.0.0.0:0 q=0/5 kube-controller/26831/fd5...",
		"4  tcp SYN-SENT 10.77.0.1:42392 10.77.0.2:9001 q=0/1 socat/26925/fd6",
		"8  tcp LISTEN [::]:8080 [::]:0 q=0/5 python3/26830/fd3",
		"9  tcp LISTEN [::]:9090 [::]:0 q=0/5 python3/26837/fd4",
		"11  tcp TIME-WAIT 10.77.0.1:8080 10.77.0.2:60944",
		"12  tcp ESTAB 10.77.0.1:8080 10.77.0.2:49438 python3/26830/fd5",
		"17  tcp TIME-WAIT [fd77::1]:8080 [fd77::2]:45298",
	})
	if !socks[0].MatchesProcess("kube-controller-manager") {
		t.Errorf("kube-controller (15 characters) should match kube-controller-manager")
	}

	socks, _ = socketsFile(t, "parse/testdata/sockets/ss-lntup.txt")
	if len(socks) != 9 {
		t.Errorf("ss-lntup.txt: %d sockets, want 9", len(socks))
	}
	checkLines(t, "ss-lntup.txt", byLine(socks), []string{
		"2  udp UNCONN 0.0.0.0:68 0.0.0.0:0 %nm-t-v0 socat/26834/fd5",
		"4  udp UNCONN [fe80::77:ff:fe00:1]:546 [::]:0 %nm-t-v0 python3/26837/fd3",
		"5  udp UNCONN [::]:5355 [::]:0 socat/26835/fd5",
		"6  udp UNCONN [fd77:1234:5678:9abc::1]:5400 [::]:0 socat/26836/fd5",
		"7  tcp LISTEN 127.0.0.1:10257 0.0.0.0:0 q=0/5 kube-controller/26831/fd5...",
		"10  tcp LISTEN [::]:9090 [::]:0 q=0/5 python3/26837/fd4",
	})

	// no Netid column and no command: UNCONN rows make the section UDP,
	// connected ESTAB row included
	socks, _ = socketsFile(t, "parse/testdata/sockets/ss-uanp.txt")
	checkLines(t, "ss-uanp.txt", byLine(socks), []string{
		"2  udp ESTAB 10.77.0.1:44019 10.77.0.2:53 python3/26837/fd5",
		"3  udp UNCONN 0.0.0.0:68 0.0.0.0:0 %nm-t-v0 socat/26834/fd5",
	})
	if len(socks) != 6 {
		t.Errorf("ss-uanp.txt: %d sockets, want 6", len(socks))
	}

	socks, _ = socketsFile(t, "parse/testdata/sockets/ss-tano-state-time-wait.txt")
	checkLines(t, "ss-tano-state-time-wait.txt", byLine(socks), []string{
		"2  tcp  10.77.0.1:8080 10.77.0.2:60944 timer=timewait,58sec,0",
		"7  tcp  [fd77::1]:8080 [fd77::2]:45298 timer=timewait,58sec,0",
	})
	if len(socks) != 6 {
		t.Errorf("ss-tano-state-time-wait.txt: %d sockets, want 6", len(socks))
	}

	// -e fields on the row, -i and -m on continuation lines, and ss's
	// complaints on stderr captured with 2>&1
	socks, _ = socketsFile(t, "parse/testdata/sockets/ss-tanoeim.txt")
	if len(socks) != 16 {
		t.Fatalf("ss-tanoeim.txt: %d sockets, want 16", len(socks))
	}
	syn := socks[2]
	if sockLine(syn) != "17  tcp SYN-SENT 10.77.0.1:42392 10.77.0.2:9001 q=0/1 timer=on,1.976ms,5" ||
		!strings.HasPrefix(syn.Info, "ino:124376 sk:1023 cgroup:unreachable:1 <-> skmem:(r0,rb131072,") ||
		!strings.Contains(syn.Info, " retrans:1/5 lost:1 rcv_ssthresh:64240") {
		t.Errorf("SYN-SENT socket %s info %q", sockLine(syn), syn.Info)
	}
	if tw := socks[9]; sockLine(tw) != "31  tcp TIME-WAIT 10.77.0.1:8080 10.77.0.2:60944 timer=timewait,58sec,0" || tw.Info != "ino:0 sk:102a" {
		t.Errorf("TIME-WAIT socket %s info %q", sockLine(tw), tw.Info)
	}

	_, counts := socketsFile(t, "parse/testdata/sockets/ss-counts.txt")
	var got []string
	for _, c := range counts {
		got = append(got, countLine(c))
	}
	want := []string{
		"2  proto=tcp state=ESTAB n=5",
		"3  proto=tcp state=LISTEN n=4",
		"4  proto=tcp state=SYN-SENT n=1",
		"6  proto=tcp state=TIME-WAIT n=6",
		// "ss -tan state time-wait" has no State column: $4 is the peer
		"9  proto=tcp state=TIME-WAIT peer=10.77.0.2 n=5",
		"10  proto=tcp state=TIME-WAIT peer=fd77::2 n=1",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("ss-counts.txt:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestSocketsRealNetstat(t *testing.T) {
	socks, _ := socketsFile(t, "parse/testdata/sockets/netstat-lntup.txt")
	if len(socks) != 9 {
		t.Errorf("netstat-lntup.txt: %d sockets, want 9", len(socks))
	}
	checkLines(t, "netstat-lntup.txt", byLine(socks), []string{
		"3  tcp LISTEN 127.0.0.1:10257 0.0.0.0:0 kube-controll/26831...",
		"5  tcp6 LISTEN [::]:8080 [::]:0 python3/26830",
		"7  udp UNCONN 0.0.0.0:68 0.0.0.0:0 socat/26834",
		"9  udp6 UNCONN [fe80::77:ff:fe00:1]:546 [::]:0 python3/26837",
		"11  udp6 UNCONN invalid AddrPort [::]:0 socat/26836 note=address cut short by netstat (23 columns; netstat -W prints it whole)",
	})
	if s := socks[8]; s.Local.Port() != 5400 {
		t.Errorf("cut address: port %d, want 5400 kept", s.Local.Port())
	}
	if !socks[0].MatchesProcess("kube-controller-manager") {
		t.Errorf("kube-controll (netstat's 19 columns) should match kube-controller-manager")
	}

	socks, _ = socketsFile(t, "parse/testdata/sockets/netstat-tuneopa.txt")
	if len(socks) != 22 {
		t.Errorf("netstat-tuneopa.txt: %d sockets, want 22", len(socks))
	}
	checkLines(t, "netstat-tuneopa.txt", byLine(socks), []string{
		"5  tcp SYN-SENT 10.77.0.1:42392 10.77.0.2:9001 q=0/1 socat/26925 timer=on (1.92/5/0)",
		"12  tcp6 TIME-WAIT 10.77.0.1:8080 10.77.0.2:60944 timer=timewait (58.85/0/0)",
		"19  udp ESTAB 10.77.0.1:44019 10.77.0.2:53 python3/26837 timer=off (0.00/0/0)",
	})
	if socks[0].Info != "user:0 ino:123343" {
		t.Errorf("User and Inode columns: %q", socks[0].Info)
	}

	_, counts := socketsFile(t, "parse/testdata/sockets/netstat-counts.txt")
	var got []string
	for _, c := range counts {
		got = append(got, countLine(c))
	}
	want := "2  proto=tcp state=ESTAB n=5|4  proto=tcp state=LISTEN n=4|5  proto=tcp state=SYN-SENT n=1|6  proto=tcp state=TIME-WAIT n=6"
	if strings.Join(got, "|") != want {
		t.Errorf("netstat-counts.txt: %s\nwant %s", strings.Join(got, "|"), want)
	}
}

// ss -tan and netstat -tan taken together read as the same table: ss's
// [::ffff:10.77.0.1]:8080 and *:8080 are netstat's 10.77.0.1:8080 and
// :::8080.
func TestSocketsSSAgreesWithNetstat(t *testing.T) {
	key := func(socks []model.Socket) []string {
		var out []string
		for _, s := range socks {
			out = append(out, s.State+" "+s.Local.String()+" "+s.Peer.String())
		}
		sort.Strings(out)
		return out
	}
	ss, _ := socketsFile(t, "parse/testdata/sockets/ss-tan.txt")
	ns, _ := socketsFile(t, "parse/testdata/sockets/netstat-tan.txt")
	a, b := key(ss), key(ns)
	if len(a) != 16 || strings.Join(a, "\n") != strings.Join(b, "\n") {
		t.Errorf("ss -tan:\n%s\nnetstat -tan:\n%s", strings.Join(a, "\n"), strings.Join(b, "\n"))
	}
}

func TestSocketsForms(t *testing.T) {
	in := `=== node1 ===
Netid  State      Recv-Q Send-Q Local Address:Port               Peer Address:Port
tcp    LISTEN     0      128      *:22                    *:*                    users:(("sshd",1231,3))
udp    UNCONN     0      0        :::37968                :::12345               users:(("rpc.statd",pid=29559,fd=10))
tcp    ESTAB      0      0      ::ffff:10.0.0.5:443       ::ffff:10.0.0.9:51000
u_str  ESTAB      0      0       /run/systemd/journal/stdout 24680       * 24679
LISTEN    7          10                            *:9000                       *:*         users:(("php-fpm",pid=11084,fd=9),...,("php-fpm",pid=10529,fd=7))
root@node2:~# ss -tn state established
Recv-Q Send-Q Local Address:Port Peer Address:Port Process
0      0      10.0.0.2:22       10.0.0.9:50000    users:(("sshd: root@pts",pid=7,fd=4))
	 cubic wscale:7,7 rto:204
root@node2:~# ss -lt
LISTEN     0      128    127.0.0.1:vmware-fdm                  *:*
LISTEN     0      128    localhost:6443                  *:*
root@node2:~# sudo netstat -tunapW
(Not all processes could be identified, non-owned process info
 will not be shown, you would have to be root to see it all.)
Active Internet connections (servers and established)
Proto Recv-Q Send-Q Local Address           Foreign Address         State       PID/Program name
tcp6       0      0 fd00:1234:5678:9abc:def0::1:6443 :::*          LISTEN      880/kube-apiserver
raw6       0      0 :::58                   :::*                    7           -
Active UNIX domain sockets (servers and established)
Proto RefCnt Flags       Type       State         I-Node   PID/Program name     Path
unix  2      [ ACC ]     STREAM     LISTENING     535      1/systemd            /run/lvm/lvmetad.socket
# ss -s
Total: 177 (kernel 1565)
TCP:   1193 (estab 5, closed 1178, orphaned 0, synrecv 0, timewait 1178/0), ports 0

Transport Total     IP        IPv6
*	  1565      -         -
RAW	  1         0         1
# ss -tan | awk '{print $5}' | cut -d: -f1 | sort | uniq -c
      3 10.0.0.9:50000
`
	socks, counts, err := Sockets(strings.NewReader(in), "forms.txt")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range socks {
		got = append(got, sockLine(s))
	}
	want := []string{
		"3 node1 tcp LISTEN [::]:22 [::]:0 q=0/128 sshd/1231/fd3",
		"4 node1 udp UNCONN [::]:37968 [::]:12345 rpc.statd/29559/fd10",
		"5 node1 tcp ESTAB 10.0.0.5:443 10.0.0.9:51000",
		// no Netid column under the same header: a TCP-only state makes it tcp
		"7 node1 tcp LISTEN [::]:9000 [::]:0 q=7/10 php-fpm/11084/fd9",
		"10 node2 tcp ESTAB 10.0.0.2:22 10.0.0.9:50000 sshd: root@pts/7/fd4",
		"13 node2 tcp LISTEN 127.0.0.1:0 [::]:0 q=0/128 note=port printed as a service name (ss without -n): read as 0",
		"14 node2 tcp LISTEN invalid AddrPort [::]:0 q=0/128 note=host printed as a name (ss without -n): address unknown",
		"20 node2 tcp6 LISTEN [fd00:1234:5678:9abc:def0::1]:6443 [::]:0 kube-apiserver/880",
		"21 node2 raw6 UNCONN [::]:58 [::]:0",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("sockets:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(socks) > 4 && (len(socks[3].Users) != 2 || socks[3].Users[1].PID != 10529) {
		t.Errorf("elided users list: %+v", socks[3].Users)
	}
	if len(socks) > 6 && socks[6].Local.Port() != 6443 {
		t.Errorf("host printed as a name: port %d, want 6443 kept", socks[6].Local.Port())
	}
	if len(socks) > 4 && socks[4].Info != "cubic wscale:7,7 rto:204" {
		t.Errorf("ss -i line not attached: %q", socks[4].Info)
	}
	got = nil
	for _, c := range counts {
		got = append(got, countLine(c))
	}
	want = []string{
		"26 node2 proto= n=177",
		"27 node2 proto=tcp n=1193",
		"27 node2 proto=tcp state=ESTAB n=5",
		"27 node2 proto=tcp state=CLOSED n=1178",
		"27 node2 proto=tcp state=orphaned n=0",
		"27 node2 proto=tcp state=SYN-RECV n=0",
		"27 node2 proto=tcp state=TIME-WAIT n=1178",
		"30 node2 proto= n=1565",
		"31 node2 proto=raw n=1",
		"31 node2 proto=raw family=ipv4 n=0",
		"31 node2 proto=raw family=ipv6 n=1",
		"33 node2 proto=tcp peer=10.0.0.9 port=50000 n=3",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("counts:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestSockCmd(t *testing.T) {
	for cmd, want := range map[string]string{
		`ss -tan | grep "TIME-WAIT"| awk '{print $4}' |awk -F':' '{print $1}' |sort |uniq -c`: "ss tcp count local TIME-WAIT",
		`ss -tan state time-wait | awk '{print $4}' | sort | uniq -c`:                         "ss tcp count peer TIME-WAIT",
		`ss -tuan | awk '{print $2}' | sort | uniq -c`:                                        "ss  count state ",
		`ss -tan | awk '{print $1}' | sort | uniq -c | sort -rn`:                              "ss tcp count state ",
		`ss -tan | grep -E "ESTAB|TIME-WAIT" | awk '{print $5}' | sort | uniq -c`:             "ss tcp count peer ",
		`ss -tan | grep -v LISTEN | awk '{print $5}' | sort | uniq -c`:                        "ss tcp count peer ",
		`sudo netstat -tan | awk '/TIME_WAIT/ {print $5}' | cut -d: -f1 | sort | uniq -c`:     "netstat tcp count peer TIME-WAIT",
		`netstat -ant | awk '{print $6}' | sort | uniq -c`:                                    "netstat tcp count state ",
		`ip netns exec cni-1 ss -lnt`:                                                         "ss tcp  ",
		`ss -s`:                                                                               "ss   ",
	} {
		c, ok := parseSockCmd(cmd)
		got := fmt.Sprintf("%s %s", c.tool, c.proto)
		if c.count {
			got += " count"
		}
		got += fmt.Sprintf(" %s %s", c.column, c.state)
		if !ok || got != want {
			t.Errorf("%s:\n got %q\nwant %q", cmd, got, want)
		}
	}
	if c, ok := parseSockCmd("ss -xap"); !ok || !c.skip {
		t.Errorf("ss -x lists only unix sockets: %+v", c)
	}
	if _, ok := parseSockCmd("ipvsadm -Ln"); ok {
		t.Errorf("ipvsadm is neither ss nor netstat")
	}
}

func TestSocketsErrors(t *testing.T) {
	in := `State  Recv-Q Send-Q Local Address:Port Peer Address:Port
ESTAB  0      0      10.0.0.1:22        10.0.0.2:70000
ESTAB  0      0      10.0.0.1:22        10.0.0.2:50000
LISTEN 0      128    10.0.0.300:80       0.0.0.0:*
this is not a socket
	 cubic wscale:7,7
tcp        0      0 0.0.0.0:22              0.0.0.0:*               LISTEN      1/2/3 4 5
12 nonsense-value!
ESTAB  0      0      10.0.0.1:22        10.0.0.3:50000 users:(("x",pid=z,fd=1))
`
	socks, _, err := Sockets(strings.NewReader(in), "bad.txt")
	var list model.ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("error %v, want a list", err)
	}
	var at []string
	for _, e := range list {
		at = append(at, e.Pos.String())
		if !errors.Is(e, format.ErrSyntax) {
			t.Errorf("%v does not wrap format.ErrSyntax", e)
		}
	}
	// line 6, the -i line after a bad line, attaches to nothing and is no error
	if strings.Join(at, " ") != "bad.txt:2 bad.txt:4 bad.txt:5 bad.txt:8 bad.txt:9" {
		t.Errorf("errors at %v, want lines 2 4 5 8 9:\n%v", at, err)
	}
	if len(socks) != 2 || socks[0].Pos.Line != 3 || socks[1].Pos.Line != 7 {
		t.Errorf("read %d sockets, want the ones of lines 3 and 7: %+v", len(socks), socks)
	}
}

func FuzzSockets(f *testing.F) {
	for _, rel := range []string{
		"parse/testdata/sockets/ss-tanp.txt", "parse/testdata/sockets/ss-tanoeim.txt",
		"parse/testdata/sockets/netstat-tuneopa.txt", "parse/testdata/sockets/ss-counts.txt",
		"fixtures/seeds/000-apiserver-affinity/netstat.txt",
	} {
		b, err := os.ReadFile(filepath.Join(testutil.Root(), rel))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Add("# ss -s\nTotal: 177 (kernel 1565)\nTCP:   1193 (estab 5, closed 1178, orphaned 0, synrecv 0, timewait 1178/0), ports 0\n")
	f.Add("tcp LISTEN 0 128 *:22 *:* users:((\"sshd\",1231,3))\n")
	f.Fuzz(func(t *testing.T, in string) {
		socks, counts, err := Sockets(strings.NewReader(in), "fuzz.txt")
		parsetest.CheckFuzzErrors(t, err, "fuzz.txt")
		for _, s := range socks {
			if s.Pos.Line == 0 || s.Proto == "" {
				t.Fatalf("socket without a line or protocol: %+v", s)
			}
		}
		for _, c := range counts {
			if c.Pos.Line == 0 || c.Count < 0 {
				t.Fatalf("bad count: %+v", c)
			}
		}
		sniffSS("fuzz.txt", []byte(in))
		sniffNetstat("fuzz.txt", []byte(in))
	})
}

// A bundle layout that names the command (a Rancher collector's ssuapn
// file) settles the protocol of rows without a Netid column.
func TestSocketsLayoutCommand(t *testing.T) {
	in := "State Recv-Q Send-Q Local Address:Port Peer Address:Port Process\nESTAB 0 0 10.0.0.1:41000 10.0.0.53:53 users:((\"coredns\",pid=9,fd=3))\n"
	for cmd, want := range map[string]string{"ss -uapn": "udp", "ss -tapn": "tcp", "": "tcp"} {
		var snap model.Snapshot
		src := &format.File{Name: "ssuapn", Node: "n1", Command: cmd}
		n, err := SSFormat.Parse(context.Background(), strings.NewReader(in), src, &snap)
		if err != nil || n != 1 || len(snap.Sockets) != 1 {
			t.Fatalf("%q: %d records, %v", cmd, n, err)
		}
		if s := snap.Sockets[0]; s.Proto != want || s.Node != "n1" || s.Process != "coredns" {
			t.Errorf("command %q: %+v, want proto %s on n1", cmd, s, want)
		}
	}
}

// netstat -g lists multicast group memberships: no sockets, nothing to
// report. A table after it is read as usual.
func TestNetstatGroupMemberships(t *testing.T) {
	in := `IPv6/IPv4 Group Memberships
Interface       RefCnt Group
--------------- ------ ---------------------
lo              1      224.0.0.1
eth0            4      ff02::1
Active Internet connections (only servers)
Proto Recv-Q Send-Q Local Address           Foreign Address         State
tcp        0      0 0.0.0.0:22              0.0.0.0:*               LISTEN
`
	if got := sniffNetstat("g.txt", []byte(in)); got < 90 {
		t.Errorf("netstat sniff %d", got)
	}
	if got := sniffSS("g.txt", []byte(in)); got != 0 {
		t.Errorf("ss sniff %d", got)
	}
	g := strings.Join(strings.SplitAfter(in, "\n")[:5], "")
	if got := sniffNetstat("g.txt", []byte(g)); got < 90 {
		t.Errorf("netstat sniff of the group table alone %d", got)
	}
	socks, _, err := Sockets(strings.NewReader(in), "g.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(socks) != 1 || sockLine(socks[0]) != "8  tcp LISTEN 0.0.0.0:22 0.0.0.0:0" {
		t.Errorf("sockets %v", socks)
	}
}
