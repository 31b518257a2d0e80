package host

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
)

func sysctlFile(t *testing.T, rel string) ([]model.Sysctl, error) {
	t.Helper()
	f, err := os.Open(filepath.Join(testutil.Root(), rel))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return Sysctl(f, filepath.Base(rel))
}

func sysctlMap(l []model.Sysctl) map[string]string {
	m := map[string]string{}
	for _, s := range l {
		m[s.Name] = s.Value + " @" + s.Pos.String()
	}
	return m
}

// Real outputs of this machine's sysctl and grep, and the seeds' lines.
func TestSysctlRealOutputs(t *testing.T) {
	for _, c := range []struct {
		file string
		want map[string]string
	}{
		{"parse/testdata/sysctl/sysctl-a.txt", map[string]string{
			"net.ipv4.ip_local_port_range":     "32768 60999 @sysctl-a.txt:7",
			"net.ipv4.ip_local_reserved_ports": " @sysctl-a.txt:8",
			"net.core.somaxconn":               "4096 @sysctl-a.txt:2",
		}},
		{"parse/testdata/sysctl/grep-proc.txt", map[string]string{
			"net.ipv4.ip_local_port_range": "32768 60999 @grep-proc.txt:1",
			"net.ipv4.ip_forward":          "0 @grep-proc.txt:2",
		}},
		{"fixtures/seeds/002-synack-reset/sysctl.txt", map[string]string{
			"net.ipv4.ip_local_port_range": "1024 65000 @sysctl.txt:1",
		}},
		{"fixtures/incidents/ephemeral-nodeport/sysctl.txt", map[string]string{
			"net.ipv4.ip_local_port_range":     "1024 65000 @sysctl.txt:1",
			"net.ipv4.ip_local_reserved_ports": " @sysctl.txt:2",
		}},
		// head /proc/sys/net/ipv4/conf/*/rp_filter: a header per file, its value on the next line.
		{"fixtures/real/local/multi-file/local_head-proc-sys-net-ipv4-conf-star-rp_filter.txt", map[string]string{
			"net.ipv4.conf.all.rp_filter":        "1 @local_head-proc-sys-net-ipv4-conf-star-rp_filter.txt:2",
			"net.ipv4.conf.default.rp_filter":    "0 @local_head-proc-sys-net-ipv4-conf-star-rp_filter.txt:5",
			"net.ipv4.conf.nm-real-r0.rp_filter": "1 @local_head-proc-sys-net-ipv4-conf-star-rp_filter.txt:11",
			"net.ipv4.conf.nm-real-r1.rp_filter": "0 @local_head-proc-sys-net-ipv4-conf-star-rp_filter.txt:14",
		}},
		{"fixtures/real/local/multi-file/local_tail-n+1_nf_conntrack-max-count-buckets.txt", map[string]string{
			"net.netfilter.nf_conntrack_max": "262144 @local_tail-n+1_nf_conntrack-max-count-buckets.txt:2",
		}},
	} {
		got, err := sysctlFile(t, c.file)
		if err != nil {
			t.Errorf("%s: %v", c.file, err)
		}
		m := sysctlMap(got)
		for k, v := range c.want {
			if m[k] != v {
				t.Errorf("%s: %s = %q, want %q", c.file, k, m[k], v)
			}
		}
	}
}

func TestSysctlErrors(t *testing.T) {
	got, err := sysctlFile(t, "parse/testdata/sysctl/with-errors.txt")
	var list model.ErrorList
	if !errors.As(err, &list) || len(list) != 1 || !strings.HasPrefix(list[0].Error(), "with-errors.txt:3: ") {
		t.Fatalf("errors %v, want one at line 3 (sysctl's own complaint on line 2 is not an error)", err)
	}
	if len(got) != 1 || got[0].Name != "net.ipv4.ip_local_port_range" {
		t.Errorf("read %+v", got)
	}
}

func TestSysctlForms(t *testing.T) {
	in := "/proc/sys/net/ipv4/ip_local_port_range = 1024 65000\n" + // troubleshoot in-cluster collector
		"/proc/sys/net/ipv4/conf/eth0.100/rp_filter:2\n" + // grep -r, a VLAN interface
		"root@node1:~# sysctl net.ipv4.tcp_tw_reuse\n" +
		"net.ipv4.tcp_tw_reuse = 1\n"
	got, err := Sysctl(strings.NewReader(in), "s.txt")
	if err != nil {
		t.Fatal(err)
	}
	m := sysctlMap(got)
	for k, v := range map[string]string{
		"net.ipv4.ip_local_port_range":     "1024 65000 @s.txt:1",
		"net.ipv4.conf.eth0/100.rp_filter": "2 @s.txt:2",
		"net.ipv4.tcp_tw_reuse":            "1 @s.txt:4",
	} {
		if m[k] != v {
			t.Errorf("%s = %q, want %q", k, m[k], v)
		}
	}
	if got[2].Node != "node1" {
		t.Errorf("node from the prompt: %q", got[2].Node)
	}
}

func TestSysctlJSON(t *testing.T) {
	in := "{\n  \"net.ipv4.ip_local_port_range\": \"32768\\t60999\",\n  \"net.core.somaxconn\": 4096,\n  \"bad\": [1]\n}\n"
	got, err := SysctlJSON(strings.NewReader(in), "sysctl.json")
	var list model.ErrorList
	if !errors.As(err, &list) || len(list) != 1 || list[0].Pos.Line != 4 {
		t.Errorf("errors %v, want one at line 4", err)
	}
	m := sysctlMap(got)
	if m["net.ipv4.ip_local_port_range"] != "32768 60999 @sysctl.json:2:3" || !strings.HasPrefix(m["net.core.somaxconn"], "4096 @") {
		t.Errorf("read %v", m)
	}
}

func FuzzSysctl(f *testing.F) {
	for _, rel := range []string{"parse/testdata/sysctl/sysctl-a.txt", "parse/testdata/sysctl/grep-proc.txt", "parse/testdata/sysctl/with-errors.txt"} {
		b, err := os.ReadFile(filepath.Join(testutil.Root(), rel))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := Sysctl(strings.NewReader(in), "fuzz.txt")
		var list model.ErrorList
		if err != nil && !errors.As(err, &list) {
			t.Fatalf("error %v is not positioned", err)
		}
		for _, s := range got {
			if s.Pos.Line == 0 || s.Name == "" || strings.ContainsAny(s.Value, "\t\n") {
				t.Fatalf("bad record %+v", s)
			}
		}
		if _, err := SysctlJSON(strings.NewReader(in), "fuzz.json"); err != nil && !errors.As(err, &list) {
			t.Fatalf("JSON error %v is not positioned", err)
		}
	})
}
