package netfilter

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/internal/parsetest"
)

func TestIPVSadmSeed(t *testing.T) {
	path := filepath.Join(testutil.Root(), "fixtures/seeds/002-synack-reset/ipvsadm.txt")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	svcs, err := IPVSadm(f, "ipvsadm.txt")
	if err != nil {
		t.Fatal(err)
	}
	// "# ipvsadm -l -n | grep TCP | less", then 18 services on
	// 169.254.20.10 and 15 on 10.10.85.235 (the write-up's cut).
	if len(svcs) != 33 {
		t.Fatalf("%d services, want 33", len(svcs))
	}
	first, last := svcs[0], svcs[len(svcs)-1]
	if first.Addr.String() != "169.254.20.10:20869" || first.Scheduler != "rr" || first.Pos.Line != 2 || len(first.Reals) != 0 {
		t.Errorf("first service %+v", first)
	}
	if last.Addr.String() != "10.10.85.235:36704" || last.Pos.String() != "ipvsadm.txt:34" {
		t.Errorf("last service %s at %s", last.Addr, last.Pos)
	}
}

func TestIPVSadmListings(t *testing.T) {
	svcs, err := IPVSadm(strings.NewReader(parsetest.IPVSListing), "ipvs.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(svcs) != 4 {
		t.Fatalf("%d services, want 4 (the --stats and --rate listings merge into the first)", len(svcs))
	}
	api := svcs[0]
	if api.Pos.Line != 4 || len(api.Reals) != 2 || api.Reals[0].ActiveConn != 4 || api.Reals[1].Weight != 0 || api.Reals[1].InactConn != 12 {
		t.Errorf("apiserver service %+v", api)
	}
	if api.Stats == nil || api.Stats.Conns != 12 || api.Stats.OutBytes != 1234000 || api.Rate == nil || api.Rate.OutBytes != 299 {
		t.Errorf("apiserver counters: stats %+v rate %+v", api.Stats, api.Rate)
	}
	if api.Reals[0].Stats == nil || api.Reals[0].Stats.InPkts != 482 {
		t.Errorf("real server stats %+v", api.Reals[0].Stats)
	}
	if svcs[1].Persistent != 10800 || svcs[1].Proto != "TCP" {
		t.Errorf("persistent service %+v", svcs[1])
	}
	if v6 := svcs[2]; v6.Addr.String() != "[fd00:10:96::a]:53" || v6.Proto != "UDP" || v6.Scheduler != "sh" || strings.Join(v6.Flags, " ") != "sh-port" || v6.Reals[0].InactConn != 3 {
		t.Errorf("IPv6 service %+v", v6)
	}
	if fwm := svcs[3]; fwm.Proto != "FWM" || fwm.FWMark != 7 || fwm.Reals[0].Forward != "Route" {
		t.Errorf("FWM service %+v", fwm)
	}
}

func TestIPVSadmSave(t *testing.T) {
	in := "-A -t 10.96.0.1:443 -s rr\n-a -t 10.96.0.1:443 -r 172.18.0.2:6443 -m -w 1\n-A -u 10.96.0.10:53 -s rr -p 360\n-a -u 10.96.0.10:53 -r 10.244.0.5:53 -g -w 0\n"
	svcs, err := IPVSadm(strings.NewReader(in), "save.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(svcs) != 2 || svcs[0].Reals[0].Forward != "Masq" || svcs[0].Reals[0].Weight != 1 || svcs[1].Persistent != 360 || svcs[1].Reals[0].Weight != 0 {
		t.Errorf("%+v", svcs)
	}
}

func TestIPVSadmErrors(t *testing.T) {
	in := "TCP  10.96.0.1:443 rr\n  -> 172.18.0.2:#bad Masq 1 0 0\nTCP  10.96.0.1:443 rr\n  -> 172.18.0.2:6443 Masq one 0 0\ngarbage here\nTCP  10.96.0.2:80 rr\n"
	svcs, err := IPVSadm(strings.NewReader(in), "bad.txt")
	var list model.ErrorList
	if !errors.As(err, &list) || len(list) != 3 {
		t.Fatalf("errors %v, want 3", err)
	}
	for i, want := range []string{"bad.txt:2: ", "bad.txt:4: ", "bad.txt:5: "} {
		if !strings.HasPrefix(list[i].Error(), want) {
			t.Errorf("error %d: %v, want it at %s", i, list[i], want)
		}
	}
	if len(svcs) != 2 {
		t.Errorf("%d services, want the 2 readable ones", len(svcs))
	}
}

func TestSniffIPVSadm(t *testing.T) {
	for in, want := range map[string]bool{
		parsetest.IPVSListing: true,
		"# ipvsadm -l -n | grep TCP | less\nTCP 169.254.20.10:20869 rr\nTCP 169.254.20.10:21980 rr\n": true,
		"-A -t 10.96.0.1:443 -s rr\n-a -t 10.96.0.1:443 -r 172.18.0.2:6443 -m -w 1\n":                 true,
		"net.ipv4.ip_local_port_range = 1024 65000\n":                                                 false,
		"tcp   LISTEN 0      4096   127.0.0.1:10248   0.0.0.0:*\n":                                    false,
	} {
		if got := sniffIPVSadm("x", []byte(in)) >= 50; got != want {
			t.Errorf("sniff %q = %v, want %v", in[:20], got, want)
		}
	}
}

func FuzzIPVSadm(f *testing.F) {
	f.Add(parsetest.IPVSListing)
	f.Add("-A -t 10.96.0.1:443 -s rr\n-a -t 10.96.0.1:443 -r 172.18.0.2:6443 -m -w 1\n")
	f.Fuzz(func(t *testing.T, in string) {
		svcs, err := IPVSadm(strings.NewReader(in), "fuzz.txt")
		parsetest.CheckFuzzErrors(t, err, "fuzz.txt")
		for _, s := range svcs {
			if s.Pos.Line == 0 {
				t.Fatalf("service without a line: %+v", s)
			}
		}
	})
}

func TestIPVSConns(t *testing.T) {
	in := "IPVS connection entries\n" +
		"pro expire state       source             virtual            destination\n" +
		"TCP 14:59  ESTABLISHED 10.244.1.5:40312   10.96.0.1:443      172.18.0.2:6443\n" +
		"UDP 04:58  UDP         10.244.1.5:35817   10.96.0.10:53      10.244.0.4:53\n" +
		"TCP 00:47  SYN_RECV    10.10.85.105:52311 10.10.85.235:32080 10.23.77.141:80\n" +
		"TCP 1x:00  NONE        10.0.0.1:1         10.0.0.2:2         10.0.0.3:3\n"
	conns, err := IPVSConns(strings.NewReader(in), "conns.txt")
	var list model.ErrorList
	if !errors.As(err, &list) || len(list) != 1 || list[0].Pos.Line != 6 {
		t.Errorf("errors %v, want one at line 6", err)
	}
	if len(conns) != 3 {
		t.Fatalf("%d connections, want 3", len(conns))
	}
	c := conns[2]
	if c.Proto != "TCP" || c.Expire != 47 || c.State != "SYN_RECV" || c.Client.String() != "10.10.85.105:52311" ||
		c.Virtual.String() != "10.10.85.235:32080" || c.Dest.String() != "10.23.77.141:80" || c.Pos.Line != 5 {
		t.Errorf("%+v", c)
	}
	if sniffIPVSadm("x", []byte(in)) != 100 {
		t.Errorf("connection listing not sniffed")
	}
}
