package host

import (
	"fmt"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/internal/parsetest"
)

func settingLines(out []model.Setting) []string {
	var s []string
	for _, st := range out {
		s = append(s, fmt.Sprintf("%d %s=%s", st.Pos.Line, st.Key, st.Value))
	}
	return s
}

// Seed 003's kube-vip settings, pasted from a blog with the indentation of
// loadbalancer_apiserver lost.
func TestSettingsSeed(t *testing.T) {
	got := settingLines(parsetest.ReadFile(t, "fixtures/seeds/003-lb-controller-conflict/kube-vip-settings.yml", Settings))
	want := []string{
		"2 kube_vip_enabled=true", "3 kube_vip_arp_enabled=true", "4 kube_vip_controlplane_enabled=true",
		"5 kube_vip_address=192.168.200.60", "6 loadbalancer_apiserver=", "7 address={{ kube_vip_address }}",
		"8 port=6443", "9 kube_vip_interface=enp0s25", "10 kube_vip_services_enabled=false",
		"11 kube_vip_dns_mode=first", "12 kube_vip_cp_detect=false", "13 kube_vip_leasename=plndr-cp-lock",
		"14 kube_vip_enable_node_labeling=false",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestSettingsYAML(t *testing.T) {
	in := "---\n# addons.yml\nmetallb_enabled: true  # L2 mode\nmetallb_speaker_enabled: \"{{ metallb_enabled }}\"\n" +
		"metallb_config:\n  address_pools:\n    primary:\n      ip_range:\n        - 192.168.200.100-192.168.200.150\n" +
		"kube_proxy_strict_arp: 'true'\nkube_proxy_mode: ipvs\n" +
		"this is not yaml\n" +
		"kube_vip_services_enabled: true\n"
	out, err := Settings(strings.NewReader(in), "addons.yml")
	if at := parsetest.SyntaxErrorsAt(t, err); at != "addons.yml:12" {
		t.Errorf("errors at %s", at)
	}
	want := "3 metallb_enabled=true|4 metallb_speaker_enabled={{ metallb_enabled }}|5 metallb_config=|10 kube_proxy_strict_arp=true|11 kube_proxy_mode=ipvs|13 kube_vip_services_enabled=true"
	if got := strings.Join(settingLines(out), "|"); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	snap := &model.Snapshot{Settings: out}
	if st, ok := snap.Setting("kube_vip_services_enabled"); !ok || st.Pos.Line != 13 {
		t.Errorf("Setting: %+v %v", st, ok)
	} else if v, ok := st.Bool(); !v || !ok {
		t.Errorf("Bool: %v %v", v, ok)
	}
}

func FuzzSettings(f *testing.F) {
	parsetest.AddSeedFiles(f, []string{"fixtures/seeds/003-lb-controller-conflict/kube-vip-settings.yml"})
	f.Add("kube_vip_x: 'unclosed\nkube_vip_y: \"a\" # c\n")
	f.Fuzz(func(t *testing.T, in string) {
		out, err := Settings(strings.NewReader(in), "fuzz.yml")
		parsetest.CheckFuzzErrors(t, err, "fuzz.yml")
		for _, st := range out {
			if st.Pos.Line == 0 || st.Key == "" || st.Tool != "kubespray" {
				t.Fatalf("bad setting: %+v", st)
			}
		}
		sniffSettings("fuzz.yml", []byte(in))
	})
}
