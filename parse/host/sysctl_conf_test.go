package host_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/parse"
	"github.com/netmortem/netmortem/parse/host"
	"github.com/netmortem/netmortem/parse/internal/parsetest"
)

const sysctlConfField = "fixtures/field/ephemeral-nodeport-overlap--pipedrive-blog-2023/sysctl.conf"

// A sysctl.conf line as a ticket quoted it ("name=value", no spaces) is
// read when the file's name says sysctl, and gives the setting at its line.
func TestSysctlConfReal(t *testing.T) {
	head, err := os.ReadFile(filepath.Join(testutil.Root(), sysctlConfField))
	if err != nil {
		t.Fatal(err)
	}
	if best, sc := parsetest.Best(parse.Formats(), "sysctl.conf", head); best != host.SysctlFormat.Name {
		t.Errorf("sysctl.conf read as %q (%d)", best, sc)
	}
	out, err := host.Sysctl(strings.NewReader(string(head)), "sysctl.conf")
	if err != nil || len(out) != 1 || out[0].Name != "net.ipv4.ip_local_port_range" || out[0].Value != "12000 65001" ||
		out[0].Pos.Line != 1 {
		t.Errorf("read %+v, %v", out, err)
	}
}

// The same "name=value" lines under a name that does not say sysctl, and a
// sysctl.conf holding other text, are not taken for sysctl settings.
func TestSniffSysctlConf(t *testing.T) {
	conf := "# Allowed local port range\nnet.ipv4.ip_local_port_range=12000 65001\n\n; reserved\nnet.ipv4.ip_local_reserved_ports=30000-32767\n"
	if sc := host.SysctlFormat.Sniff("99-k8s.sysctl.conf", []byte(conf)); sc < 80 {
		t.Errorf("sysctl.d file scores %d", sc)
	}
	if sc := host.SysctlFormat.Sniff("app.log", []byte(conf)); sc != 0 {
		t.Errorf("name=value lines of app.log score %d, want 0", sc)
	}
	logLines := "level=info msg=\"started\" net.ipv4.x=1\nts=2024-01-01 caller=main.go:12 msg=ready\n"
	if sc := host.SysctlFormat.Sniff("sysctl.conf", []byte(logLines)); sc != 0 {
		t.Errorf("logfmt lines named sysctl.conf score %d, want 0", sc)
	}
}

func FuzzSniffSysctlConf(f *testing.F) {
	parsetest.AddSeedFiles(f, []string{sysctlConfField})
	f.Add("net.ipv4.=1\n; x\n=2\nnet..a=3\n")
	f.Fuzz(func(t *testing.T, in string) {
		if sc := host.SysctlFormat.Sniff("sysctl.conf", []byte(in)); sc < 0 || sc > 100 {
			t.Fatalf("score %d", sc)
		}
	})
}
