package host

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/internal/parsetest"
)

func sysctlLines(l []model.Sysctl) string {
	var b strings.Builder
	for _, s := range l {
		fmt.Fprintf(&b, "%d %s=%s @%s\n", s.Pos.Line, s.Name, s.Value, s.Node)
	}
	return b.String()
}

// The /proc/sys dumps of fixtures/real (multi-file/ and local/multi-file/):
// each file's value read as the sysctl its path names, at the value's line.
func TestSysctlFilesReal(t *testing.T) {
	bridge := func(first int, node string) string {
		var b strings.Builder
		for i, kv := range []string{"bridge-nf-call-arptables=1", "bridge-nf-call-ip6tables=1", "bridge-nf-call-iptables=1",
			"bridge-nf-filter-pppoe-tagged=0", "bridge-nf-filter-vlan-tagged=0", "bridge-nf-pass-vlan-input-dev=0"} {
			fmt.Fprintf(&b, "%d net.bridge.%s @%s\n", first+3*i, kv, node)
		}
		return b.String()
	}
	for file, want := range map[string]string{
		"multi-file/index36506000102_head-proc-sys-net-bridge-star_after-modprobe.txt": bridge(3, "worker-1"),
		// The prompt runs into the first header.
		"multi-file/index36716860421_head-proc-sys-net-bridge-star_prompt-glued-to-first-header.txt": bridge(2, "worker-1"),
		"local/multi-file/local_head-proc-sys-net-bridge-star.txt":                                   bridge(2, ""),
		"local/multi-file/local_head-proc-sys-net-ipv4-conf-star-rp_filter.txt": `2 net.ipv4.conf.all.rp_filter=1 @
5 net.ipv4.conf.default.rp_filter=0 @
8 net.ipv4.conf.lo.rp_filter=0 @
11 net.ipv4.conf.nm-real-r0.rp_filter=1 @
14 net.ipv4.conf.nm-real-r1.rp_filter=0 @
`,
		"local/multi-file/local_tail-n+1_nf_conntrack-max-count-buckets.txt": `2 net.netfilter.nf_conntrack_max=262144 @
5 net.netfilter.nf_conntrack_count=4 @
8 net.netfilter.nf_conntrack_buckets=262144 @
`,
		"local/multi-file/local_grep-r-dot_conf-rp_filter_relative.txt": `1 net.ipv4.conf.nm-real-r0.rp_filter=1 @
2 net.ipv4.conf.all.rp_filter=1 @
3 net.ipv4.conf.default.rp_filter=0 @
4 net.ipv4.conf.all.log_martians=1 @
`,
		"local/multi-file/local_for-loop-path-colon-value.txt": `1 net.ipv4.ip_forward=1 @
2 net.ipv4.conf.all.rp_filter=1 @
`,
	} {
		got, err := sysctlFile(t, filepath.Join("fixtures/real", file))
		if err != nil {
			t.Errorf("%s: %v", file, err)
		}
		if s := sysctlLines(got); s != want {
			t.Errorf("%s:\n got\n%s\nwant\n%s", file, s, want)
		}
	}
	got, err := sysctlFile(t, "fixtures/real/local/multi-file/local_grep-r-dot_proc-sys-net-ipv4-conf-iface_head20.txt")
	if err != nil || len(got) != 20 || got[0].Name != "net.ipv4.conf.nm-real-r0.accept_local" || got[19].Pos.Line != 20 {
		t.Errorf("grep -r: %v\n%s", err, sysctlLines(got))
	}
}

// cat of /proc/sys files after prompts that name them, head of a file that
// is no sysctl among them (skipped), and a line of no known shape (a
// warning; the rest is read).
func TestSysctlCat(t *testing.T) {
	in := `[root@node1 ~]# cat /proc/sys/net/ipv4/ip_forward
1
[root@node1 ~]# cat /proc/sys/net/ipv4/ip_local_port_range /proc/sys/net/ipv4/conf/eth0.100/rp_filter
32768	60999
2
node2 $ head /etc/hostname /proc/sys/net/core/somaxconn
==> /etc/hostname <==
node2

==> /proc/sys/net/core/somaxconn <==
4096
what is this
node2:~ # cat /proc/sys/vm/swappiness
60
`
	got, err := Sysctl(strings.NewReader(in), "s.txt")
	if e := parsetest.SyntaxErrorsAt(t, err); e != "s.txt:12" {
		t.Errorf("warnings at %s: %v", e, err)
	}
	want := `2 net.ipv4.ip_forward=1 @node1
4 net.ipv4.ip_local_port_range=32768 60999 @node1
5 net.ipv4.conf.eth0/100.rp_filter=2 @node1
11 net.core.somaxconn=4096 @node2
14 vm.swappiness=60 @node2
`
	if s := sysctlLines(got); s != want {
		t.Errorf("got\n%s\nwant\n%s", s, want)
	}
	if sc := sniffSysctl("", []byte(in)); sc < 60 {
		t.Errorf("sniff %d", sc)
	}
}

func FuzzSysctlFiles(f *testing.F) {
	for _, pattern := range []string{"fixtures/real/multi-file/*.txt", "fixtures/real/local/multi-file/*.txt"} {
		files, _ := filepath.Glob(filepath.Join(testutil.Root(), pattern))
		for _, p := range files {
			b, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(string(b))
		}
	}
	f.Add("# cat /proc/sys/a/b /proc/sys/c/d\n1\n==> /proc/sys/x <==\n==> <==\n")
	f.Fuzz(func(t *testing.T, in string) {
		got, err := Sysctl(strings.NewReader(in), "f.txt")
		parsetest.CheckFuzzErrors(t, err, "f.txt")
		for _, s := range got {
			if s.Pos.Line == 0 || s.Name == "" || strings.ContainsAny(s.Value, "\t\n") {
				t.Fatalf("bad record %+v", s)
			}
		}
		if sc := sniffSysctl("f.txt", []byte(in)); sc < 0 || sc > 100 {
			t.Fatalf("sniff %d", sc)
		}
	})
}
