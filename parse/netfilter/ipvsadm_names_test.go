package netfilter

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/internal/parsetest"
)

func ipvsLines(svcs []model.IPVSService) []string {
	var s []string
	for _, v := range svcs {
		var reals []string
		for _, r := range v.Reals {
			reals = append(reals, fmt.Sprintf("%s/%s/%d/%d/%d", r.Addr, r.Forward, r.Weight, r.ActiveConn, r.InactConn))
		}
		s = append(s, fmt.Sprintf("%d %s %s %s -> %s", v.Pos.Line, v.Proto, v.Addr, v.Scheduler, strings.Join(reals, " ")))
	}
	return s
}

// ipvsadm -L without -n (kube-router #415): ports printed as their
// /etc/services names on virtual and real servers, numeric where no name
// exists; every name there is known.
func TestIPVSadmServiceNames(t *testing.T) {
	rel := "fixtures/real/ipvsadm/kube-router-issue415_ipvsadm-L_no-n_service-names-as-ports.txt"
	svcs := parsetest.ReadFile(t, rel, IPVSadm)
	got := ipvsLines(svcs)
	reals := 0
	for _, v := range svcs {
		reals += len(v.Reals)
		if v.Note != "" {
			t.Errorf("service %s noted %q", v.Addr, v.Note)
		}
	}
	if len(svcs) != 9 || reals != 17 {
		t.Fatalf("%d services, %d real servers:\n%s", len(svcs), reals, strings.Join(got, "\n"))
	}
	want := map[int]string{
		0: "1 TCP 100.64.173.65:80 rr -> 100.98.117.152:3000/Masq/1/0/0 100.98.238.107:3000/Masq/1/0/0 100.99.233.52:3000/Masq/1/0/0",
		1: "5 TCP 100.64.173.65:5432 rr -> 100.98.117.152:5432/Masq/1/0/0 100.98.238.107:5432/Masq/1/0/0 100.99.233.52:5432/Masq/1/0/0",
	}
	for i, w := range want {
		if got[i] != w {
			t.Errorf("service %d = %q, want %q", i, got[i], w)
		}
	}
	ports := map[uint16]bool{}
	for _, v := range svcs {
		ports[v.Addr.Port()] = true
		for _, r := range v.Reals {
			ports[r.Addr.Port()] = true
		}
	}
	for _, p := range []uint16{80, 443, 5432, 9102, 8080, 3000, 5601} {
		if !ports[p] {
			t.Errorf("no port %d read (%v)", p, ports)
		}
	}
	if ports[0] {
		t.Errorf("a port read as 0")
	}
}

// Names that cannot be resolved offline (host names, ports no registry
// knows) are 0 with a note, and make one warning for the whole listing.
func TestIPVSadmUnresolvedNames(t *testing.T) {
	in := "TCP  lb.example.internal:https rr\n" +
		"  -> 10.0.0.1:no-such-port         Masq    1      2          3\n" +
		"  -> 10.0.0.2:no-such-port         Masq    1      0          0\n" +
		"TCP  10.96.0.1:https rr\n" +
		"  -> node-a.example:no-such-port   Masq    1      0          0\n" +
		"  -> node-b.example:6443           Masq    2      4          5\n" +
		"TCP  10.96.0.1:bad/port rr\n"
	svcs, err := IPVSadm(strings.NewReader(in), "l.txt")
	var list model.ErrorList
	if !errors.As(err, &list) || len(list) != 2 || list[0].Pos.Line != 7 || list[1].Pos.Line != 1 ||
		!strings.Contains(list[1].Error(), "4 names ipvsadm printed without -n could not be resolved (lb.example.internal, no-such-port, node-a.example, node-b.example)") {
		t.Fatalf("errors %q", []*model.Error(list))
	}
	if len(svcs) != 2 || svcs[0].Addr.Port() != 443 || svcs[0].Addr.Addr().IsValid() || svcs[0].Note != "host name lb.example.internal not resolved" {
		t.Fatalf("services %+v", svcs)
	}
	r := svcs[0].Reals
	if len(r) != 2 || r[0].Addr.Addr().String() != "10.0.0.1" || r[0].Addr.Port() != 0 || r[0].ActiveConn != 2 || r[0].InactConn != 3 || r[0].Note != "port name no-such-port not resolved" {
		t.Errorf("reals %+v", r)
	}
	r = svcs[1].Reals
	if svcs[1].Addr.String() != "10.96.0.1:443" || len(r) != 2 || r[1].Addr.Port() != 6443 || r[1].Note != "host name node-b.example not resolved" || r[1].Weight != 2 || r[1].InactConn != 5 ||
		r[0].Note != "port name no-such-port not resolved; host name node-a.example not resolved" {
		t.Errorf("second service %+v", svcs[1])
	}
}

func FuzzIPVSadmNames(f *testing.F) {
	parsetest.AddSeedFiles(f, []string{
		"fixtures/real/ipvsadm/kube-router-issue415_ipvsadm-L_no-n_service-names-as-ports.txt",
		"fixtures/real/ipvsadm/kubernetes-issue88012_ipvsadm-Ln_cut-start_vs-without-real-servers.txt",
	})
	f.Add("TCP  lb.example:https rr\n  -> [fd00::1]:http-alt Masq 1 0 0\n")
	f.Fuzz(func(t *testing.T, in string) {
		svcs, err := IPVSadm(strings.NewReader(in), "fuzz.txt")
		parsetest.CheckFuzzErrors(t, err, "fuzz.txt")
		for _, s := range svcs {
			if s.Pos.Line == 0 || (s.Proto != "FWM" && !s.Addr.Addr().IsValid() && s.Note == "") {
				t.Fatalf("service %+v", s)
			}
			for _, r := range s.Reals {
				if r.Pos.Line == 0 || (!r.Addr.Addr().IsValid() && r.Note == "") {
					t.Fatalf("real server %+v", r)
				}
			}
		}
	})
}

// ipvsadm -Ln pasted from its middle (kubernetes #88012): the first line is
// a real server of a virtual service outside the excerpt (an error at its
// line), two services have no real server, one maps :9002 to :9001.
func TestIPVSadmCutStart(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(testutil.Root(), "fixtures/real/ipvsadm/kubernetes-issue88012_ipvsadm-Ln_cut-start_vs-without-real-servers.txt"))
	if err != nil {
		t.Fatal(err)
	}
	svcs, err := IPVSadm(strings.NewReader(string(b)), "cut.txt")
	var list model.ErrorList
	if !errors.As(err, &list) || len(list) != 1 || list[0].Pos.Line != 1 {
		t.Fatalf("errors %v", err)
	}
	empty, mapped := 0, ""
	for _, s := range svcs {
		if len(s.Reals) == 0 {
			empty++
		}
		if s.Addr.Port() == 9002 && len(s.Reals) > 0 {
			mapped = fmt.Sprint(s.Reals[0].Addr.Port())
		}
	}
	if len(svcs) != 13 || empty != 2 || mapped != "9001" || svcs[0].Pos.Line != 2 {
		t.Errorf("%d services, %d without real servers, :9002 -> %s:\n%s", len(svcs), empty, mapped, strings.Join(ipvsLines(svcs), "\n"))
	}
}
