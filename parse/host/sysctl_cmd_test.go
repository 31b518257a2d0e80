package host

import (
	"fmt"
	"testing"

	"github.com/netmortem/netmortem/parse/internal/parsetest"
)

// The keepalive settings of kubeasz PR 688's description, below the sysctl
// command pasted without a prompt: the command is skipped, the values read.
func TestSysctlBareCommand(t *testing.T) {
	const file = "fixtures/field/ipvs-idle-timeout--kubeasz-pr-688/sysctl.txt"
	out := parsetest.ReadFile(t, file, Sysctl)
	var got []string
	for _, s := range out {
		got = append(got, fmt.Sprintf("%d %s=%s", s.Pos.Line, s.Name, s.Value))
	}
	parsetest.CheckLines(t, file, got, []string{"2 net.ipv4.tcp_keepalive_time=7200",
		"3 net.ipv4.tcp_keepalive_probes=9", "4 net.ipv4.tcp_keepalive_intvl=75"})
	for _, l := range []string{"sysctl -w net.ipv4.ip_forward=1", "sysctl", "sysctl is great"} {
		if bareSysctlCmd(l) {
			t.Errorf("%q read as a command that reads parameters", l)
		}
	}
	if !bareSysctlCmd("sysctl -n net.ipv4.ip_forward") {
		t.Errorf("sysctl -n not read as a command")
	}
}
