package text

import "testing"

func TestProgram(t *testing.T) {
	for _, c := range []struct{ cmd, want string }{
		{"iptables-save", "iptables-save"},
		{"/usr/sbin/iptables-save -t nat", "iptables-save"},
		{"ip netns exec cni-1 ss -tanp", "ss"},
		{"sudo timeout 75 conntrack -L", "conntrack"},
		{"ipvsadm -Ln --exact", "ipvsadm"},
		{"ip addr show", "ip"},
		{"", ""},
		{"timeout", "timeout"},
	} {
		if got := Program(c.cmd); got != c.want {
			t.Errorf("Program(%q) = %q, want %q", c.cmd, got, c.want)
		}
	}
}

// zsh's prompt names the host, as bash's does; a session splits at it.
func TestHostPromptZsh(t *testing.T) {
	zsh := "tim@Tims-MBP kubernetes % kubectl get svc"
	if host, cmd, ok := HostPrompt(zsh); !ok || host != "Tims-MBP" || cmd != "kubectl get svc" {
		t.Errorf("zsh prompt: %q %q %v", host, cmd, ok)
	}
}
