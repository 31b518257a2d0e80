package netfilter_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/parse"
	"github.com/netmortem/netmortem/parse/internal/parsetest"
	"github.com/netmortem/netmortem/parse/netfilter"
)

// ufwLines prints a ruleset's chains, policies and rules, one a line.
func ufwLines(t *testing.T, in string) []string {
	t.Helper()
	sets, err := netfilter.UFWStatus(strings.NewReader(in), "ufw.txt")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, rs := range sets {
		out = append(out, fmt.Sprintf("ruleset node=%q format=%s", rs.Node, rs.Format))
		for _, c := range rs.Tables[0].Chains {
			out = append(out, fmt.Sprintf("%s policy=%q", c.Name, c.Policy))
			for _, r := range c.Rules {
				out = append(out, fmt.Sprintf("  %d %s p=%s dport=%s src=%s dst=%s in=%s out=%s sport=%s", r.Pos.Line,
					r.Target, r.Proto, r.DPort, r.Src, r.Dst, r.InIface, r.OutIface, r.SPort))
			}
		}
	}
	return out
}

// ufw status verbose: the defaults give the policies; each row a rule of
// the chain its direction names. The first listing is the shape
// fr8r/fr8r-ansible#107 pasted.
func TestUFWStatusVerbose(t *testing.T) {
	in := "vagrant@radiant2:~$ sudo ufw status verbose\n" +
		"Status: active\n" +
		"Logging: on (low)\n" +
		"Default: deny (incoming), allow (outgoing), deny (routed)\n" +
		"New profiles: skip\n" +
		"\n" +
		"To                         Action      From\n" +
		"--                         ------      ----\n" +
		"22/tcp on eth1             ALLOW IN    Anywhere\n" +
		"6443/tcp                   ALLOW IN    10.0.0.0/8                 # apiserver\n" +
		"6783:6784/udp              DENY IN     Anywhere\n" +
		"10.0.0.5 10250/tcp         LIMIT IN    10.0.0.0/8\n" +
		"OpenSSH                    ALLOW IN    Anywhere\n" +
		"80,443/tcp (Nginx Full)    ALLOW IN    Anywhere                   (log)\n" +
		"Anywhere on cni0           ALLOW FWD   Anywhere on eth0\n" +
		"53                         REJECT OUT  Anywhere\n" +
		"22/tcp (v6) on eth1        ALLOW IN    Anywhere (v6)\n"
	want := []string{
		`ruleset node="radiant2" format=ufw-status`,
		`INPUT policy="DROP"`,
		`  9 ACCEPT p=tcp dport=22 src= dst= in=eth1 out= sport=`,
		`  10 ACCEPT p=tcp dport=6443 src=10.0.0.0/8 dst= in= out= sport=`,
		`  11 DROP p=udp dport=6783:6784 src= dst= in= out= sport=`,
		`  12 ACCEPT p=tcp dport=10250 src=10.0.0.0/8 dst=10.0.0.5 in= out= sport=`,
		`  13 ACCEPT p= dport=OpenSSH src= dst= in= out= sport=`,
		`  14 ACCEPT p=tcp dport=80,443 src= dst= in= out= sport=`,
		`FORWARD policy="DROP"`,
		`  15 ACCEPT p= dport= src= dst= in=eth0 out=cni0 sport=`,
		`OUTPUT policy="ACCEPT"`,
		`  16 REJECT p= dport=53 src= dst= in= out= sport=`,
	}
	parsetest.CheckLines(t, "ufw.txt", ufwLines(t, in), want)
}

// ufw status without verbose shows no defaults: the policies stay unknown.
// ufw status numbered puts "[ N]" before each row; inactive gives nothing.
func TestUFWStatusPlainNumberedInactive(t *testing.T) {
	in := "Status: active\n" +
		"\n" +
		"     To                         Action      From\n" +
		"     --                         ------      ----\n" +
		"[ 1] 22/tcp                     ALLOW IN    Anywhere\n" +
		"[ 2] 8472/udp                   ALLOW IN    192.168.1.0/24\n" +
		"$ ssh node2 sudo ufw status\n" +
		"Status: inactive\n"
	want := []string{
		`ruleset node="" format=ufw-status`,
		`INPUT policy=""`,
		`  5 ACCEPT p=tcp dport=22 src= dst= in= out= sport=`,
		`  6 ACCEPT p=udp dport=8472 src=192.168.1.0/24 dst= in= out= sport=`,
		`FORWARD policy=""`,
		`OUTPUT policy=""`,
	}
	parsetest.CheckLines(t, "ufw.txt", ufwLines(t, in), want)
}

// A row without its action, or rows before "Status: active", are
// reported with their line; the rest is read.
func TestUFWStatusBadRows(t *testing.T) {
	in := "To Action From\n" +
		"Status: active\n" +
		"To                         Action      From\n" +
		"22/tcp                     PERMIT      Anywhere\n" +
		"80/tcp                     ALLOW       Anywhere\n"
	sets, err := netfilter.UFWStatus(strings.NewReader(in), "ufw.txt")
	if err == nil || !strings.Contains(err.Error(), "ufw.txt:1") || len(sets) != 1 || len(sets[0].Tables[0].Chains[0].Rules) != 1 {
		t.Fatalf("%v: %+v", err, sets)
	}
	if !strings.Contains(err.Error(), "and 1 more") {
		t.Errorf("the bad row is not reported: %v", err)
	}
}

func TestUFWStatusSniff(t *testing.T) {
	own := []string{"analyzer/rules/testdata/node-input-drop/hit-ufw-default-deny/ufw-status.txt"}
	others := []string{"fixtures/field/node-input-drop--weave-issue-2033/iptables-save.txt"}
	parsetest.CheckSniff(t, parse.Formats(), netfilter.UFWStatusFormat, own, others)
}

func FuzzUFWStatus(f *testing.F) {
	f.Add("Status: active\nDefault: deny (incoming), allow (outgoing), deny (routed)\nTo Action From\n22/tcp ALLOW IN Anywhere\n")
	f.Add("Status: active\n     To    Action    From\n[ 1] 10.0.0.5 22/tcp on eth0   LIMIT   1.2.3.4 port 5 # c\n")
	f.Fuzz(func(t *testing.T, in string) {
		sets, _ := netfilter.UFWStatus(strings.NewReader(in), "f")
		for _, rs := range sets {
			if len(rs.Tables) != 1 || len(rs.Tables[0].Chains) != 3 {
				t.Fatalf("ruleset %+v", rs)
			}
		}
	})
}
